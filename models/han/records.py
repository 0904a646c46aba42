"""The committed HAN at work: documents in, HANResults and AttentionRecords out.

    get_mechanism("han").build({"text": "The pasta was cold. We took the bus home."})

returns word α per sentence as ("sentence", "word") with the sentence α, the scores against
the context vectors and each head's probabilities as extras. When the sentence attention is
spread (its normalised entropy at least the threshold measured on generated reviews and kept
in the checkpoint), the record says the network found no opinion sentence. The record
builders of the page's other figures (class probabilities, context-vector scores) live here
too, so every export holds exactly the numbers its figure shows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import numpy as np

from models.han.data import Document, cjk_share, encode_document, make_batch, word_weights
from models.han.features import document_vectors, feature_batch
from models.han.model import CHECKPOINT, HANConfig, compiled_forward
from models.han.spread import sentence_spread
from models.record import AttentionRecord

REFERENCE_SEED = 777  # the generated reviews whose words the u_w chart scores (never trained on)
REFERENCE_DOCUMENTS = 40


@dataclass(frozen=True)
class HANResult:
    """A HAN's reading of one document.

    word_alpha: per sentence, float32 [words] (sums of piece α); sentence_alpha [S];
    word_scores: per sentence, the max piece score uᵀu_w per word; sentence_scores [S];
    probabilities: per head, float32 [C]; spread: the normalised entropy of sentence α
    (1 = even); even: spread >= the model's measured threshold (None: the model has none);
    no_opinion: even, and the sentiment head close to a guess (its largest probability under
    GUESS). A review without an opinion was trained towards even attention and a 50/50 sentiment;
    one whose every sentence judges also gets even attention, but a confident sentiment.
    """

    doc: Document
    word_alpha: tuple[np.ndarray, ...]
    sentence_alpha: np.ndarray
    word_scores: tuple[np.ndarray, ...]
    sentence_scores: np.ndarray
    probabilities: tuple[np.ndarray, ...]
    heads: tuple[tuple[str, tuple[str, ...]], ...]
    spread: float = 0.0
    no_opinion: bool | None = None
    even: bool | None = None

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
    """A loaded HAN (split once, jitted forward) and how it gets its frozen piece vectors.

    featurize(docs) -> per document, per sentence [T_i, E] (default: models.han.features
    document_vectors with the config's features). meta: the checkpoint's info; its
    "no_opinion_spread" is the threshold of the no-opinion rule.
    """

    def __init__(self, cfg: HANConfig, graphdef, state, featurize: Callable | None = None, meta=None):
        self.cfg, self.graphdef, self.state = cfg, graphdef, state
        self.featurize = featurize or functools.partial(document_vectors, features=cfg.features)
        self.meta = dict(meta or {})
        self.no_opinion_spread = self.meta.get("no_opinion_spread")
        self._sentiment = sentiment_head(cfg.heads)
        self._forward = compiled_forward(graphdef)
        self._reference_words: tuple[list[str], np.ndarray] | None = None

    @classmethod
    def from_checkpoint(cls, path: Path = CHECKPOINT.file) -> HANPredictor:
        cfg, graphdef, state, meta = CHECKPOINT.load(path)
        return cls(cfg, graphdef, state, meta=meta)

    @classmethod
    def from_bytes(cls, data: bytes) -> HANPredictor:
        cfg, graphdef, state, meta = CHECKPOINT.load_bytes(data)
        return cls(cfg, graphdef, state, meta=meta)

    def run_batch(self, docs: Sequence[Document], batch_size: int = 8) -> list[HANResult]:
        """Returns one HANResult per document (piece vectors for all of them first, in MiniLM's batches)."""
        vectors = self.featurize(docs)
        results = []
        for start in range(0, len(docs), batch_size):
            chunk = docs[start : start + batch_size]
            batch = make_batch(chunk, batch_size)  # always batch_size rows: one compile per length bucket
            x = feature_batch(vectors[start : start + batch_size], batch)
            logits, wa, sa, ws, ss = self._forward(self.state, x, batch.piece_mask, batch.sentence_mask)
            probs = [np.asarray(jax.nn.softmax(lg, axis=-1)) for lg in logits]
            wa, sa, ws, ss = (np.asarray(a) for a in (wa, sa, ws, ss))
            for b, doc in enumerate(chunk):
                n_s = len(doc.pieces)
                w_alpha = [word_weights(wa[b, i], doc.piece_words[i], len(doc.words[i])) for i in range(n_s)]
                w_scores = [_max_per_word(ws[b, i], doc.piece_words[i], len(doc.words[i])) for i in range(n_s)]
                spread = sentence_spread(sa[b, :n_s])
                even = None if self.no_opinion_spread is None or n_s < 2 else spread >= self.no_opinion_spread
                guess = float(np.max(probs[self._sentiment][b])) < GUESS
                no_opinion = None if even is None else even and guess
                results.append(HANResult(doc, tuple(w_alpha), sa[b, :n_s].copy(), tuple(w_scores), ss[b, :n_s].copy(),
                                         tuple(p[b] for p in probs), self.cfg.heads, spread, no_opinion, even))
        return results

    def analyse(self, text: str) -> HANResult:
        """Returns the HANResult of one text; InputError if it is empty."""
        return self.run_batch([encode_document(text)])[0]

    def context_word_scores(self) -> tuple[list[str], np.ndarray]:
        """Returns (words, float32 [V] scores): every distinct word (lower case, no punctuation) of
        REFERENCE_DOCUMENTS generated reviews, scored uᵀu_w in its own sentence (its highest
        score over its occurrences). It shows what the word-level context vector u_w looks for
        in the text the model reads. Computed once per predictor."""
        if self._reference_words is None:
            from models.han.task import generate_reviews

            reviews = generate_reviews(REFERENCE_DOCUMENTS, REFERENCE_SEED)
            best: dict[str, float] = {}
            for result in self.run_batch([encode_document(r.text) for r in reviews]):
                for sentence_words, scores in zip(result.doc.words, result.word_scores):
                    for word, score in zip(sentence_words, scores):
                        key = "".join(ch for ch in word.lower() if ch.isalnum() or ch == "-")
                        if key:
                            best[key] = max(best.get(key, -np.inf), float(score))
            words = sorted(best)
            self._reference_words = (words, np.asarray([best[w] for w in words], np.float32))
        return self._reference_words


def _max_per_word(scores: np.ndarray, piece_words: Sequence[int], num_words: int) -> np.ndarray:
    out = np.full(num_words, -np.inf, np.float32)
    np.maximum.at(out, np.asarray(piece_words, np.int64), np.asarray(scores[: len(piece_words)], np.float32))
    return out


@functools.lru_cache(maxsize=1)
def default_predictor() -> HANPredictor:
    """Returns the predictor of the committed checkpoint (cached)."""
    return HANPredictor.from_checkpoint(CHECKPOINT.file)


def result_record(result: HANResult, mechanism: str = "han") -> AttentionRecord:
    """Returns the AttentionRecord of a HANResult.

    weights [S, W_max]: word α per sentence (rows zero-padded past each sentence's end);
    axes ("sentence", "word"); query_labels: the sentences; key_labels: word slots
    "w1".."wN" (the words differ per sentence; extras["words"] [S, W_max] holds each slot's
    word, "" for padding). Extras: sentence_weights [S], words, prediction [K] (one per head),
    probabilities_<head> [C], classes_<head> [C]. Meta: sentence_spread (normalised entropy of
    sentence α), no_opinion (the rule's verdict, None without one), attention_notice (what
    the page says beside the figure when no sentence stands out, else "") and outside_language
    (the text is mostly East Asian characters, which this English model never read).
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
            "notices": list(result.doc.notices) + _reading_notices(result.doc),
            "key_labels": "word slots w1..wN; extras 'words' holds each sentence's word per slot",
            "sentence_spread": round(float(result.spread), 4),
            "no_opinion": result.no_opinion,
            "even_attention": result.even,
            "attention_notice": _attention_notice(result),
            "outside_language": _outside_language(result.doc),
        },
        extras=extras,
    )


# The sentiment head's largest probability below which its prediction is "close to a guess": halfway
# between a guess (0.5, what reviews without an opinion were trained towards) and certainty (1.0).
# On the hand-written sets the reviews without an opinion reach 0.51-0.77; the even-attention reviews
# with an opinion 0.80 and more (docs/models/han.md).
GUESS = 0.75
EVEN_OPINIONS_NOTICE = (
    "No sentence stands out: the sentence attention is spread (normalised entropy {spread:.2f}, where 1 is even), "
    "yet the prediction is confident ({confidence:.0%} {label}). Several sentences weigh alike here, as when every "
    "sentence judges something; this model was trained on reviews with one or two opinion sentences among "
    "neutral ones, so reviews like this one are at the edge of what it knows."
)
NO_OPINION_NOTICE = (
    "No sentence stands out: the sentence attention is spread (normalised entropy {spread:.2f}, where 1 is even), "
    "as this model's attention is on reviews without an opinion. It found no opinion sentence here, so the "
    "highlighted sentence is no finding and the prediction is close to a guess."
)
SHORT_NOTICE = (
    "a hierarchical attention network reads documents of several sentences; with one sentence its sentence "
    "attention is 1 by construction, and a text this short is far from the reviews it was trained on"
)


def sentiment_head(heads: Sequence[tuple[str, Sequence[str]]]) -> int:
    """Returns the index of the "sentiment" head (the first head for a model without one)."""
    return next((i for i, (name, _) in enumerate(heads) if name == "sentiment"), 0)


def _attention_notice(result: HANResult) -> str:
    # Beside the figure when no sentence stands out: no opinion found, or opinions weighed alike.
    if result.no_opinion:
        return NO_OPINION_NOTICE.format(spread=result.spread)
    if result.even:
        head = sentiment_head(result.heads)
        p = np.asarray(result.probabilities[head])
        return EVEN_OPINIONS_NOTICE.format(spread=result.spread, confidence=float(p.max()),
                                           label=result.heads[head][1][int(p.argmax())])
    return ""


# Above this share of East Asian characters among a document's letters, the document is "mostly" in a
# language the model never read: a Chinese review with an English product name is still over it.
CJK_SHARE = 0.5
ENGLISH_NOTICE = (
    "this model reads English: it was trained on English reviews, through MiniLM, an English model. This text is "
    "mostly Chinese, Japanese or Korean characters, which it never saw in training, so its prediction and its "
    "attention here are outside what it knows"
)


def _outside_language(doc: Document) -> bool:
    # Whether the document is mostly East Asian characters (cjk_share), which the English model never read.
    return cjk_share(" ".join(doc.sentences)) > CJK_SHARE


def _reading_notices(doc: Document) -> list[str]:
    # Inputs far outside what the model knows: say so beside the figure.
    words = sum(len(w) for w in doc.words)
    notices = [ENGLISH_NOTICE] if _outside_language(doc) else []
    return notices + ([SHORT_NOTICE] if len(doc.sentences) < 2 or words < 4 else [])


def han_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Registry builder: the committed HAN's attention over options["text"]."""
    return result_record(default_predictor().analyse(options["text"]), mechanism.id)


def han_records(mechanism, options_list: list[Mapping[str, Any]]) -> list[AttentionRecord]:
    """Batch builder: one record per options dict (documents run in batches)."""
    docs = [encode_document(options["text"]) for options in options_list]
    return [result_record(r, mechanism.id) for r in default_predictor().run_batch(docs)]


def probability_record(record: AttentionRecord, head: str) -> AttentionRecord:
    """Returns the ("class",) record of one head's class probabilities [C] (its bar chart)."""
    return AttentionRecord(
        mechanism=record.mechanism, weights=np.asarray(record.extras[f"probabilities_{head}"], np.float32),
        axes=("class",), query_labels=(head,), key_labels=tuple(str(c) for c in record.extras[f"classes_{head}"]),
        meta={"head": head, "prediction": record.meta["prediction"][head], "shown": "class probabilities"},
    )


def sentence_score_record(record: AttentionRecord) -> AttentionRecord:
    """Returns the ("sentence",) record of each sentence's score u_iᵀu_s before the softmax."""
    return AttentionRecord(
        mechanism=record.mechanism, weights=np.asarray(record.extras["sentence_scores"], np.float32),
        axes=("sentence",), query_labels=("u_s",), key_labels=record.query_labels,
        meta={"shown": "sentence scores against the context vector u_s (before the softmax)"},
    )


def context_word_record(mechanism_id: str, predictor: HANPredictor, k: int) -> AttentionRecord:
    """Returns the ("word",) record of the k highest- then the k lowest-scoring words against u_w.

    Words: those of the predictor's reference reviews, each scored in its sentence
    (HANPredictor.context_word_scores). The order is the chart's: top words descending, then
    the bottom words from the least low to the lowest.
    """
    words, scores = predictor.context_word_scores()
    order = np.argsort(scores, kind="stable")
    top, bottom = order[::-1][:k], order[:k][::-1]
    picked = np.concatenate([top, bottom])
    return AttentionRecord(
        mechanism=mechanism_id, weights=scores[picked].astype(np.float32), axes=("word",), query_labels=("u_w",),
        key_labels=tuple(words[i] for i in picked),
        meta={"shown": f"top and bottom {k} of the {len(words):,} words of {REFERENCE_DOCUMENTS} generated reviews, "
                       "each scored in its sentence against u_w (before the softmax)"},
    )


def document_word_weights(record: AttentionRecord) -> tuple[list[str], np.ndarray]:
    """Returns (the document's words in order, float32 [N]: each word's share of the document,
    α_i · α_it, summing to 1 over the document)."""
    words = np.asarray(record.extras["words"])
    sentence = np.asarray(record.extras["sentence_weights"], np.float64)
    labels, weights = [], []
    for i in range(words.shape[0]):
        for j in range(words.shape[1]):
            if words[i, j] != "":
                labels.append(str(words[i, j]))
                weights.append(sentence[i] * float(record.weights[i, j]))
    return labels, np.asarray(weights, np.float32)
