"""The truth a date model knows: for a generated date (models/seq2seq/task.py), which source characters each
output character comes from. Sure links: the field's own characters (the generator's spans); possible links:
also the separators (spaces, commas, slashes, dots), which hold no date and which a model may park on; the two
'-' of the output come from nowhere and are not scored. The explanation page and the scoreboard read these."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from models.explain.measures import alignment_error_rate
from models.seq2seq import task as dates


def truth(example: dates.DateExample, sources: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Returns (sure, possible) bool [10, S] and the scored rows bool [10] of one generated date (S: the source's
    characters, or `sources` columns)."""
    width = len(example.source) if sources is None else sources
    columns = np.arange(width)
    spans = np.asarray(example.spans)
    rows = spans[:, 0] >= 0
    sure = (columns[None] >= spans[:, :1]) & (columns[None] < spans[:, 1:]) & rows[:, None]
    separators = np.asarray([not ch.isalnum() for ch in example.source.ljust(width)[:width]])
    return sure, sure | (separators[None] & rows[:, None]), rows


def aer(maps: Sequence[np.ndarray], examples: Sequence[dates.DateExample]) -> float:
    """Returns the corpus AER of maps [10, S_i] (one per example) against each example's truth."""
    parts = [truth(e, np.shape(m)[-1]) for m, e in zip(maps, examples)]
    return alignment_error_rate(maps, [p[0] for p in parts], [p[1] for p in parts], [p[2] for p in parts])
