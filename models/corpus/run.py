"""A streamed corpus pass: per-head attention statistics of a BERT-family encoder over many texts.

Texts are tokenized one by one and queued per length bucket; a bucket's queue runs as one
jitted call when it holds `rows` inputs, where rows is the most (a power of two) whose maps,
rows × layers × heads × T² × 4 bytes, fit MAX_BATCH_BYTES. The call returns only the
statistics [rows, L, H, S] (models/corpus/heads.py); the maps stay on the device. Means and
spreads over inputs are merged batch by batch in float64 (Chan et al.'s pairwise update of
Welford's mean and M2), and each head keeps its TOP_K sharpest inputs (lowest entropy), texts
cut to TOP_TEXT_CHARS. So memory is bounded by the queues and one batch, whatever the corpus size.

Data parallel: the batch axis is sharded over a 1-D jax.sharding.Mesh of every device
(parameters replicated); the same code runs on one CPU, several GPUs or a TPU slice, and
rows are a multiple of the device count.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from models.corpus.heads import KEY_KINDS, STATISTIC_IDS, layer_statistics
from models.heads.statistics import CLS_TOKENS, SEP_TOKENS, is_punctuation
from models.padding import bucket
from models.record import InputError
from models.transformer.records import length_buckets

MAX_BATCH_BYTES = 256 * 2**20  # attention maps one batch holds: rows × L × H × T² × 4
# The pass's length buckets: finer than a page's (models/transformer/records.py BUCKETS), so a text is padded
# by less than half its length, not up to doubled, and its maps by less than 2.25 ×, not 4 ×. The extra
# compiles are paid once: JAX's persistent cache keeps them (models/compile_cache.py).
PASS_BUCKETS = (16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)
MAX_ROWS = 64
TOP_K = 5
TOP_TEXT_CHARS = 1000  # the longest text a link to a single-input page carries (ui/links.py)

Progress = Callable[[int], None]  # called with the number of texts read so far


def batch_rows(length: int, layers: int, heads: int, devices: int = 1, max_bytes: int = MAX_BATCH_BYTES) -> int:
    """Returns the rows of a batch of `length`-token inputs: the largest power of two whose maps
    (rows × layers × heads × length² × 4 bytes) fit max_bytes, at most MAX_ROWS, at least 1;
    then rounded up to a multiple of `devices` (one row per device at least)."""
    per_row = layers * heads * length * length * 4
    rows = 1
    while rows * 2 <= MAX_ROWS and rows * 2 * per_row <= max_bytes:
        rows *= 2
    return -(-rows // devices) * devices


def device_mesh(devices=None) -> Mesh:
    """Returns a 1-D mesh named "batch" over the given devices (default: all of them)."""
    return Mesh(np.asarray(jax.devices() if devices is None else devices), ("batch",))


def _stats_forward(cfg):
    from models.transformer.checkpoint import model_from_tensors
    from models.transformer.model import encoder
    from models.transformer.records import MAPS

    def forward(params, ids, types, mask, lengths, kinds):  # -> float32 [B, L, H, S]
        maps = encoder(model_from_tensors(cfg, params), ids, types, mask, capture=MAPS)["maps"]
        return layer_statistics(maps, ids, lengths, kinds)

    return forward


class CorpusModel:
    """An AttentionRunner's weights and tokenizer with a jitted statistics function sharded over a mesh.

    The pass (corpus_statistics) reads only: layers, heads, statistic_ids, name, buckets, encode,
    token_count, rows, statistics and empty_stats; models/corpus/lm.py gives a decoder LM the same.
    """

    statistic_ids: tuple[str, ...] = STATISTIC_IDS

    def __init__(self, runner, mesh: Mesh | None = None, max_batch_bytes: int = MAX_BATCH_BYTES):
        self.runner = runner
        self.config = runner.config
        self.layers, self.heads = self.config.num_hidden_layers, self.config.num_attention_heads
        self._place(mesh, max_batch_bytes)
        self.buckets = length_buckets(self.config.max_tokens, PASS_BUCKETS)
        self.params = jax.device_put(runner.params, self.replicated)  # the runner's {path: array}, replicated
        self._fn = self._jit(_stats_forward(self.config), 5)

    def _place(self, mesh: Mesh | None, max_batch_bytes: int) -> None:
        self.name, self.buckets = self.runner.name, self.runner.buckets
        self.mesh = device_mesh() if mesh is None else mesh
        self.devices = int(self.mesh.devices.size)
        self.max_batch_bytes = int(max_batch_bytes)
        self.replicated = NamedSharding(self.mesh, PartitionSpec())
        self.batch_sharding = NamedSharding(self.mesh, PartitionSpec("batch"))

    def _jit(self, forward, batch_inputs: int):
        # parameters replicated, every batch input and the output sharded on the batch axis
        return jax.jit(forward, in_shardings=(self.replicated,) + (self.batch_sharding,) * batch_inputs,
                       out_shardings=self.batch_sharding)

    def encode(self, text: str):
        """Returns the encoding of one text (InputError for one the tokenizer makes nothing of)."""
        return self.runner.encode(text)

    def token_count(self, encoding) -> int:
        return len(encoding)

    def empty_stats(self, top_k: int = TOP_K) -> CorpusStats:
        return CorpusStats.empty(self.layers, self.heads, top_k, self.name, self.statistic_ids)

    def rows(self, length: int) -> int:
        return batch_rows(length, self.layers, self.heads, self.devices, self.max_batch_bytes)

    def statistics(self, encodings) -> np.ndarray:
        """Returns float64 [n, L, H, S] for encodings of one length bucket (n ≤ rows of that bucket).

        A batch of fewer inputs than the bucket's rows (the last of each bucket) runs padded to a power of two
        rows, not to the full batch."""
        length = bucket(max(self.token_count(e) for e in encodings), self.buckets)
        rows = min(self.rows(length), -(-(1 << (len(encodings) - 1).bit_length()) // self.devices) * self.devices)
        arrays = self._arrays(encodings, rows, length)
        inputs = [jax.device_put(a, self.batch_sharding) for a in arrays]
        out = np.asarray(self._fn(self.params, *inputs), dtype=np.float64)
        return out[: len(encodings)]

    def _arrays(self, encodings, rows: int, length: int) -> tuple[np.ndarray, ...]:
        lengths = np.ones(rows, np.int32)
        kinds = np.zeros((rows, length, len(KEY_KINDS)), bool)
        for row, enc in enumerate(encodings):
            lengths[row] = len(enc)
            kinds[row, : len(enc)] = key_kinds(enc.tokens)
        return *self.runner.padded(encodings, rows, length), lengths, kinds


def key_kinds(tokens) -> np.ndarray:
    """Returns bool [T, 3]: whether each token is [CLS] (or <s>), [SEP] (or </s>), punctuation (KEY_KINDS order)."""
    return np.array([(t in CLS_TOKENS, t in SEP_TOKENS, _punctuation(t)) for t in tokens], bool).reshape(-1, 3)


_punctuation = functools.lru_cache(maxsize=2**16)(is_punctuation)  # per token string: a vocabulary's worth


@dataclass
class CorpusStats:
    """Per-head statistics over a corpus: mean and M2 float64 [L, H, S] (S in `statistics` order)."""

    statistics: tuple[str, ...]
    mean: np.ndarray
    m2: np.ndarray
    count: int = 0  # texts that ran
    tokens: int = 0  # their tokens (special tokens included)
    skipped: int = 0  # empty or whitespace-only lines
    truncated: int = 0  # texts cut at the model's limit
    stopped: bool = False
    seconds: float = 0.0
    model: str = ""
    top_entropy: np.ndarray = field(default=None)  # float64 [L, H, K], ascending; inf where unfilled
    top_index: np.ndarray = field(default=None)  # int64 [L, H, K]: input number (0-based, skipped lines not counted)
    texts: dict[int, str] = field(default_factory=dict)  # input number -> text cut to TOP_TEXT_CHARS

    @classmethod
    def empty(cls, layers: int, heads: int, top_k: int = TOP_K, model: str = "",
              statistics: tuple[str, ...] = STATISTIC_IDS) -> CorpusStats:
        shape = (layers, heads, len(statistics))
        return cls(tuple(statistics), np.zeros(shape), np.zeros(shape), model=model,
                   top_entropy=np.full((layers, heads, top_k), np.inf), top_index=np.full((layers, heads, top_k), -1))

    @property
    def std(self) -> np.ndarray:
        """float64 [L, H, S]: the population standard deviation over inputs (0 before two inputs)."""
        return np.sqrt(np.maximum(self.m2, 0.0) / max(self.count, 1))

    def add(self, values: np.ndarray, numbers: np.ndarray, texts: list[str]) -> None:
        """Merges float64 [b, L, H, S] of b inputs (their numbers int [b] and texts) into the totals."""
        b = values.shape[0]
        batch_mean = values.mean(axis=0)
        batch_m2 = ((values - batch_mean) ** 2).sum(axis=0)
        total = self.count + b
        delta = batch_mean - self.mean
        self.mean = self.mean + delta * (b / total)
        self.m2 = self.m2 + batch_m2 + delta**2 * (self.count * b / total)
        self.count = total
        entropy = np.moveaxis(values[..., self.statistics.index("entropy")], 0, -1)  # [L, H, b]
        both_e = np.concatenate([self.top_entropy, entropy], axis=-1)
        both_i = np.concatenate([self.top_index, np.broadcast_to(np.asarray(numbers), entropy.shape)], axis=-1)
        order = np.argsort(both_e, axis=-1, kind="stable")[..., : self.top_entropy.shape[-1]]
        self.top_entropy = np.take_along_axis(both_e, order, -1)
        self.top_index = np.take_along_axis(both_i, order, -1)
        keep = set(self.top_index[self.top_index >= 0].tolist())
        for number, text in zip(np.asarray(numbers).tolist(), texts):
            if number in keep:
                self.texts[number] = text[:TOP_TEXT_CHARS]
        self.texts = {k: v for k, v in self.texts.items() if k in keep}


def corpus_statistics(texts: Iterable[str], model: CorpusModel, *, progress: Progress | None = None,
                      stop: Callable[[], bool] | None = None, limit: int | None = None,
                      top_k: int = TOP_K, into: CorpusStats | None = None) -> CorpusStats:
    """Returns the per-head statistics of every non-empty text (one input each), streamed.

    progress(n) is called after each batch with the texts read so far; stop() is asked before
    each text and ends the pass early (stats.stopped). limit: read at most this many texts.
    into: an empty CorpusStats to fill (the app keeps it, so a run cut short still shows what ran).
    """
    stats = model.empty_stats(top_k) if into is None else into
    queues: dict[int, list] = {}
    started = time.perf_counter()
    read = 0

    def run(length: int) -> None:
        queue = queues.pop(length)
        values = model.statistics([enc for _, enc, _ in queue])
        stats.add(values, np.array([number for number, _, _ in queue]), [text for _, _, text in queue])
        stats.tokens += sum(model.token_count(enc) for _, enc, _ in queue)
        if progress is not None:
            progress(read)

    for text in texts:
        if limit is not None and read >= limit:
            break
        if stop is not None and stop():
            stats.stopped = True  # what is queued is dropped: count holds the inputs that ran
            break
        read += 1
        if not str(text).strip():
            stats.skipped += 1
            continue
        try:
            enc = model.encode(str(text))
        except InputError:
            stats.skipped += 1
            continue
        stats.truncated += bool(enc.truncated)
        length = bucket(model.token_count(enc), model.buckets)
        queues.setdefault(length, []).append((read - 1 - stats.skipped, enc, str(text)))
        if len(queues[length]) >= model.rows(length):
            run(length)
    for length in sorted(queues) if not stats.stopped else ():
        run(length)
    stats.seconds = time.perf_counter() - started
    return stats



# ----------------------------------------------------------------------------- output


def head_rows(stats: CorpusStats) -> list[dict]:
    """Returns one dict per head: layer, head, <statistic>_mean, <statistic>_std for each statistic."""
    std = stats.std
    rows = []
    for layer in range(stats.mean.shape[0]):
        for head in range(stats.mean.shape[1]):
            row = {"layer": layer, "head": head}
            for s, name in enumerate(stats.statistics):
                row[f"{name}_mean"] = float(stats.mean[layer, head, s])
                row[f"{name}_std"] = float(std[layer, head, s])
            rows.append(row)
    return rows


def top_rows(stats: CorpusStats) -> list[dict]:
    """Returns one dict per (head, rank) of the top inputs: layer, head, rank, entropy, input, text."""
    rows = []
    for (layer, head, rank), number in np.ndenumerate(stats.top_index):
        if number >= 0:
            rows.append({"layer": layer, "head": head, "rank": rank, "entropy": float(stats.top_entropy[layer, head, rank]),
                         "input": int(number), "text": stats.texts.get(int(number), "")})
    return rows


def stats_record(stats: CorpusStats, mechanism: str):
    """Returns an AttentionRecord of the corpus means [L·H, S] (rows "L0H0"…, columns the statistics;
    extras: std) for the page's Export menu."""
    from models.record import AttentionRecord

    layers, heads, count = stats.mean.shape
    return AttentionRecord(
        mechanism=mechanism, weights=stats.mean.reshape(layers * heads, count).astype(np.float32),
        axes=("head", "statistic"), query_labels=[f"L{layer}H{head}" for layer in range(layers) for head in range(heads)],
        key_labels=list(stats.statistics),
        meta={"model": stats.model, "texts": stats.count, "tokens": stats.tokens, "stopped": stats.stopped,
              "statistic": "mean over the corpus"},
        extras={"std": stats.std.reshape(layers * heads, count).astype(np.float32)})


def save(stats: CorpusStats, out_dir) -> list:
    """Writes heads.csv (one row per head), top_inputs.csv and statistics.npz into out_dir; returns the paths."""
    import csv
    from pathlib import Path

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "heads.csv", out / "top_inputs.csv", out / "statistics.npz"]
    for path, rows in zip(paths[:2], (head_rows(stats), top_rows(stats))):
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]) if rows else ["layer", "head"])
            writer.writeheader()
            writer.writerows(rows)
    numbers = sorted(stats.texts)
    np.savez(paths[2], statistics=np.array(stats.statistics), mean=stats.mean, std=stats.std, m2=stats.m2,
             count=stats.count, tokens=stats.tokens, skipped=stats.skipped, truncated=stats.truncated,
             stopped=stats.stopped, model=stats.model, top_entropy=stats.top_entropy, top_index=stats.top_index,
             top_numbers=np.array(numbers, np.int64), top_texts=np.array([stats.texts[n] for n in numbers], dtype=np.str_))
    return paths
