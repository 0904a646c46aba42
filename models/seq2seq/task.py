"""Date normalisation: a seeded generator of free-form dates with their true alignment.

Every example is (source text, target ``YYYY-MM-DD``, spans): ``spans[i] = (start, end)`` is
the half-open source range output character i comes from — year digits from the year,
month digits from the month name or number, day digits from the day's digits (an ordinal
suffix such as "th" is not part of the span). The two '-' separators of the output come
from nowhere in the source: their span is (-1, -1) and alignment scores skip them.

numpy only: the pages, the CLI and the tests use it without importing jax.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

import numpy as np

from models.record import InputError

YEARS = (1950, 2049)
OUTPUT_LENGTH = 10  # YYYY-MM-DD
MAX_INPUT_CHARS = 40  # the model's input cap; longer text is truncated with a notice
NO_SPAN = (-1, -1)

MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)
MONTHS_SHORT = tuple(m[:3] for m in MONTHS)
MONTHS_FR = (
    "janvier", "février", "mars", "avril", "mai", "juin",
    "juillet", "août", "septembre", "octobre", "novembre", "décembre",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
WEEKDAYS_SHORT = tuple(w[:3] for w in WEEKDAYS)

# id -> example of 9 May 2018. Every format writes the year with four digits.
FORMATS: dict[str, str] = {
    "d-month-y": "9 May 2018",
    "dd-month-y": "09 May 2018",
    "month-d-y": "May 9, 2018",
    "month-ord-y": "May 9th 2018",
    "ord-of-month-y": "9th of May 2018",
    "weekday-month-d-y": "Wednesday, May 9, 2018",
    "wd-d-mon-y": "Wed 9 May 2018",
    "d.m.y": "9.5.2018",
    "dd.mm.y": "09.05.2018",
    "y-m-d": "2018-5-9",
    "y/mm/dd": "2018/05/09",
    "chinese": "2018年5月9日",
    "french": "9 mai 2018",
}
FORMAT_IDS = tuple(FORMATS)
# Formats whose day, month and year appear in the output's order (year, month, day):
# the only ones a monotonic window (local-m, p_t = t) can follow.
MONOTONIC_FORMATS = ("y-m-d", "y/mm/dd", "chinese")
CASES = ("as-is", "lower", "upper")

# Character vocabularies. Source: printable ASCII, the accented letters of French month
# names in both cases, the three Chinese date characters; anything else becomes <unk>.
PAD, UNK, BOS = "<pad>", "<unk>", "<s>"
_SOURCE_CHARS = [chr(c) for c in range(32, 127)] + list("éûÉÛ年月日")
SOURCE_VOCAB: tuple[str, ...] = (PAD, UNK, *_SOURCE_CHARS)
TARGET_VOCAB: tuple[str, ...] = (PAD, BOS, *"0123456789-")
_SOURCE_INDEX = {ch: i for i, ch in enumerate(SOURCE_VOCAB)}
_TARGET_INDEX = {ch: i for i, ch in enumerate(TARGET_VOCAB)}


@dataclass(frozen=True)
class DateExample:
    """One generated example: source text, ISO target and the source span of each output char."""

    source: str
    target: str
    spans: tuple[tuple[int, int], ...]  # OUTPUT_LENGTH × (start, end); NO_SPAN for '-'
    format: str
    date: dt.date


def _ordinal(day: int) -> str:
    if day in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def _pieces(fmt: str, date: dt.date) -> list[tuple[str, str | None]]:
    """Returns the source as (text, role) pieces; role is "year", "month", "day" or None."""
    y, m, d = str(date.year), date.month, date.day
    month, mon, fr = MONTHS[m - 1], MONTHS_SHORT[m - 1], MONTHS_FR[m - 1]
    weekday, wd = WEEKDAYS[date.weekday()], WEEKDAYS_SHORT[date.weekday()]
    day, day2, m1, m2 = str(d), f"{d:02d}", str(m), f"{m:02d}"
    sp = " "
    table: dict[str, list[tuple[str, str | None]]] = {
        "d-month-y": [(day, "day"), (sp, None), (month, "month"), (sp, None), (y, "year")],
        "dd-month-y": [(day2, "day"), (sp, None), (month, "month"), (sp, None), (y, "year")],
        "month-d-y": [(month, "month"), (sp, None), (day, "day"), (",", None), (sp, None), (y, "year")],
        "month-ord-y": [(month, "month"), (sp, None), (day, "day"), (_ordinal(d), None), (sp, None), (y, "year")],
        "ord-of-month-y": [(day, "day"), (_ordinal(d), None), (sp, None), ("of", None), (sp, None),
                           (month, "month"), (sp, None), (y, "year")],
        "weekday-month-d-y": [(weekday, None), (",", None), (sp, None), (month, "month"), (sp, None),
                              (day, "day"), (",", None), (sp, None), (y, "year")],
        "wd-d-mon-y": [(wd, None), (sp, None), (day, "day"), (sp, None), (mon, "month"), (sp, None), (y, "year")],
        "d.m.y": [(day, "day"), (".", None), (m1, "month"), (".", None), (y, "year")],
        "dd.mm.y": [(day2, "day"), (".", None), (m2, "month"), (".", None), (y, "year")],
        "y-m-d": [(y, "year"), ("-", None), (m1, "month"), ("-", None), (day, "day")],
        "y/mm/dd": [(y, "year"), ("/", None), (m2, "month"), ("/", None), (day2, "day")],
        "chinese": [(y, "year"), ("年", None), (m1, "month"), ("月", None), (day, "day"), ("日", None)],
        "french": [(day, "day"), (sp, None), (fr, "month"), (sp, None), (y, "year")],
    }
    return table[fmt]


def render(fmt: str, date: dt.date, *, case: str = "as-is", double_spaces: tuple[bool, ...] = ()) -> DateExample:
    """Returns the example of `date` written in format `fmt`.

    case: "as-is", "lower" or "upper" (applied to the letters). double_spaces: for the
    k-th space of the format, True writes two spaces instead of one (spacing variants).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    text, where, space_no = "", {}, 0
    for piece, role in _pieces(fmt, date):
        if piece == " ":
            if space_no < len(double_spaces) and double_spaces[space_no]:
                piece = "  "
            space_no += 1
        if case == "lower":
            piece = piece.lower()
        elif case == "upper":
            piece = piece.upper()
        if role is not None:
            where[role] = (len(text), len(text) + len(piece))
        text += piece
    target = date.isoformat()
    spans = tuple(
        where["year"] if i < 4 else where["month"] if i in (5, 6) else where["day"] if i in (8, 9) else NO_SPAN
        for i in range(OUTPUT_LENGTH)
    )
    return DateExample(text, target, spans, fmt, date)


_FIRST_DAY = dt.date(YEARS[0], 1, 1).toordinal()
_LAST_DAY = dt.date(YEARS[1], 12, 31).toordinal()
_CASE_P = (0.6, 0.2, 0.2)
_DOUBLE_SPACE_P = 0.1


def sample(rng: np.random.Generator, n: int, fmt: str | None = None) -> list[DateExample]:
    """Returns n random examples: uniform date in YEARS, format, case and spacing.

    All random numbers are drawn in a few vectorised calls (the training loop calls this
    every step).
    """
    days = rng.integers(_FIRST_DAY, _LAST_DAY + 1, size=n)
    formats = rng.integers(len(FORMAT_IDS), size=n)
    cases = rng.choice(len(CASES), size=n, p=_CASE_P)
    doubles = rng.random((n, 8)) < _DOUBLE_SPACE_P
    return [
        render(fmt or FORMAT_IDS[f], dt.date.fromordinal(int(d)), case=CASES[c], double_spaces=tuple(map(bool, dbl)))
        for d, f, c, dbl in zip(days, formats, cases, doubles)
    ]


def random_example(rng: np.random.Generator, fmt: str | None = None) -> DateExample:
    """Returns one random example (see sample)."""
    return sample(rng, 1, fmt)[0]


def generate(n: int, seed: int, fmt: str | None = None) -> list[DateExample]:
    """Returns n examples from the seeded stream `seed` (formats uniform unless `fmt` given)."""
    return sample(np.random.default_rng(seed), n, fmt)


# ----------------------------------------------------------------------------- encoding


@dataclass(frozen=True)
class EncodedSource:
    """One source string prepared for the model: ids, labels, and what was changed."""

    ids: np.ndarray  # int32 [T]
    labels: tuple[str, ...]  # one per position: the character, or <unk>
    text: str  # the (possibly truncated) text the model reads
    truncated: bool
    unknown: tuple[str, ...]  # distinct characters mapped to <unk>, in order of appearance


def encode_source(text: str, *, max_chars: int = MAX_INPUT_CHARS) -> EncodedSource:
    """Returns the ids of `text` (truncated to max_chars); InputError if it is empty."""
    text = str(text)
    if not text.strip():
        raise InputError("the text is empty; type a date such as 'Wednesday 9 May 2018'")
    truncated = len(text) > max_chars
    text = text[:max_chars]
    ids, labels, unknown = [], [], []
    for ch in text:
        index = _SOURCE_INDEX.get(ch)
        if index is None:
            index = _SOURCE_INDEX[UNK]
            if ch not in unknown:
                unknown.append(ch)
            labels.append(UNK)
        else:
            labels.append(ch)
        ids.append(index)
    return EncodedSource(np.asarray(ids, np.int32), tuple(labels), text, truncated, tuple(unknown))


def encode_target(target: str) -> np.ndarray:
    """Returns int32 [OUTPUT_LENGTH] ids of an ISO date string."""
    return np.asarray([_TARGET_INDEX[ch] for ch in target], np.int32)


def decode_target(ids) -> str:
    """Returns the characters of output ids (padding and <s> dropped)."""
    return "".join(TARGET_VOCAB[int(i)] for i in ids if int(i) > 1)


def source_notices(encoded: EncodedSource) -> list[str]:
    """Returns the one-line notices a user should see about how their text was read."""
    notes = []
    if encoded.truncated:
        notes.append(f"the input is capped at {MAX_INPUT_CHARS} characters; the rest was cut off")
    if encoded.unknown:
        shown = ", ".join(repr(c) for c in encoded.unknown)
        notes.append(f"characters outside the vocabulary were read as {UNK}: {shown}")
    return notes


def date_note(output: str) -> str | None:
    """Returns a note when the decoded output is not a real calendar date, else None."""
    try:
        dt.date.fromisoformat(output)
    except ValueError:
        return f"'{output}' is not a real calendar date; the model's output is shown as is"
    return None


_YEAR = re.compile(r"(?<!\d)(19[5-9]\d|20[0-4]\d)(?!\d)")
_NUMBER = re.compile(r"(?<!\d)\d{1,2}(?!\d)")
_MONTH_WORDS = frozenset(m.lower() for m in (*MONTHS, *MONTHS_SHORT, *MONTHS_FR))
OUTSIDE_NOTICE = (
    "this does not look like a date the model knows (a year from 1950 to 2049 and a month): it was trained "
    "only on dates written in 13 formats, so its output and attention mean nothing here"
)


def looks_like_a_date(text: str) -> bool:
    """Returns whether text holds what every generated date holds: a four-digit year in 1950–2049
    and a month (an English or French month name or abbreviation, or another 1–2 digit number)."""
    text = str(text)
    if not _YEAR.search(text):
        return False
    words = {w.strip(".,").lower() for w in re.split(r"[\s/.\-年月日]+", text)}
    return bool(words & _MONTH_WORDS) or len(_NUMBER.findall(_YEAR.sub(" ", text))) >= 1
