"""Hierarchical attention network (Yang et al., 2016) in flax.nnx.

Word level:      h_it = BiGRU(x_it);  u_it = tanh(W_w h_it + b_w);
                 α_it = softmax_t(u_itᵀ u_w);  s_i = Σ_t α_it h_it
Sentence level:  h_i = BiGRU(s_i);  u_i = tanh(W_s h_i + b_s);
                 α_i = softmax_i(u_iᵀ u_s);  v = Σ_i α_i h_i
Classifier:      one softmax head per label (the built-in model: sentiment and topic).

x_it are MiniLM input word-piece embeddings (frozen, read from the installed package at
run time and passed in as an argument, so they are never part of the checkpoint).
Attention runs over word pieces; a word's weight is the sum of its pieces' weights.

Shapes: B documents, S sentences, T pieces per sentence, E = 384, H = GRU width per direction.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

from models import attention as core
from models.checkpoint import check_tensors
from models.han.data import (
    Batch,
    Document,
    batch_shape,
    encode_document,
    load_word_embeddings,
    make_batch,
    word_weights,
)
from models.record import AttentionRecord, InputError

ROOT = Path(__file__).resolve().parents[2]
CHECKPOINT = ROOT / "checkpoints" / "han" / "han.safetensors"
EMBED_DIM = 384


@dataclass(frozen=True)
class HANConfig:
    """Sizes and label heads. heads: ((head name, (class names...)), ...)."""

    heads: tuple[tuple[str, tuple[str, ...]], ...]
    word_hidden: int = 48
    word_attention: int = 64
    sentence_hidden: int = 48
    sentence_attention: int = 64
    embed_dim: int = EMBED_DIM

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> HANConfig:
        raw = json.loads(text)
        raw["heads"] = tuple((name, tuple(classes)) for name, classes in raw["heads"])
        return cls(**raw)


REVIEW_HEADS = (("sentiment", ("negative", "positive")), ("topic", ("food", "service", "price", "ambience")))
REVIEWS = HANConfig(heads=REVIEW_HEADS)
TINY = HANConfig(heads=(("label", ("a", "b")),), word_hidden=4, word_attention=4, sentence_hidden=4, sentence_attention=4, embed_dim=8)


class BiGRU(nnx.Module):
    """A bidirectional GRU over a padded axis; outputs [..., T, 2H] (forward ‖ backward)."""

    def __init__(self, in_features: int, hidden: int, *, rngs: nnx.Rngs):
        self.hidden = hidden
        # Input projections for all steps at once (one matmul); recurrence in lax.scan.
        self.fwd_in = nnx.Linear(in_features, 3 * hidden, rngs=rngs)
        self.fwd_rec = nnx.Linear(hidden, 3 * hidden, rngs=rngs)
        self.bwd_in = nnx.Linear(in_features, 3 * hidden, rngs=rngs)
        self.bwd_rec = nnx.Linear(hidden, 3 * hidden, rngs=rngs)

    def __call__(self, x, mask):
        """x [N, T, F], mask [N, T] bool (True = real step; padding only at the end)."""
        fwd = _gru_scan(self.fwd_in(x), mask, self.fwd_rec, reverse=False)
        bwd = _gru_scan(self.bwd_in(x), mask, self.bwd_rec, reverse=True)
        return jnp.concatenate([fwd, bwd], axis=-1)


def _gru_scan(x_proj, mask, rec: nnx.Linear, *, reverse: bool):
    # x_proj [N, T, 3H]; padded steps keep the state (zero before the first real step when
    # reading backwards), so the backward pass starts at each sequence's own last word.
    n, _, h3 = x_proj.shape
    hidden = h3 // 3
    kernel, bias = rec.kernel[...], rec.bias[...]

    def step(h, inputs):
        xp, m = inputs
        hp = h @ kernel + bias
        r = jax.nn.sigmoid(xp[:, :hidden] + hp[:, :hidden])
        z = jax.nn.sigmoid(xp[:, hidden : 2 * hidden] + hp[:, hidden : 2 * hidden])
        cand = jnp.tanh(xp[:, 2 * hidden :] + r * hp[:, 2 * hidden :])
        new = (1.0 - z) * cand + z * h
        new = jnp.where(m[:, None], new, h)
        return new, jnp.where(m[:, None], new, 0.0)

    h0 = jnp.zeros((n, hidden), x_proj.dtype)
    _, out = jax.lax.scan(step, h0, (jnp.swapaxes(x_proj, 0, 1), jnp.swapaxes(mask, 0, 1)), reverse=reverse)
    return jnp.swapaxes(out, 0, 1)


class ContextAttention(nnx.Module):
    """Inner attention against a trainable context vector u: α = softmax(tanh(W h + b)ᵀ u)."""

    def __init__(self, in_features: int, attention_dim: int, *, rngs: nnx.Rngs):
        self.proj = nnx.Linear(in_features, attention_dim, rngs=rngs)
        self.context = nnx.Param(jax.random.normal(rngs.params(), (attention_dim,)) * 0.1)

    def scores(self, h):
        """Returns u·u_ctx per step.  h [..., T, F] -> [..., T]."""
        return jnp.tanh(self.proj(h)) @ self.context[...]

    def __call__(self, h, mask):
        """Returns (summary [..., F], α [..., T]).  h [..., T, F], mask [..., T] bool."""
        alpha = core.masked_softmax(self.scores(h), mask)
        summary = core.context_vector(alpha[..., None, :], h)[..., 0, :]
        return summary, alpha


class HAN(nnx.Module):
    """Words -> sentence vectors -> document vector -> one logit vector per head."""

    def __init__(self, cfg: HANConfig, *, rngs: nnx.Rngs):
        self.cfg = cfg
        self.word_encoder = BiGRU(cfg.embed_dim, cfg.word_hidden, rngs=rngs)
        self.word_attention = ContextAttention(2 * cfg.word_hidden, cfg.word_attention, rngs=rngs)
        self.sentence_encoder = BiGRU(2 * cfg.word_hidden, cfg.sentence_hidden, rngs=rngs)
        self.sentence_attention = ContextAttention(2 * cfg.sentence_hidden, cfg.sentence_attention, rngs=rngs)
        self.heads = nnx.List([nnx.Linear(2 * cfg.sentence_hidden, len(classes), rngs=rngs) for _, classes in cfg.heads])

    def __call__(self, x, piece_mask, sentence_mask):
        """x [B, S, T, E], piece_mask [B, S, T], sentence_mask [B, S].

        Returns (logits: tuple of [B, C_k], word α [B, S, T], sentence α [B, S],
        word scores [B, S, T], sentence scores [B, S]) (scores = uᵀu_ctx before the softmax).
        """
        b, s, t, e = x.shape
        words = self.word_encoder(x.reshape(b * s, t, e), piece_mask.reshape(b * s, t))  # [B·S, T, 2H]
        sent_vec, word_alpha = self.word_attention(words, piece_mask.reshape(b * s, t))
        word_scores = self.word_attention.scores(words).reshape(b, s, t)
        sents = self.sentence_encoder(sent_vec.reshape(b, s, -1), sentence_mask)  # [B, S, 2H]
        doc, sent_alpha = self.sentence_attention(sents, sentence_mask)
        logits = tuple(head(doc) for head in self.heads)
        return logits, word_alpha.reshape(b, s, t), sent_alpha, word_scores, self.sentence_attention.scores(sents)


def embed(table, ids):
    """Returns table[ids]: frozen piece vectors.  ids [...] int -> [..., E]."""
    return jnp.take(table, ids, axis=0)


@functools.lru_cache(maxsize=8)
def compiled_forward(graphdef) -> Callable:
    """Returns jit((state, table, ids, piece_mask, sentence_mask) -> model outputs)."""

    @jax.jit
    def forward(state, table, ids, piece_mask, sentence_mask):
        model = nnx.merge(graphdef, state)
        return model(embed(table, ids), piece_mask, sentence_mask)

    return forward


# ------------------------------------------------------------------------------ training


def loss_fn(model: HAN, table, batch: dict, head_weights=None):
    """Returns (mean cross-entropy summed over heads, logits).  batch: ids, masks, labels [B, K]."""
    logits, *_ = model(embed(table, batch["ids"]), batch["piece_mask"], batch["sentence_mask"])
    total = 0.0
    for k, head_logits in enumerate(logits):
        ce = optax.softmax_cross_entropy_with_integer_labels(head_logits, batch["labels"][:, k])
        total = total + jnp.sum(ce * batch["row_mask"]) / jnp.maximum(jnp.sum(batch["row_mask"]), 1.0)
    return total, logits


@functools.lru_cache(maxsize=8)
def compiled_train_step(graphdef, optimizer: optax.GradientTransformation) -> Callable:
    """Returns jit((state, opt_state, table, batch) -> (state, opt_state, loss))."""

    @jax.jit
    def train_step(state, opt_state, table, batch):
        def loss_of(st):
            return loss_fn(nnx.merge(graphdef, st), table, batch)[0]

        loss, grads = jax.value_and_grad(loss_of)(state)
        updates, opt_state = optimizer.update(grads, opt_state, state)
        return optax.apply_updates(state, updates), opt_state, loss

    return train_step


def batch_arrays(batch: Batch, labels: np.ndarray, rows: int) -> dict:
    """Returns the dict a train step takes.  labels [n, K] int for the first n rows."""
    full = np.zeros((batch.ids.shape[0], labels.shape[1]), np.int32)
    full[: len(labels)] = labels
    row_mask = np.zeros(batch.ids.shape[0], np.float32)
    row_mask[:rows] = 1.0
    return {
        "ids": batch.ids,
        "piece_mask": batch.piece_mask,
        "sentence_mask": batch.sentence_mask,
        "labels": full,
        "row_mask": row_mask,
    }


@dataclass
class TrainState:
    """A HAN under training: the split module, the optimiser and its state."""

    graphdef: Any
    state: Any
    optimizer: optax.GradientTransformation
    opt_state: Any

    @classmethod
    def create(cls, cfg: HANConfig, seed: int = 0, learning_rate: float = 3e-3) -> TrainState:
        model = HAN(cfg, rngs=nnx.Rngs(seed))
        graphdef, state = nnx.split(model, nnx.Param)
        optimizer = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(learning_rate))
        return cls(graphdef, state, optimizer, optimizer.init(state))

    def model(self) -> HAN:
        return nnx.merge(self.graphdef, self.state)


def train_epochs(
    train: TrainState,
    docs: Sequence[Document],
    labels: np.ndarray,
    *,
    epochs: int,
    batch_size: int = 32,
    seed: int = 0,
    table: np.ndarray | None = None,
    on_step: Callable[[int, int, float], None] | None = None,
    max_steps: int | None = None,
) -> list[float]:
    """Trains in place; returns the mean loss of each epoch.  labels [n, K] int.

    on_step(step, total_steps, loss) is called after every step (progress bars, stop checks:
    raise from it to stop). Documents are sorted into length buckets within each shuffle
    so few shapes compile.
    """
    table = load_word_embeddings() if table is None else table
    table = jnp.asarray(table)
    step_fn = compiled_train_step(train.graphdef, train.optimizer)
    rng = np.random.default_rng(seed)
    n = len(docs)
    shape = batch_shape(docs)  # one padded shape for the whole run: one compile
    per_epoch = (n + batch_size - 1) // batch_size
    total = per_epoch * epochs if max_steps is None else min(max_steps, per_epoch * epochs)
    losses, step = [], 0
    for _ in range(epochs):
        order = rng.permutation(n)
        batches = [order[i : i + batch_size] for i in range(0, n, batch_size)]
        epoch_losses = []
        for idx in batches:
            if step >= total:
                break
            batch = make_batch([docs[j] for j in idx], batch_size, shape)
            arrays = batch_arrays(batch, labels[idx], len(idx))
            train.state, train.opt_state, loss = step_fn(train.state, train.opt_state, table, arrays)
            step += 1
            epoch_losses.append(float(loss))
            if on_step is not None:
                on_step(step, total, float(loss))
        if epoch_losses:
            losses.append(float(np.mean(epoch_losses)))
    return losses


# ---------------------------------------------------------------------------- checkpoints


def state_tensors(state) -> dict[str, np.ndarray]:
    """Returns the trainable parameters as {dotted path: float32 array}."""
    flat = {}
    for path, leaf in nnx.to_flat_state(state):
        flat[".".join(str(p) for p in path)] = np.asarray(leaf.get_value() if hasattr(leaf, "get_value") else leaf[...], np.float32)
    return flat


def checkpoint_bytes(graphdef, state, cfg: HANConfig, meta: Mapping[str, str] | None = None) -> bytes:
    """Returns the safetensors bytes of a HAN's trainable parameters, the config in metadata."""
    from safetensors.numpy import save

    metadata = {"config": cfg.to_json(), "format": "attention-lab-han-v1", **dict(meta or {})}
    return save(state_tensors(state), metadata=metadata)


def save_checkpoint(path: Path, graphdef, state, cfg: HANConfig, meta: Mapping[str, str] | None = None) -> None:
    """Writes the checkpoint (trainable parameters only; the MiniLM table is not in it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(checkpoint_bytes(graphdef, state, cfg, meta))


def load_checkpoint_bytes(data: bytes) -> tuple[HANConfig, Any, Any, dict[str, str]]:
    """Returns (config, graphdef, state, metadata) from safetensors bytes, strictly.

    Every parameter of the model built from the stored config must be present with its
    shape; unknown or missing tensors raise ValueError naming them.
    """
    from safetensors.numpy import load

    try:
        tensors = load(data)
        header_len = int.from_bytes(data[:8], "little")
        metadata = dict(json.loads(data[8 : 8 + header_len]).get("__metadata__") or {})
    except Exception as error:  # noqa: BLE001 - any parse failure means "not a checkpoint"
        raise ValueError(f"not a HAN checkpoint: {error}") from None
    if metadata.get("format") != "attention-lab-han-v1" or "config" not in metadata:
        raise ValueError("not a HAN checkpoint: metadata 'format'/'config' missing")
    cfg = HANConfig.from_json(metadata["config"])
    # eval_shape builds the module's structure without computing a random initialisation
    graphdef, state = nnx.split(nnx.eval_shape(lambda: HAN(cfg, rngs=nnx.Rngs(0))), nnx.Param)
    flat = {".".join(str(p) for p in path): leaf for path, leaf in nnx.to_flat_state(state)}
    check_tensors({name: tuple(leaf.get_value().shape) for name, leaf in flat.items()}, tensors, where="HAN checkpoint")
    for name, leaf in flat.items():
        leaf.set_value(jnp.asarray(tensors[name], jnp.float32))
    return cfg, graphdef, state, metadata


def load_checkpoint(path: Path = CHECKPOINT) -> tuple[HANConfig, Any, Any, dict[str, str]]:
    """Returns (config, graphdef, state, metadata) from a checkpoint file (see load_checkpoint_bytes)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no HAN checkpoint at {path}; train one with: python -m models.train han")
    return load_checkpoint_bytes(path.read_bytes())


# ----------------------------------------------------------------------------- inference


@dataclass(frozen=True)
class HANResult:
    """A HAN's reading of one document.

    word_alpha: per sentence, float32 [words] (sums of piece α); sentence_alpha [S];
    word_scores: per sentence, the max piece score uᵀu_w per word; sentence_scores [S];
    probabilities: per head, float32 [C].
    """

    doc: Document
    word_alpha: tuple[np.ndarray, ...]
    sentence_alpha: np.ndarray
    word_scores: tuple[np.ndarray, ...]
    sentence_scores: np.ndarray
    probabilities: tuple[np.ndarray, ...]
    heads: tuple[tuple[str, tuple[str, ...]], ...]

    @property
    def predictions(self) -> tuple[str, ...]:
        return tuple(classes[int(np.argmax(p))] for (_, classes), p in zip(self.heads, self.probabilities))

    def word_matrix(self) -> np.ndarray:
        """Returns float32 [S, W_max]: word α, rows zero-padded past each sentence's end."""
        width = max(len(w) for w in self.doc.words)
        out = np.zeros((len(self.doc.words), width), np.float32)
        for i, a in enumerate(self.word_alpha):
            out[i, : len(a)] = a
        return out


class HANPredictor:
    """A loaded HAN (split once, jitted forward) plus the frozen MiniLM table."""

    def __init__(self, cfg: HANConfig, graphdef, state, table: np.ndarray | None = None, meta=None):
        self.cfg, self.graphdef, self.state = cfg, graphdef, state
        self.table = jnp.asarray(load_word_embeddings() if table is None else table)
        self.meta = dict(meta or {})
        self._forward = compiled_forward(graphdef)

    @classmethod
    def from_checkpoint(cls, path: Path = CHECKPOINT) -> HANPredictor:
        cfg, graphdef, state, meta = load_checkpoint(path)
        return cls(cfg, graphdef, state, meta=meta)

    @classmethod
    def from_bytes(cls, data: bytes) -> HANPredictor:
        cfg, graphdef, state, meta = load_checkpoint_bytes(data)
        return cls(cfg, graphdef, state, meta=meta)

    def run_batch(self, docs: Sequence[Document], batch_size: int = 8) -> list[HANResult]:
        """Returns one HANResult per document."""
        results = []
        for start in range(0, len(docs), batch_size):
            chunk = docs[start : start + batch_size]
            rows = bucket_rows(len(chunk))
            batch = make_batch(chunk, rows)
            logits, wa, sa, ws, ss = self._forward(self.state, self.table, batch.ids, batch.piece_mask, batch.sentence_mask)
            probs = [np.asarray(jax.nn.softmax(lg, axis=-1)) for lg in logits]
            wa, sa, ws, ss = (np.asarray(a) for a in (wa, sa, ws, ss))
            for b, doc in enumerate(chunk):
                n_s = len(doc.pieces)
                w_alpha, w_scores = [], []
                for i in range(n_s):
                    n_w = len(doc.words[i])
                    w_alpha.append(word_weights(wa[b, i], doc.piece_words[i], n_w))
                    w_scores.append(_max_per_word(ws[b, i], doc.piece_words[i], n_w))
                results.append(
                    HANResult(doc, tuple(w_alpha), sa[b, :n_s].copy(), tuple(w_scores), ss[b, :n_s].copy(),
                              tuple(p[b] for p in probs), self.cfg.heads)
                )
        return results

    def analyse(self, text: str) -> HANResult:
        """Returns the HANResult of one text; InputError if it is empty."""
        return self.run_batch([encode_document(text)])[0]

    def context_word_scores(self, limit: int | None = None) -> tuple[list[str], np.ndarray]:
        """Returns (words, float32 [V] scores): MiniLM's whole-word vocabulary, each word read
        alone as a one-word sentence and scored against u_w (uᵀu_w before the softmax).

        It shows what the word-level context vector u_w looks for, free of any context.
        """
        words, ids = vocabulary_words()
        if limit is not None:
            words, ids = words[:limit], ids[:limit]
        scores = compiled_word_scores(self.graphdef)(self.state, jnp.take(self.table, jnp.asarray(ids), axis=0))
        return words, np.asarray(scores, np.float32)


@functools.lru_cache(maxsize=1)
def vocabulary_words() -> tuple[list[str], np.ndarray]:
    """Returns MiniLM's whole-word tokens of 3+ letters and their ids (int32 [V])."""
    from models.han.data import load_tokenizer

    vocab = load_tokenizer().get_vocab()
    pairs = sorted((i, w) for w, i in vocab.items() if w.isalpha() and w.isascii() and len(w) >= 3)
    return [w for _, w in pairs], np.asarray([i for i, _ in pairs], np.int32)


@functools.lru_cache(maxsize=8)
def compiled_word_scores(graphdef) -> Callable:
    """Returns jit((state, x [V, E]) -> [V]): each vector read as a one-step sentence, scored against u_w."""

    @jax.jit
    def word_scores(state, x):
        model = nnx.merge(graphdef, state)
        h = model.word_encoder(x[:, None, :], jnp.ones((x.shape[0], 1), bool))
        return model.word_attention.scores(h)[:, 0]

    return word_scores


def bucket_rows(n: int) -> int:
    """Returns the padded batch size: always 8 rows (one compile per length bucket; a
    single document costs 8 short rows, which is cheaper than another compile)."""
    return 8


def _max_per_word(scores: np.ndarray, piece_words: Sequence[int], num_words: int) -> np.ndarray:
    out = np.full(num_words, -np.inf, np.float32)
    np.maximum.at(out, np.asarray(piece_words, np.int64), np.asarray(scores[: len(piece_words)], np.float32))
    return out


@functools.lru_cache(maxsize=1)
def default_predictor() -> HANPredictor:
    """Returns the predictor of the committed checkpoint (cached)."""
    return HANPredictor.from_checkpoint(CHECKPOINT)


def result_record(result: HANResult, mechanism: str = "han") -> AttentionRecord:
    """Returns the AttentionRecord of a HANResult.

    weights [S, W_max]: word α per sentence (rows zero-padded past each sentence's end);
    axes ("sentence", "word"); query_labels: the sentences; key_labels: word slots
    "w1".."wN" (the words differ per sentence; extras["words"] [S, W_max] holds each slot's
    word, "" for padding). Extras: sentence_weights [S], words, prediction [K] (one per head),
    probabilities_<head> [C], classes_<head> [C].
    """
    matrix = result.word_matrix()
    words = np.full(matrix.shape, "", dtype=object)
    for i, ws in enumerate(result.doc.words):
        words[i, : len(ws)] = ws
    extras: dict[str, Any] = {
        "sentence_weights": result.sentence_alpha.astype(np.float32),
        "sentence_scores": result.sentence_scores.astype(np.float32),
        "words": words.astype(np.str_),
        "prediction": np.asarray(result.predictions, dtype=np.str_),
    }
    for (name, classes), p in zip(result.heads, result.probabilities):
        extras[f"probabilities_{name}"] = np.asarray(p, np.float32)
        extras[f"classes_{name}"] = np.asarray(classes, dtype=np.str_)
    return AttentionRecord(
        mechanism=mechanism,
        weights=matrix,
        axes=("sentence", "word"),
        query_labels=result.doc.sentences,
        key_labels=tuple(f"w{j + 1}" for j in range(matrix.shape[1])),
        meta={
            "heads": [name for name, _ in result.heads],
            "prediction": dict(zip([n for n, _ in result.heads], result.predictions)),
            "notices": list(result.doc.notices),
            "key_labels": "word slots w1..wN; extras 'words' holds each sentence's word per slot",
        },
        extras=extras,
    )


def han_record(options: Mapping[str, Any]) -> AttentionRecord:
    """Registry builder: the committed HAN's attention over options["text"]."""
    text = options.get("text")
    if text is None or not str(text).strip():
        raise InputError("the document is empty; pass --text with a few sentences")
    return result_record(default_predictor().analyse(str(text)))


def han_records(options_list: list[Mapping[str, Any]]) -> list[AttentionRecord]:
    """Batch builder: one record per options dict (documents run in batches)."""
    docs = []
    for options in options_list:
        text = options.get("text")
        docs.append(encode_document("" if text is None else str(text)))
    return [result_record(r) for r in default_predictor().run_batch(docs)]


def timed(fn: Callable, *args, **kwargs) -> tuple[Any, float]:
    """Returns (fn(*args, **kwargs), seconds)."""
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start
