"""The 2019 tests on the HAN (the committed checkpoint by default): its output is each head's class
distribution (sentiment, topic); its decision the sentiment head's class.

- Jain & Wallace's adversary and the permutation test on the sentence α, and on the word α of one sentence (the
  top-α one unless chosen; the other sentences keep theirs), through the model's one forward
  (models/han/model.py ``HAN.__call__``) with its α override;
- Wiegreffe & Pinter's uniform α (at both levels);
- Serrano & Smith's decision flips: the top-α sentence removed (its α zeroed, the rest renormalised) against each
  other sentence removed, and how many sentences must go, in α order, before the decision flips.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models.counterfactual import measures
from models.han.data import Document, encode_document, make_batch, word_weights
from models.han.features import feature_batch
from models.han.model import compiled_forward
from models.han.quality import HELD_OUT_SEED
from models.han.records import HANPredictor, default_predictor
from models.han.task import generate_reviews
from models.record import AttentionRecord

SHUFFLES = 100
LEVELS = ("sentence", "word")


@dataclass(frozen=True)
class Inputs:
    """One document as the HAN reads it: x [1, S, T, E], piece_mask [1, S, T], sentence_mask [1, S]."""

    doc: Document
    x: np.ndarray
    piece_mask: np.ndarray
    sentence_mask: np.ndarray


def prepare(predictor: HANPredictor, docs: Sequence[Document], shape: tuple[int, int] | None = None) -> list[Inputs]:
    """Returns each document's Inputs (MiniLM's vectors for all of them at once), padded to `shape` (S, T)."""
    vectors = predictor.featurize(docs)
    out = []
    for doc, vec in zip(docs, vectors):
        batch = make_batch([doc], 1, shape)
        out.append(Inputs(doc, feature_batch([vec], batch), batch.piece_mask, batch.sentence_mask))
    return out


def _outputs(model, x, piece_mask, sentence_mask, word_alpha=None, sentence_alpha=None):
    """Returns (each head's probabilities [B, C] as a tuple, word α, sentence α) of the one forward."""
    logits, word, sentence, _, _ = model(x, piece_mask, sentence_mask, word_alpha, sentence_alpha)
    return tuple(jax.nn.softmax(lg, -1) for lg in logits), word, sentence


def _level_output(model, x, piece_mask, sentence_mask, word, level: str):
    """Returns output(α̃, sentence index) -> probabilities per head, with α̃ read at `level` (the word α of that
    sentence, or the sentence α; the index is then unused)."""

    def output(tilde, index):
        if level == "sentence":
            probs, _, _ = _outputs(model, x, piece_mask, sentence_mask, word, tilde[None])
        else:
            probs, _, _ = _outputs(model, x, piece_mask, sentence_mask, word.at[0, index].set(tilde))
        return tuple(p[0] for p in probs)

    return output


@functools.partial(jax.jit, static_argnames=("graphdef", "level", "settings"))
def _tests(
    graphdef, state, x, piece_mask, sentence_mask, index, key, orders, level: str, settings: measures.AdversarySettings
):
    # One document; index: the sentence whose word α is tested (level "word"); orders [P, T or S].
    model = nnx.merge(graphdef, state)
    probs, word, sentence = _outputs(model, x, piece_mask, sentence_mask)
    output = _level_output(model, x, piece_mask, sentence_mask, word, level)
    alpha, mask = (sentence[0], sentence_mask[0]) if level == "sentence" else (word[0, index], piece_mask[0, index])
    tilde, divergence, distance = measures.adversary(output, index, alpha, mask, key, settings)
    shuffled = measures.permutation_tvd(output, index, alpha, orders)
    uniform_tvd = measures.heads_tvd(output(measures.uniform(mask), index), output(alpha, index))
    return alpha, tilde, divergence, distance, tuple(p[0] for p in probs), output(tilde, index), shuffled, uniform_tvd


@dataclass(frozen=True)
class LevelTests:
    """The tests at one level of one document (numpy; n = the real sentences or the sentence's pieces).

    alpha, tilde [n]; jsd, tvd: α̃ against α and the output's largest TVD over the heads; probs, probs_tilde:
    per head [C]; shuffled_tvd [P]; worst_shuffle [n]; uniform_tvd.
    """

    level: str
    sentence: int
    alpha: np.ndarray
    tilde: np.ndarray
    jsd: float
    tvd: float
    probs: tuple[np.ndarray, ...]
    probs_tilde: tuple[np.ndarray, ...]
    shuffled_tvd: np.ndarray
    worst_shuffle: np.ndarray
    uniform_tvd: float


def run_tests(
    predictor: HANPredictor,
    inputs: Inputs,
    level: str = "sentence",
    sentence: int | None = None,
    *,
    seed: int = 0,
    shuffles: int = SHUFFLES,
    settings: measures.AdversarySettings = measures.AdversarySettings(),
) -> LevelTests:
    """Returns the LevelTests of one document at `level` (sentence: whose word α; default the top-α one)."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; expected one of {LEVELS}")
    s_mask, p_mask = inputs.sentence_mask[0], inputs.piece_mask[0]
    if sentence is None:
        own = compiled_forward(predictor.graphdef)(predictor.state, inputs.x, inputs.piece_mask, inputs.sentence_mask)[
            2
        ]
        sentence = int(np.argmax(np.asarray(own)[0]))
    n = int(s_mask.sum()) if level == "sentence" else int(p_mask[sentence].sum())
    width = len(s_mask) if level == "sentence" else p_mask.shape[-1]
    orders = measures.permutation_orders(np.asarray(n), width, shuffles, seed)
    out = _tests(
        predictor.graphdef,
        predictor.state,
        inputs.x,
        inputs.piece_mask,
        inputs.sentence_mask,
        np.int32(sentence),
        jax.random.key(seed),
        orders,
        level,
        settings,
    )
    alpha, tilde, divergence, distance, probs, probs_tilde, shuffled, uniform_tvd = jax.tree.map(np.asarray, out)
    worst = alpha[orders[int(shuffled.argmax())]]
    return LevelTests(
        level,
        sentence,
        alpha[:n],
        tilde[:n],
        float(divergence),
        float(distance),
        tuple(probs),
        tuple(probs_tilde),
        shuffled,
        worst[:n],
        float(uniform_tvd),
    )


def _labels_and_weights(inputs: Inputs, tests: LevelTests, arrays: Sequence[np.ndarray]):
    # Sentence level: the sentences; word level: the words of the sentence (a word's α = the sum of its pieces').
    doc = inputs.doc
    if tests.level == "sentence":
        return doc.sentences, [np.asarray(a, np.float32) for a in arrays]
    i = tests.sentence
    return doc.words[i], [word_weights(a, doc.piece_words[i], len(doc.words[i])) for a in arrays]


def _pair_record(
    predictor: HANPredictor,
    inputs: Inputs,
    tests: LevelTests,
    second: np.ndarray,
    which: str,
    meta: dict[str, Any],
    extras: dict[str, Any],
    mechanism: str,
) -> AttentionRecord:
    # α and a second attention side by side: axes ("which", "query", "key"), one query row (the document, or the
    # tested sentence); the outputs under each in meta.
    labels, (first, other) = _labels_and_weights(inputs, tests, [tests.alpha, second])
    heads = predictor.cfg.heads
    query = "document" if tests.level == "sentence" else inputs.doc.sentences[tests.sentence]
    return AttentionRecord(
        mechanism=mechanism,
        weights=np.stack([first, other])[:, None, :],
        axes=("which", "query", "key"),
        query_labels=(query,),
        key_labels=labels,
        meta={
            "level": tests.level,
            "sentence": tests.sentence,
            "which": ["α", which],
            "classes": {name: list(classes) for name, classes in heads},
            **meta,
        },
        extras={"which": np.asarray(["alpha", which]), **extras},
    )


def _probabilities(heads, probs: Sequence[np.ndarray]) -> dict[str, list[float]]:
    return {name: [round(float(x), 6) for x in p] for (name, _), p in zip(heads, probs)}


def jain_wallace_record(
    test: str,
    text: str,
    level: str = "sentence",
    sentence: int | None = None,
    *,
    seed: int = 0,
    predictor: HANPredictor | None = None,
    mechanism: str = "han",
) -> AttentionRecord:
    """Returns Jain & Wallace's `test` ("adversary" or "permutation") of one text at `level`, over the sentences or
    the words of one sentence. adversary: weights [2, 1, n] = (α, α̃); meta: every head's probabilities under α and
    under α̃, the JSD and the TVD kept. permutation: weights [2, 1, n] = (α, the shuffle of largest TVD); meta: the
    median and max TVD; extras: shuffled_tvd [P]. Both come from one run_tests."""
    predictor = predictor or default_predictor()
    inputs = prepare(predictor, [encode_document(text)])[0]
    t = run_tests(predictor, inputs, level, sentence, seed=seed)
    if test == "adversary":
        meta = {
            "test": "adversarial attention (Jain & Wallace 2019): α̃ as far from α as possible (JSD, nats) while "
            "every head's output stays within TVD 0.01",
            "epsilon": measures.AdversarySettings().epsilon,
            "jsd": round(t.jsd, 6),
            "tvd": round(t.tvd, 6),
            "probabilities_alpha": _probabilities(predictor.cfg.heads, t.probs),
            "probabilities_tilde": _probabilities(predictor.cfg.heads, t.probs_tilde),
        }
        return _pair_record(predictor, inputs, t, t.tilde, "alpha_tilde", meta, {}, mechanism)
    meta = {
        "test": f"permutation (Jain & Wallace 2019): α shuffled {len(t.shuffled_tvd)} times; the output's "
        "largest TVD over the heads against the output under α",
        "median_tvd": round(float(np.median(t.shuffled_tvd)), 6),
        "max_tvd": round(float(t.shuffled_tvd.max()), 6),
        "uniform_tvd": round(t.uniform_tvd, 6),
    }
    extras = {"shuffled_tvd": t.shuffled_tvd.astype(np.float32)}
    return _pair_record(predictor, inputs, t, t.worst_shuffle, "worst_shuffle", meta, extras, mechanism)


adversary_record = functools.partial(jain_wallace_record, "adversary")
permutation_record = functools.partial(jain_wallace_record, "permutation")


# ----------------------------------------------------------------------------- Serrano & Smith


@functools.partial(jax.jit, static_argnames=("graphdef",))
def _decide(graphdef, state, x, piece_mask, sentence_mask, sentence_alphas):
    # Each head's class for each sentence α [K, S] of one document (x [1, S, T, E]).
    model = nnx.merge(graphdef, state)
    k = sentence_alphas.shape[0]
    tile = functools.partial(jnp.repeat, repeats=k, axis=0)
    probs, _, _ = _outputs(model, tile(x), tile(piece_mask), tile(sentence_mask), None, sentence_alphas)
    return tuple(jnp.argmax(p, -1) for p in probs)


def document_flips(predictor: HANPredictor, inputs: Inputs, head: int = 0) -> measures.Flips:
    """Returns the Flips of one document (at least two sentences) for one head's decision."""
    args = (predictor.graphdef, predictor.state, inputs.x, inputs.piece_mask, inputs.sentence_mask)
    logits, _, sentence, _, _ = compiled_forward(predictor.graphdef)(*args[1:])
    n = int(inputs.sentence_mask[0].sum())
    width = inputs.sentence_mask.shape[-1]

    def decide(alphas: np.ndarray) -> np.ndarray:
        padded = np.zeros((2 * width, width), np.float32)  # one shape per sentence bucket: one compile
        padded[:, 0] = 1.0
        padded[: len(alphas), :n] = alphas
        return np.asarray(_decide(*args, padded)[head])[: len(alphas)]

    return measures.flips(np.asarray(sentence)[0, :n], int(np.argmax(np.asarray(logits[head])[0])), decide)


def held_out_inputs(predictor: HANPredictor, count: int) -> list[Inputs]:
    """Returns the first `count` held-out generated reviews (the quality test's seed) with an opinion and at least
    two sentences, all padded to one shape (one compile)."""
    reviews = [r for r in generate_reviews(4 * count, HELD_OUT_SEED) if r.label_sentences and len(r.sentences) > 1]
    docs = [encode_document(r.text) for r in reviews[:count]]
    from models.han.data import batch_shape

    return prepare(predictor, docs, batch_shape(docs))


def summary(count: int = 50, predictor: HANPredictor | None = None) -> dict[str, Any]:
    """Returns the figures of the tests over `count` held-out reviews: per level, the adversary's JSD (mean, max)
    and the TVD it kept (max), the permutation TVD (median, max), the uniform-α TVD (mean); per head, the flips
    (top sentence removed, a random other one removed, sentences removed in α order until the decision flips)."""
    predictor = predictor or default_predictor()
    inputs = held_out_inputs(predictor, count)
    figures: dict[str, Any] = {"documents": len(inputs)}
    for level in LEVELS:
        runs = [run_tests(predictor, doc, level, seed=i) for i, doc in enumerate(inputs)]
        jsd, tvd = np.asarray([r.jsd for r in runs]), np.asarray([r.tvd for r in runs])
        shuffled = np.stack([r.shuffled_tvd for r in runs])
        figures[level] = {
            "jsd_mean": float(jsd.mean()),
            "jsd_max": float(jsd.max()),
            "tvd_max": float(tvd.max()),
            "permutation_tvd_median": float(np.median(shuffled)),
            "permutation_tvd_max": float(shuffled.max()),
            "uniform_tvd_mean": float(np.mean([r.uniform_tvd for r in runs])),
        }
    for head, (name, _) in enumerate(predictor.cfg.heads):
        figures[f"flips_{name}"] = _flip_figures([document_flips(predictor, doc, head) for doc in inputs])
    return figures


def _flip_figures(found: Sequence[measures.Flips]) -> dict[str, Any]:
    # The shares over documents; the removal counts over those whose decision ever flips.
    counts = [f.removals_to_flip for f in found]
    flipped = [(c, f.sentences) for c, f in zip(counts, found) if c is not None]
    return {
        "top_removed_flips": float(np.mean([f.top_flips for f in found])),
        "random_removed_flips": float(np.mean([f.random_flip_rate for f in found])),
        "ever_flips": len(flipped) / len(found),
        "removals_to_flip_mean": float(np.mean([c for c, _ in flipped])) if flipped else None,
        "removed_share_to_flip_mean": float(np.mean([c / n for c, n in flipped])) if flipped else None,
        "sentences_mean": float(np.mean([f.sentences for f in found])),
    }
