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
import string
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from models.record import InputError
from models.text import N_, Notice

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


# How each format is written: literal text and {fields} in str.format syntax. The generator
# writes from this table and the domain check (looks_like_a_date) reads with it, so the two
# cannot drift apart. Each space is a separate piece that the sampler may double.
LAYOUTS: dict[str, str] = {
    "d-month-y": "{d} {month} {y}",
    "dd-month-y": "{dd} {month} {y}",
    "month-d-y": "{month} {d}, {y}",
    "month-ord-y": "{month} {d}{ord} {y}",
    "ord-of-month-y": "{d}{ord} of {month} {y}",
    "weekday-month-d-y": "{weekday}, {month} {d}, {y}",
    "wd-d-mon-y": "{wd} {d} {mon} {y}",
    "d.m.y": "{d}.{m}.{y}",
    "dd.mm.y": "{dd}.{mm}.{y}",
    "y-m-d": "{y}-{m}-{d}",
    "y/mm/dd": "{y}/{mm}/{dd}",
    "chinese": "{y}年{m}月{d}日",
    "french": "{d} {mois} {y}",
}

# field -> (role, writer): the role is the part of the date the field spells ("year", "month",
# "day"; None for the weekday and the ordinal suffix, which no output character comes from).
_FIELDS: dict[str, tuple[str | None, Callable[[dt.date], str]]] = {
    "y": ("year", lambda date: str(date.year)),
    "d": ("day", lambda date: str(date.day)),
    "dd": ("day", lambda date: f"{date.day:02d}"),
    "m": ("month", lambda date: str(date.month)),
    "mm": ("month", lambda date: f"{date.month:02d}"),
    "month": ("month", lambda date: MONTHS[date.month - 1]),
    "mon": ("month", lambda date: MONTHS_SHORT[date.month - 1]),
    "mois": ("month", lambda date: MONTHS_FR[date.month - 1]),
    "ord": (None, lambda date: _ordinal(date.day)),
    "weekday": (None, lambda date: WEEKDAYS[date.weekday()]),
    "wd": (None, lambda date: WEEKDAYS_SHORT[date.weekday()]),
}


def _layout(fmt: str) -> list[tuple[str, str | None]]:
    """Returns the layout of `fmt` as ("text", literal) and ("field", name) items, each space its own literal."""
    items: list[tuple[str, str | None]] = []
    for literal, field, _, _ in string.Formatter().parse(LAYOUTS[fmt]):
        items += [("text", part) for part in re.split("( )", literal) if part]
        if field is not None:
            items.append(("field", field))
    return items


def _pieces(fmt: str, date: dt.date) -> list[tuple[str, str | None]]:
    """Returns the source as (text, role) pieces; role is "year", "month", "day" or None."""
    pieces: list[tuple[str, str | None]] = []
    for kind, value in _layout(fmt):
        if kind == "text":
            pieces.append((value, None))
        else:
            role, write = _FIELDS[value]
            pieces.append((write(date), role))
    return pieces


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
_DOUBLE_SPACE_FLAGS = 8  # the sampler may double each of a format's first 8 spaces


def sample(rng: np.random.Generator, n: int, fmt: str | None = None) -> list[DateExample]:
    """Returns n random examples: uniform date in YEARS, format, case and spacing.

    All random numbers are drawn in a few vectorised calls (the training loop calls this
    every step).
    """
    days = rng.integers(_FIRST_DAY, _LAST_DAY + 1, size=n)
    formats = rng.integers(len(FORMAT_IDS), size=n)
    cases = rng.choice(len(CASES), size=n, p=_CASE_P)
    doubles = rng.random((n, _DOUBLE_SPACE_FLAGS)) < _DOUBLE_SPACE_P
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
        raise InputError("the text is empty; type a date such as 'Wednesday, May 9, 2018'")
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
        notes.append(Notice(N_("the input is capped at {limit} characters; the rest was cut off"), limit=MAX_INPUT_CHARS))
    if encoded.unknown:
        shown = ", ".join(repr(c) for c in encoded.unknown)
        notes.append(Notice(N_("characters outside the vocabulary were read as {unknown}: {shown}"), unknown=UNK,
                            shown=shown))
    return notes


def date_note(output: str) -> str | None:
    """Returns a note when the decoded output is not a real calendar date, else None."""
    try:
        dt.date.fromisoformat(output)
    except ValueError:
        return Notice(N_("'{output}' is not a real calendar date; the model's output is shown as is"), output=output)
    return None


def _spellings() -> dict[str, dict[str, int | None]]:
    """Returns, per field, every spelling the generator writes (lower case) -> the value of its role.

    Read off the writers over Jan 1 of every year in YEARS and every day of one year, which covers
    every year, month, day of the month and weekday.
    """
    days = [dt.date(y, 1, 1) for y in range(YEARS[0], YEARS[1] + 1)]
    days += [dt.date.fromordinal(o) for o in range(_FIRST_DAY, dt.date(YEARS[0], 12, 31).toordinal() + 1)]
    out: dict[str, dict[str, int | None]] = {}
    for name, (role, write) in _FIELDS.items():
        seen: dict[str, int | None] = {}
        for day in days:
            spelling, value = write(day).lower(), (getattr(day, role) if role else None)
            if seen.setdefault(spelling, value) != value:
                raise ValueError(f"field {name!r} writes {spelling!r} for two {role}s: it cannot be read back")
            if spelling.strip() != spelling or not spelling:
                raise ValueError(f"field {name!r} writes {spelling!r}: spaces belong to the layout")
        out[name] = seen
    return out


_SPELLINGS = _spellings()


def _reader(fmt: str) -> tuple[re.Pattern, tuple[str | None, ...]]:
    """Returns the pattern that reads `fmt` (a group per field and per space) and each group's field.

    Loose on purpose (any case, one or two spaces): looks_like_a_date keeps a match only when
    render writes exactly the text back.
    """
    regex, groups = "", []
    for kind, value in _layout(fmt):
        if kind == "text" and value == " ":
            regex += "( {1,2})"
            groups.append(None)
        elif kind == "text":
            regex += re.escape(value)
        else:
            regex += "(" + "|".join(map(re.escape, sorted(_SPELLINGS[value], key=len, reverse=True))) + ")"
            groups.append(value)
    return re.compile(regex, re.IGNORECASE), tuple(groups)


_READERS = {fmt: _reader(fmt) for fmt in FORMAT_IDS}

OUTSIDE_NOTICE = Notice(
    N_("this does not look like a date the model knows: it was trained only on real dates from {first} to {last}, "
       "written exactly in one of {count} formats (such as {examples}), so its output and attention may mean "
       "nothing here, however confident they look"),
    first=YEARS[0], last=YEARS[1], count=len(FORMATS),
    examples=", ".join(f"'{FORMATS[f]}'" for f in ("d-month-y", "month-ord-y", "dd.mm.y", "y-m-d", "y/mm/dd")),
)


def _written_by_generator(text: str, fmt: str) -> bool:
    """Returns whether render(fmt, ...) writes `text` for some date in YEARS, case and spacing."""
    pattern, groups = _READERS[fmt]
    match = pattern.fullmatch(text)
    if match is None:
        return False
    values: dict[str, int] = {}
    doubles = []
    for field, spelled in zip(groups, match.groups()):
        if field is None:
            doubles.append(len(spelled) == 2)
            continue
        role, value = _FIELDS[field][0], _SPELLINGS[field].get(spelled.lower())
        if role is not None and values.setdefault(role, value) != value:
            return False
    if any(doubles[_DOUBLE_SPACE_FLAGS:]) or set(values) != {"year", "month", "day"}:
        return False
    try:
        date = dt.date(values["year"], values["month"], values["day"])
    except (TypeError, ValueError):  # no such day (31 February)
        return False
    if not _FIRST_DAY <= date.toordinal() <= _LAST_DAY:
        return False
    return any(render(fmt, date, case=case, double_spaces=tuple(doubles)).source == text for case in CASES)


def looks_like_a_date(text: str) -> bool:
    """Returns whether the date models were trained on text like this: whether the training generator
    (sample) can write exactly `text`.

    That is: a real date from YEARS written in one of the FORMATS as LAYOUTS lays it out (its
    separators, month names or numbers, zero padding, four-digit year, weekday and ordinal suffix
    those of that very date), the whole text as-is, lower or upper case, each space single or
    doubled, nothing before or after. Anything else — day/month order or separators no format
    uses, a two-digit year, mixed case, an invisible or control character, a stray space — is
    outside what the models know, however close it looks.
    """
    text = str(text)
    return any(_written_by_generator(text, fmt) for fmt in FORMAT_IDS)



def decoding_notices(source: EncodedSource, output: str) -> list[str]:
    """Returns the one-line notices about one decoding: how the input was read, whether it looks like
    the training dates, and whether the output is a real calendar date."""
    notices = source_notices(source)
    if not looks_like_a_date(source.text):
        notices.append(OUTSIDE_NOTICE)
    note = date_note(output)
    if note:
        notices.append(note)
    return notices
