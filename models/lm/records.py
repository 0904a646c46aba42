"""A decoder language model's attention over a text, as one AttentionRecord.

``load_runner(folder)`` loads a Hugging Face-format folder once (models/lm/loader.py; default:
the GPT-2 trained here, checkpoints/lm); ``LMRunner.attention(text, layers)`` returns weights
[layer, head, query, key] float32 with the tokens as labels. The registry builder ``lm_record``
serves the CLI and the page.

Memory: the maps of 12 layers × 12 heads over 1,024 tokens take 604 MB in float32. A record
above MAX_RECORD_BYTES is refused with one line that names a layer range that fits; the
forward then computes only the chosen layers' maps. CSV and JSON exports of large records are
refused by viz/export.py (NPY holds them in 4 bytes a weight).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import numpy as np

from models.lm.forward import LENGTH_BUCKETS, run
from models.lm.loader import LoadedLM, load_folder
from models.model_folders import SharedRunners, model_dir_option
from models.options import cut_text
from models.padding import bucket
from models.record import AttentionRecord, InputError
from models.text import N_, Notice

AXES = ("layer", "head", "query", "key")
MECHANISM = "lm"  # the id the runner's records carry: the registry's entry of this family's plain view
ROOT = Path(__file__).resolve().parents[2]
DEFAULT_MODEL_DIR = ROOT / "checkpoints" / "lm"
DEFAULT_MODEL_NAME = N_("the GPT trained here")  # a notice names it in the session's language
MAX_TOKENS = 2048  # tokens a record reads at most (a model with fewer positions: its own limit)
MAX_RECORD_BYTES = 640 * 2**20  # 12 layers × 12 heads × 1,024² float32 (604 MB) fit; more is refused
FOREIGN_SHARE = 0.25  # above this share of byte pieces or unknown tokens, the text is flagged as foreign


@dataclass(frozen=True)
class LMEncoding:
    """A text as the model reads it: ids int32 [T], one label per token, and notices."""

    ids: np.ndarray
    labels: tuple[str, ...]
    truncated: bool
    notices: tuple[str, ...]
    special_first: bool  # the tokenizer's post-processor put a special token (BOS) first


def parse_layers(spec: Any, num_layers: int) -> tuple[int, ...]:
    """Returns the sorted layer indices a spec names: "" or None (every layer), "3", "0-3", "0,5,11"."""
    if spec is None or (isinstance(spec, str) and not spec.strip()):
        return tuple(range(num_layers))
    text = str(spec).replace(" ", "")
    chosen: set[int] = set()
    try:
        for part in text.split(","):
            low, dash, high = part.partition("-")
            first, last = int(low), int(high) if dash else int(low)
            if not 0 <= first <= last < num_layers or last - first > 10_000:
                raise ValueError
            chosen.update(range(first, last + 1))
    except ValueError:
        raise InputError(
            f"layers must be layer numbers from 0 to {num_layers - 1}: one (0), a range (0-{num_layers - 1}) "
            f"or a list (0,{num_layers - 1}); got {text[:40]!r}"
        ) from None
    return tuple(sorted(chosen))


def record_bytes(num_layers: int, num_heads: int, tokens: int) -> int:
    """Returns the float32 bytes of the maps of num_layers layers × num_heads heads over tokens tokens."""
    return 4 * num_layers * num_heads * tokens * tokens


class LMRunner:
    """A loaded decoder LM that turns text into attention records (split once, jitted once per bucket)."""

    def __init__(self, lm: LoadedLM, name: str | None = None):
        self.lm = lm
        self.config = lm.config
        self.name = name or lm.name
        # How notices name the model: the GPT trained here in the reader's language (a Notice value is
        # rendered through the catalog), a folder by its own name.
        self.notice_name: str = Notice(DEFAULT_MODEL_NAME) if self.name == DEFAULT_MODEL_NAME else self.name
        self.weight_bytes = sum(4 * int(np.prod(leaf.shape)) for leaf in jax.tree.leaves(lm.state))
        self.max_tokens = min(self.config.max_positions, MAX_TOKENS)
        self.buckets = tuple(b for b in LENGTH_BUCKETS if b < self.max_tokens) + (self.max_tokens,)
        specials = {t.content for t in lm.tokenizer.get_added_tokens_decoder().values() if t.special}
        self._special_ids = {lm.tokenizer.token_to_id(t) for t in specials}
        unknown = getattr(lm.tokenizer.model, "unk_token", None)
        self._unknown = lm.tokenizer.token_to_id(unknown) if unknown else None

    def encode(self, text: str) -> LMEncoding:
        """Returns the text's ids as the folder's tokenizer.json gives them, cut to max_tokens with a notice."""
        if not isinstance(text, str) or not text.strip():
            raise InputError(Notice(N_("type some text: the model reads it token by token")))
        text, cut_notice = cut_text(text)
        encoding = self.lm.tokenizer.encode(text)
        ids, offsets = list(encoding.ids), list(encoding.offsets)
        notices = [cut_notice] if cut_notice else []
        truncated = len(ids) > self.max_tokens
        if truncated:
            notices.append(Notice(N_("the text was cut to its first {kept:,} of {total:,} tokens ({model} reads at most "
                                     "{kept:,} here)"), kept=self.max_tokens, total=len(ids), model=self.notice_name))
            ids, offsets = ids[: self.max_tokens], offsets[: self.max_tokens]
        if not ids:
            raise InputError(Notice(N_("the tokenizer makes no tokens of this text; type some words")))
        if max(ids) >= self.config.vocab_size:
            raise InputError(Notice(N_("the tokenizer gave id {token_id}, past the model's {size} embeddings"), token_id=max(ids),
                                    size=self.config.vocab_size))
        labels, pieces = self._labels(text, ids, offsets)
        real = sum(1 for i in ids if i not in self._special_ids)
        if real >= 8 and pieces / real > FOREIGN_SHARE:
            notices.append(Notice(N_("{pieces} of {real} tokens are pieces of characters or unknown to the tokenizer: this "
                                     "text lies largely outside what {model} was trained on, so its attention may mean "
                                     "little"), pieces=pieces, real=real, model=self.notice_name))
        return LMEncoding(np.asarray(ids, np.int32), tuple(labels), truncated, tuple(notices),
                          bool(ids) and ids[0] in self._special_ids)

    def _labels(self, text: str, ids: list[int], offsets: list[tuple[int, int]]) -> tuple[list[str], int]:
        # -> (one label per token, how many tokens are pieces of a character or unknown). A label is the
        # text the token covers (a special token: its own name). Byte-level BPE spells a character it
        # never merged as several tokens sharing one span: the second and later are labelled "…x".
        labels, pieces = [], 0
        for i, (token_id, span) in enumerate(zip(ids, offsets)):
            if token_id in self._special_ids or span[0] == span[1]:
                labels.append(self.lm.tokenizer.id_to_token(token_id) or str(token_id))
                continue
            label = text[span[0]:span[1]].replace("\n", "\\n").replace("\t", "\\t")
            after_same = i > 0 and offsets[i - 1] == span
            shared = after_same or (i + 1 < len(offsets) and offsets[i + 1] == span)
            labels.append("…" + label if after_same else label)
            pieces += shared or token_id == self._unknown
        return labels, pieces

    def check_size(self, layers: tuple[int, ...], tokens: int) -> None:
        """Raises InputError if these layers' maps over `tokens` tokens exceed MAX_RECORD_BYTES."""
        heads = self.config.num_heads
        needed = record_bytes(len(layers), heads, tokens)
        if needed > MAX_RECORD_BYTES:
            fit = max(1, MAX_RECORD_BYTES // record_bytes(1, heads, tokens))
            suggestion = f"0-{fit - 1}" if fit > 1 else "0"
            raise InputError(Notice(
                N_("the attention of {layers} layers × {heads} heads over {tokens:,} tokens takes {size:,.0f} MB, more "
                   "than {limit} MB: choose fewer layers (layers {suggestion}) or a shorter text"),
                layers=len(layers), heads=heads, tokens=tokens, size=needed / 2**20, limit=MAX_RECORD_BYTES // 2**20,
                suggestion=suggestion))

    def attention(self, text: str, layers: Any = None) -> AttentionRecord:
        """Returns the record of the chosen layers' attention (default: all) over a text.

        weights float32 [layers, heads, T, T], exactly 0 above the diagonal; labels are the tokens.
        """
        chosen = parse_layers(layers, self.config.num_layers)
        encoding = self.encode(text)
        self.check_size(chosen, len(encoding.ids))
        losses, maps = run(self.lm.graphdef, self.lm.state, encoding.ids[None], logits="loss", attention=chosen,
                           buckets=self.buckets)
        predicted = losses[0, :-1]  # position t predicts token t + 1
        loss = float(predicted.mean()) if predicted.size else None
        return self._record(encoding, np.ascontiguousarray(maps[:, 0]), chosen, loss)

    def _record(self, encoding: LMEncoding, weights: np.ndarray, layers: tuple[int, ...],
                loss: float | None) -> AttentionRecord:
        cfg = self.config
        return AttentionRecord(
            MECHANISM, weights, AXES, encoding.labels, encoding.labels,
            meta={"model": self.name, "architecture": cfg.model_type, "num_layers": cfg.num_layers,
                  "num_heads": cfg.num_heads, "num_kv_heads": cfg.num_kv_heads, "layers": list(layers),
                  "truncated": encoding.truncated, "notice": Notice.join(encoding.notices),
                  "special_first": encoding.special_first,
                  "loss_nats": loss},  # mean next-token loss over the text's predicted tokens
            extras={"input_ids": encoding.ids, "tokens": np.asarray(encoding.labels, dtype=object).astype(str)},
        )


def default_model_dir() -> Path:
    """Returns the folder of the GPT trained here; InputError saying how to make it if it is missing."""
    if not (DEFAULT_MODEL_DIR / "config.json").is_file():
        raise InputError(f"the model trained here is not in {DEFAULT_MODEL_DIR.relative_to(ROOT)}: train it with "
                         "`python -m models.train lm`, or give a model folder (--model-dir)")
    return DEFAULT_MODEL_DIR


def load_runner(model_dir: str | Path | None = None, *, max_bytes: int | None = None) -> LMRunner:
    """Returns a runner of a folder (default: the GPT trained here); InputError with one line for a bad folder.

    max_bytes bounds the float32 weights (the app passes models.model_folders.max_model_bytes()).
    Loading takes seconds: cache the result (st.cache_resource, or shared_runner below).
    """
    if model_dir in (None, ""):
        return LMRunner(load_folder(default_model_dir(), max_bytes=max_bytes), DEFAULT_MODEL_NAME)
    return LMRunner(load_folder(Path(model_dir).expanduser(), max_bytes=max_bytes))


RUNNERS_KEPT = 2  # folders whose models one process keeps loaded
shared_runner = SharedRunners(lambda folder, max_bytes: load_runner(folder, max_bytes=max_bytes), RUNNERS_KEPT)
forget_runners = shared_runner.forget


def lm_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Registry builder: typed options text, model_dir (default: the GPT trained here), layers -> one record."""
    return shared_runner(model_dir_option(options)).attention(options["text"], options["layers"])


def lm_record_size(mechanism, options: Mapping[str, Any]) -> int:
    """Registry estimate: the bytes one input holds while its record is built, float32 layers × heads ×
    (T_b² + T²): the forward's maps padded to the length bucket T_b, and the record's own T × T copy."""
    runner = shared_runner(model_dir_option(options))
    layers = parse_layers(options.get("layers"), runner.config.num_layers)
    tokens = len(runner.encode(options.get("text")).ids)
    padded = bucket(tokens, runner.buckets)
    return record_bytes(len(layers), runner.config.num_heads, 1) * (padded**2 + tokens**2)
