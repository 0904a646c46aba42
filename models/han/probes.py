"""Probes for shortcuts: controlled variants of reviews, and what a HAN's attention does with them.

The material is frozen in tests/fixtures/han_probes.json (hand-written opinion sentences in
several domains, opinion sentences from the original generator's vocabulary, and neutral
sentences by kind), so every model is measured on exactly the same documents. Each probe
document has PROBE_SENTENCES sentences:

- position:  one opinion sentence at position p, the others neutral (of mixed kinds);
- neutral kind: the neutral sentences all of one kind (plain, colour, number, object, or the
  original generator's fillers), the opinion at a position that cycles;
- no opinion: the opinion sentence replaced by its neutral twin (opinion words swapped for
  neutral ones), so there is nothing to find: how peaked is the attention then?
- negation:  the opinion sentence negated ("was not delicious"): the sentiment flips.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from models.han.data import encode_document
from models.han.spread import sentence_spread

PROBE_MATERIAL = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "han_probes.json"
PROBE_SENTENCES = 4
KINDS = ("generator", "plain", "colour", "number", "object")
MIXED = ("plain", "colour", "number", "object")
COLUMNS = ("generated", "hand_written")
PEAKED = 0.5  # "confident on one sentence": its sentence α is at least this


@dataclass(frozen=True)
class ProbeDocument:
    """One probe document: its sentences, the opinion sentence (or None), the expected sentiment."""

    probe: str
    sentences: tuple[str, ...]
    opinion: int | None
    sentiment: str | None

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


def load_probe_material(path: Path = PROBE_MATERIAL) -> dict:
    """Returns the probe fixture: hand_written, generated (opinion items) and neutral (by kind)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _with_opinion(rng: random.Random, opinion: str, position: int, pool: Sequence[str]) -> tuple[str, ...]:
    neutrals = rng.sample(list(pool), PROBE_SENTENCES - 1)
    return tuple(neutrals[:position] + [opinion] + neutrals[position:])


def probe_documents(material: dict, column: str, seed: int = 0) -> list[ProbeDocument]:
    """Returns every probe document of one column ("generated" or "hand_written"), seeded."""
    rng = random.Random(f"{column}-{seed}")
    items, neutral = material[column], material["neutral"]
    mixed = [s for kind in MIXED for s in neutral[kind]]
    docs = []
    for position in range(PROBE_SENTENCES):
        for item in items:
            docs.append(ProbeDocument(f"position {position + 1}", _with_opinion(rng, item["text"], position, mixed),
                                      position, item["sentiment"]))
    for kind in KINDS:
        for k, item in enumerate(items):
            position = k % PROBE_SENTENCES
            docs.append(ProbeDocument(f"neutral: {kind}", _with_opinion(rng, item["text"], position, neutral[kind]),
                                      position, item["sentiment"]))
    flipped = {"positive": "negative", "negative": "positive"}
    for k, item in enumerate(items):
        position = k % PROBE_SENTENCES
        docs.append(ProbeDocument("no opinion", _with_opinion(rng, item["neutral"], position, mixed), None, None))
        docs.append(ProbeDocument("negation", _with_opinion(rng, item["negated"], position, mixed), position,
                                  flipped[item["sentiment"]]))
    return docs


@dataclass(frozen=True)
class ProbeRow:
    """One probe's figures: top-sentence accuracy, mean opinion α, sentiment accuracy, and for
    documents without an opinion the mean max α, the share with max α >= PEAKED and the mean
    normalised entropy of sentence α (1 = spread evenly)."""

    probe: str
    documents: int
    top_sentence: float | None
    opinion_alpha: float | None
    sentiment: float | None
    max_alpha: float
    peaked: float
    spread: float


def probe_rows(predictor, docs: Sequence[ProbeDocument]) -> list[ProbeRow]:
    """Returns one ProbeRow per probe, in the order the probes first appear in docs."""
    results = predictor.run_batch([encode_document(d.text) for d in docs])
    by_probe: dict[str, list] = {}
    for doc, result in zip(docs, results):
        assert len(result.doc.sentences) == PROBE_SENTENCES, doc.sentences
        by_probe.setdefault(doc.probe, []).append((doc, result))
    rows = []
    for probe, pairs in by_probe.items():
        alphas = [np.asarray(r.sentence_alpha) for _, r in pairs]
        has_opinion = pairs[0][0].opinion is not None
        top = [int(np.argmax(a)) == d.opinion for (d, _), a in zip(pairs, alphas)] if has_opinion else None
        opinion_alpha = [float(a[d.opinion]) for (d, _), a in zip(pairs, alphas)] if has_opinion else None
        sentiment = [r.predictions[0] == d.sentiment for d, r in pairs] if has_opinion else None
        rows.append(ProbeRow(
            probe, len(pairs),
            float(np.mean(top)) if top else None,
            float(np.mean(opinion_alpha)) if opinion_alpha else None,
            float(np.mean(sentiment)) if sentiment else None,
            float(np.mean([a.max() for a in alphas])),
            float(np.mean([a.max() >= PEAKED for a in alphas])),
            float(np.mean([sentence_spread(a) for a in alphas])),
        ))
    return rows


def probe_table(predictor, material: dict | None = None) -> dict[str, list[ProbeRow]]:
    """Returns {column: [ProbeRow, ...]} for both columns of the probe fixture."""
    material = material or load_probe_material()
    return {column: probe_rows(predictor, probe_documents(material, column)) for column in COLUMNS}


def _cell(row: ProbeRow) -> str:
    if row.top_sentence is None:
        return f"max α {row.max_alpha:.2f}; max α ≥ {PEAKED} in {row.peaked:.0%}; spread {row.spread:.2f}"
    return f"top {row.top_sentence:.0%}, α {row.opinion_alpha:.2f}, sentiment {row.sentiment:.0%}"


def probe_markdown(table: dict[str, list[ProbeRow]]) -> str:
    """Returns the probe table as Markdown: one row per probe, one column per probe column."""
    lines = ["| probe (4-sentence documents) | generated opinions | hand-written opinions |", "|---|---|---|"]
    for generated, hand in zip(table["generated"], table["hand_written"]):
        lines.append(f"| {generated.probe} ({generated.documents} / {hand.documents}) | {_cell(generated)} | {_cell(hand)} |")
    return "\n".join(lines)
