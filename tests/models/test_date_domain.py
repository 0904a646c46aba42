"""`looks_like_a_date`: in the models' domain exactly when the training generator can write the text.

The seq2seq (Bahdanau/Luong) and encoder–decoder Transformer date models were trained on
`models.seq2seq.task.sample`; the pages add OUTSIDE_NOTICE to a record whose input fails the check.
"""

import datetime as dt

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.registry import get_mechanism
from models.seq2seq import task as dates

FIRST, LAST = dt.date(dates.YEARS[0], 1, 1), dt.date(dates.YEARS[1], 12, 31)

# What the tester found: confidently wrong output and no notice.
TESTER_EXAMPLES = ["03/03/1998", "12/25/2019", "25/12/2019", "\u202e2018-05-09"]

# Invisible format and control characters around or inside training strings.
INVISIBLE = ["\u202e", "\u202d", "\u200b", "\u200c", "\u200d", "\u200e", "\u2060", "\ufeff", "\u00ad", "\t", "\x00",
             "\r", "\n", "\u00a0", "\u3000"]

# Hand-written strings in the training formats (3 March 1998 was a Tuesday).
IN_DOMAIN = [
    "3 March 1998", "03 March 1998", "March 3, 1998", "March 3rd 1998", "3rd of March 1998",
    "Tuesday, March 3, 1998", "Tue 3 Mar 1998", "3.3.1998", "03.03.1998", "1998-3-3", "1998/03/03",
    "1998年3月3日", "3 mars 1998", "9 May 2018", "2018-12-25", "25.12.2019", "December 25th 2019",
    "22nd of November 2001", "11th of May 2012", "Sat 1 Jan 2000",
    # the generator's case and spacing variants: the whole text lower or upper case, a space doubled
    "march 3, 1998", "MARCH 3RD 1998", "3 MARS 1998", "TUE 3 MAR 1998", "3  March  1998", "Tuesday,  March 3,  1998",
    "1950-1-1", "2049/12/31",
]

# Hand-written strings in formats (or with values) the generator never writes.
OUT_OF_DOMAIN = [
    # slashes in day/month order, other separators, padding the format does not use
    "3/3/1998", "03/03/1998", "9/5/2018", "12/25/2019", "3-Mar-1998", "1998-03-03", "1998.03.03", "1998/3/3",
    "3.03.1998", "03.3.1998", "3 Mar 1998", "Mar 3, 1998", "March 3 1998", "3 March, 1998", "3rd March 1998",
    "March 03, 1998", "3-3-1998", "19980303", "1998 03 03", "Wednesday 9 May 2018", "Wed, 9 May 2018",
    "le 9 mai 2018", "May 2018 the 9th", "9 de mayo de 2018", "9. Mai 2018",
    # case the generator never writes (it writes the whole text as-is, lower or upper case)
    "3 mARCH 1998", "3 Mars 1998", "March 3RD 1998", "TUESDAY, March 3, 1998",
    # spacing: three spaces, a space where the format has none, leading or trailing space
    "3   March 1998", "1998 -3-3", " 3 March 1998", "3 March 1998 ",
    # years outside 1950–2049, two-digit years, dates that do not exist, contradictions
    "1949-12-31", "2050-1-1", "9999-12-31", "March 3, 98", "3.3.98", "31 February 2018", "1998-2-29",
    "Monday, March 3, 1998", "Mon 3 Mar 1998", "3th of March 1998", "March 3st 1998", "1998-13-1", "1998-0-1",
    # not dates
    "banana", "tomorrow", "hello world", "I was born in 1990", "in 2150 on 3 May", "Meeting at 10:30 on Friday",
    "", "   ", "2018", "May 2018", "9 May", "<img src=x onerror=alert(1)>",
    # full-width digits (str.isdigit() is true for them; the model reads them as <unk>)
    "２０１８-5-9", "2018年５月9日",
]


@pytest.mark.parametrize("text", TESTER_EXAMPLES)
def test_the_testers_examples_are_flagged(text):
    assert not dates.looks_like_a_date(text)


@pytest.mark.parametrize("text", ["banana", "tomorrow", "9999-12-31", "March 3, 98"])
def test_what_was_flagged_stays_flagged(text):
    assert not dates.looks_like_a_date(text)


@pytest.mark.parametrize("text", IN_DOMAIN)
def test_hand_written_dates_in_the_training_formats_pass(text):
    assert dates.looks_like_a_date(text)


@pytest.mark.parametrize("text", OUT_OF_DOMAIN)
def test_hand_written_text_outside_the_training_formats_fails(text):
    assert not dates.looks_like_a_date(text)


@pytest.mark.parametrize("char", INVISIBLE)
def test_invisible_characters_make_a_training_string_fail(char):
    for fmt in dates.FORMAT_IDS:
        text = dates.render(fmt, dt.date(2018, 5, 9)).source
        assert dates.looks_like_a_date(text)
        for i in (0, len(text) // 2, len(text)):
            assert not dates.looks_like_a_date(text[:i] + char + text[i:]), (fmt, i, char)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_every_generated_training_string_passes(seed):
    examples = dates.generate(100, seed)
    assert all(dates.looks_like_a_date(e.source) for e in examples), [e.source for e in examples
                                                                         if not dates.looks_like_a_date(e.source)]


@settings(max_examples=500, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_training_stream_passes(seed):
    # The training loop's own call: sample(rng, batch) from one generator, several batches.
    rng = np.random.default_rng(seed)
    for _ in range(3):
        assert all(dates.looks_like_a_date(e.source) for e in dates.sample(rng, 16))


@settings(max_examples=1000, deadline=None)
@given(fmt=st.sampled_from(dates.FORMAT_IDS), date=st.dates(FIRST, LAST), case=st.sampled_from(dates.CASES),
       doubles=st.lists(st.booleans(), max_size=8))
def test_every_rendering_the_sampler_can_draw_passes(fmt, date, case, doubles):
    assert dates.looks_like_a_date(dates.render(fmt, date, case=case, double_spaces=tuple(doubles)).source)


@pytest.mark.parametrize("fmt", dates.FORMAT_IDS)
def test_every_day_of_the_range_passes_in_every_format(fmt):
    day = FIRST
    while day <= LAST:
        for case in dates.CASES:
            assert dates.looks_like_a_date(dates.render(fmt, day, case=case).source), (fmt, day, case)
        day += dt.timedelta(days=5)


@settings(max_examples=500, deadline=None)
@given(fmt=st.sampled_from(dates.FORMAT_IDS), date=st.dates(FIRST, LAST), data=st.data())
def test_one_changed_separator_or_invisible_character_is_flagged(fmt, date, data):
    text = dates.render(fmt, date).source
    i = data.draw(st.integers(0, len(text) - 1))
    char = data.draw(st.sampled_from([*INVISIBLE, "/", "-", ".", ",", "x", "０"]))
    changed = text[:i] + char + text[i + 1:]
    if changed != text:
        assert not dates.looks_like_a_date(changed), (text, changed)


# Every character the generator writes: each format and case on every day of a year (each month,
# weekday, day number and ordinal suffix).
WRITTEN = frozenset("".join(dates.render(fmt, dt.date(2001, 1, 1) + dt.timedelta(days=d), case=case).source
                            for fmt in dates.FORMAT_IDS for case in dates.CASES for d in range(365)))


@st.composite
def a_rendering_with_one_more_character(draw):
    text = dates.render(draw(st.sampled_from(dates.FORMAT_IDS)), draw(st.dates(FIRST, LAST)),
                        case=draw(st.sampled_from(dates.CASES))).source
    i = draw(st.integers(0, len(text)))
    return text[:i] + draw(st.characters()) + text[i:]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=60), a_rendering_with_one_more_character()))
def test_any_text_gets_a_yes_or_no_and_a_character_the_generator_never_writes_is_a_no(text):
    verdict = dates.looks_like_a_date(text)
    assert type(verdict) is bool, verdict
    if set(text) - WRITTEN or text != text.strip():  # e.g. full-width digits, a zero-width space, a space at an end
        assert verdict is False, text


def test_the_notice_names_the_domain():
    assert "does not look like a date" in dates.OUTSIDE_NOTICE  # what the pages' tests look for
    assert f"{len(dates.FORMATS)} formats" in dates.OUTSIDE_NOTICE
    assert str(dates.YEARS[0]) in dates.OUTSIDE_NOTICE and str(dates.YEARS[1]) in dates.OUTSIDE_NOTICE


@pytest.mark.parametrize("mechanism", ["bahdanau", "luong-general", "transformer-cross"])
def test_records_of_the_testers_examples_carry_the_notice(mechanism):
    build = get_mechanism(mechanism).build
    for text in TESTER_EXAMPLES:
        notices = build({"text": text}).meta["notices"]
        assert dates.OUTSIDE_NOTICE in notices, (text, notices)
    rtl = build({"text": "\u202e2018-05-09"}).meta["notices"]
    assert any("\\u202e" in n for n in rtl)  # the <unk> notice names the invisible character
    assert dates.OUTSIDE_NOTICE not in build({"text": "2018/05/09"}).meta["notices"]
