"""Dates inside longer text: the length axis of the bottleneck experiment (models/seq2seq/bottleneck.py).

A date from the generator is written inside filler words, its true source spans shifted with it, so
exact match and alignment can be measured against input length.
"""

from __future__ import annotations

import numpy as np

from models.seq2seq import task as dates

# Filler for the bottleneck experiment: common lower-case words with no digit, and none a month,
# weekday, French month or "of" (words a date is written with), so the date is the only date in
# the text and its true spans stay known.
FILLER_WORDS = (
    "the", "a", "we", "will", "meet", "at", "noon", "near", "old", "station", "please", "bring", "your",
    "notes", "and", "some", "tea", "it", "was", "raining", "when", "letter", "came", "from", "our", "office",
    "in", "town", "she", "said", "that", "train", "would", "be", "late", "again", "so", "take", "bus", "after",
    "lunch", "before", "dinner", "on", "this", "day", "call", "me", "if", "plans", "change", "garden", "river",
    "bridge", "market", "opens", "early", "closes", "around", "evening", "book", "shop", "coffee", "quiet",
)
_DATE_WORDS = {w.lower() for w in (*dates.MONTHS, *dates.MONTHS_SHORT, *dates.MONTHS_FR, *dates.WEEKDAYS,
                                   *dates.WEEKDAYS_SHORT, "of")}
if _DATE_WORDS & set(FILLER_WORDS):
    raise ValueError(f"filler words that spell a date: {sorted(_DATE_WORDS & set(FILLER_WORDS))}")


def _filler(rng: np.random.Generator, n: int) -> str:
    """Returns exactly n characters of filler words separated by single spaces ("" for n = 0)."""
    text = ""
    while len(text) < n:
        text += (" " if text else "") + FILLER_WORDS[int(rng.integers(len(FILLER_WORDS)))]
    text = text[:n]
    head, _, cut = text.rpartition(" ")
    if cut.lower() in _DATE_WORDS:  # a word cut short can spell one ("market" → "mar"): another word's start
        cut = next(w[: len(cut)] for w in FILLER_WORDS if len(w) >= len(cut) and w[: len(cut)] not in _DATE_WORDS)
        text = f"{head} {cut}" if head else cut
    return text


def in_text(example: dates.DateExample, rng: np.random.Generator, length: int) -> dates.DateExample:
    """Returns `example` written inside filler text, `length` characters in all (at least the date's own
    length): filler words before and after it (a random share on each side, a space between the filler
    and the date), spans shifted to the date's new place."""
    extra = max(0, length - len(example.source))
    before = int(rng.integers(extra + 1))
    after = extra - before
    # A side's filler ends in the space that separates it from the date: one character is the space alone.
    prefix = _filler(rng, before - 1) + " " if before else ""
    suffix = " " + _filler(rng, after - 1) if after else ""
    shift = len(prefix)
    spans = tuple(dates.NO_SPAN if s == dates.NO_SPAN else (s[0] + shift, s[1] + shift) for s in example.spans)
    return dates.DateExample(prefix + example.source + suffix, example.target, spans, example.format, example.date)


def sample_in_text(rng: np.random.Generator, n: int, min_length: int, max_length: int) -> list[dates.DateExample]:
    """Returns n random dates (as dates.sample draws them), each inside filler text of a total length drawn
    uniformly from [min_length, max_length] (never shorter than the date itself)."""
    lengths = rng.integers(min_length, max_length + 1, size=n)
    return [in_text(e, rng, int(length)) for e, length in zip(dates.sample(rng, n), lengths)]
