"""The date generator: formats, true spans, weekdays, case/spacing variants, encoding."""

import calendar
import datetime as dt

import numpy as np
import pytest

from models.record import InputError
from models.seq2seq import task as dates

MAY_9_2018 = dt.date(2018, 5, 9)


@pytest.mark.parametrize("fmt, example", list(dates.FORMATS.items()))
def test_every_format_renders_the_issue_example(fmt, example):
    ex = dates.render(fmt, MAY_9_2018)
    assert ex.source == example
    assert ex.target == "2018-05-09"


def test_thirteen_formats_and_the_monotonic_ones():
    assert len(dates.FORMATS) == 13
    assert set(dates.MONOTONIC_FORMATS) == {"y-m-d", "y/mm/dd", "chinese"}


def _month_of(text: str) -> int:
    folded = text.lower()
    for names in (dates.MONTHS, dates.MONTHS_SHORT, dates.MONTHS_FR):
        lowered = [n.lower() for n in names]
        if folded in lowered:
            return lowered.index(folded) + 1
    return int(text)


def test_spans_point_at_year_month_and_day():
    examples = dates.generate(1500, seed=123)
    for ex in examples:
        assert len(ex.target) == dates.OUTPUT_LENGTH == len(ex.spans)
        year, month, day = (ex.source[s:e] for s, e in (ex.spans[0], ex.spans[5], ex.spans[8]))
        assert int(year) == ex.date.year, ex
        assert _month_of(month) == ex.date.month, ex
        assert int(day) == ex.date.day, ex
        # every digit of a field shares the field's span; separators have none
        assert len({ex.spans[i] for i in range(4)}) == 1
        assert ex.spans[5] == ex.spans[6] and ex.spans[8] == ex.spans[9]
        assert ex.spans[4] == ex.spans[7] == dates.NO_SPAN
        assert ex.target == ex.date.isoformat()


def test_spans_of_a_known_example():
    ex = dates.render("weekday-month-d-y", MAY_9_2018)  # "Wednesday, May 9, 2018"
    assert ex.spans[0] == (18, 22) and ex.source[18:22] == "2018"
    assert ex.spans[5] == (11, 14) and ex.source[11:14] == "May"
    assert ex.spans[8] == (15, 16) and ex.source[15:16] == "9"
    ordinal = dates.render("ord-of-month-y", dt.date(1999, 12, 23))  # "23rd of December 1999"
    assert ordinal.source == "23rd of December 1999"
    assert ordinal.spans[8] == (0, 2)  # the digits, not the "rd"


def test_weekdays_are_right():
    for ex in dates.generate(1500, seed=5):
        if ex.format == "weekday-month-d-y":
            word = ex.source.split(",")[0].strip()
            assert word.lower() == calendar.day_name[calendar.weekday(*ex.date.timetuple()[:3])].lower(), ex
        elif ex.format == "wd-d-mon-y":
            word = ex.source.split()[0]
            assert word.lower() == calendar.day_abbr[ex.date.weekday()].lower(), ex
    assert dates.render("weekday-month-d-y", dt.date(1969, 7, 20)).source.startswith("Sunday")  # Moon landing
    assert dates.render("wd-d-mon-y", dt.date(2000, 1, 1)).source.startswith("Sat")


def test_dotted_dates_are_day_month_year():
    ex = dates.render("d.m.y", dt.date(2003, 4, 11))
    assert ex.source == "11.4.2003"
    assert dates.render("dd.mm.y", dt.date(2003, 4, 1)).source == "01.04.2003"


def test_chinese_and_french():
    assert dates.render("chinese", dt.date(1987, 12, 3)).source == "1987年12月3日"
    assert dates.render("french", dt.date(1987, 8, 3)).source == "3 août 1987"
    assert dates.render("french", dt.date(1987, 2, 3), case="upper").source == "3 FÉVRIER 1987"


def test_years_formats_cases_and_spacing_all_occur():
    examples = dates.generate(1500, seed=9)
    years = [e.date.year for e in examples]
    assert min(years) >= 1950 and max(years) <= 2049
    assert min(years) < 1955 and max(years) > 2044
    assert {e.format for e in examples} == set(dates.FORMAT_IDS)
    sources = [e.source for e in examples if e.format == "d-month-y"]
    assert any(s == s.lower() for s in sources) and any(s == s.upper() for s in sources)
    assert any("  " in e.source for e in examples)
    assert all(len(e.source) <= dates.MAX_INPUT_CHARS for e in examples)


def test_generator_is_seeded():
    a, b, c = dates.generate(50, 3), dates.generate(50, 3), dates.generate(50, 4)
    assert [e.source for e in a] == [e.source for e in b]
    assert [e.source for e in a] != [e.source for e in c]


def test_encode_unknown_truncation_and_empty():
    enc = dates.encode_source("9 May 2018 ☃")
    assert enc.labels[-1] == dates.UNK and enc.unknown == ("☃",)
    assert enc.ids[-1] == dates.SOURCE_VOCAB.index(dates.UNK)
    assert "☃" in dates.source_notices(enc)[0]
    long = dates.encode_source("9 May 2018 " * 10)
    assert long.truncated and len(long.ids) == dates.MAX_INPUT_CHARS
    assert "40 characters" in dates.source_notices(long)[0]
    with pytest.raises(InputError, match="empty"):
        dates.encode_source("   ")
    every = dates.generate(500, 1)
    assert all(dates.encode_source(e.source).unknown == () for e in every)


def test_targets_round_trip_and_impossible_dates():
    ids = dates.encode_target("2018-05-09")
    assert ids.dtype == np.int32 and dates.decode_target(ids) == "2018-05-09"
    assert dates.date_note("2018-02-31") is not None
    assert dates.date_note("2018-02-28") is None


def test_dates_the_model_knows_and_text_it_does_not():
    import json
    from pathlib import Path

    examples = dates.generate(2000, 4242)
    assert all(dates.looks_like_a_date(e.source) for e in examples)  # every generated format, case and spacing
    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "han_plain_reviews.json"
    sentences = [s for r in json.loads(fixture.read_text())["reviews"] for s in r["text"].split(". ")]
    assert not any(dates.looks_like_a_date(s) for s in sentences)
    for text in ("hello world", "Meeting at 10:30 on Friday", "I was born in 1990", "in 2150 on 3 May"):
        assert not dates.looks_like_a_date(text), text
    # A year and a month are not enough: these are in no training format, and the models misread
    # them (Bahdanau: "May 2018 the 9th" -> 1904-05-28, "9/5/2018" -> 2018-05-21).
    for text in ("May 2018 the 9th", "9/5/2018", "le 9 mai 2018"):
        assert not dates.looks_like_a_date(text), text
    for text in ("9 May 2018", "2018/05/09", "9 mai 2018", "Wednesday, May 9, 2018"):
        assert dates.looks_like_a_date(text), text
