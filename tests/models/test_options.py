"""Typed options: what each kind accepts, and the one-line messages for what it refuses."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from models import options as o
from models.record import InputError

TAU = o.TEMPERATURE  # 0.05..10
N = o.SAMPLES  # 1..2000


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_a_float_option_returns_exactly_the_values_in_range_and_refuses_the_rest(x):
    if math.isfinite(x) and TAU.low <= x <= TAU.high:
        assert TAU.read(x) == x and TAU.read(repr(x)) == x
    else:
        with pytest.raises(InputError, match=r"^temperature must be a number from 0.05 to 10, got") as info:
            TAU.read(x)
        assert "\n" not in str(info.value)


@given(st.one_of(st.integers(-10**12, 10**12), st.floats(allow_nan=False, allow_infinity=False)))
def test_an_int_option_takes_whole_numbers_in_range_only(x):
    whole = float(x).is_integer()
    if whole and N.low <= x <= N.high:
        assert N.read(x) == int(x) and N.read(str(int(x))) == int(x)
    else:
        with pytest.raises(InputError, match="samples must be a whole number from 1 to 2,000"):
            N.read(x)


def test_defaults_choices_pairs_labels_and_required():
    assert TAU.read(None) == 1.0 and TAU.read("") == 1.0
    assert N.read(np.int64(5)) == 5
    with pytest.raises(InputError):
        N.read(True)
    assert o.MODE.read(" sample ") == "sample"
    with pytest.raises(InputError, match="mode must be one of soft, argmax, sample, got 'maybe'"):
        o.MODE.read("maybe")
    pair = o.Option("marked", "pair", help="two steps")
    assert pair.read("3, 42") == (3, 42) and pair.read("r2c7") == (2, 7) and pair.read([1, 2]) == (1, 2)
    with pytest.raises(InputError, match="two whole numbers"):
        pair.read("1,2,3")
    labels = o.Option("labels", "labels", help="labels")
    assert labels.read("a, b") == ("a", "b") and labels.read(["x" * 99]) == ("x" * o.MAX_LABEL_CHARS,)
    with pytest.raises(InputError, match="at most 64 labels"):
        labels.read(",".join("x" * 65))
    with pytest.raises(InputError, match=r"give the text \(--text\)"):
        o.TEXT.read(None)
    with pytest.raises(InputError, match="must be text"):
        o.TEXT.read(12)
    with pytest.raises(InputError, match="too long"):
        o.Option("query", "vector", help="q").read("1," * 6000)


def test_read_all_names_unknown_options_and_the_ones_it_takes():
    declared = (TAU, N)
    assert o.read_all(declared, {"samples": "3"}, owner="m") == {"temperature": 1.0, "samples": 3}
    with pytest.raises(InputError, match="m does not take --text-pair; it takes --temperature, --samples"):
        o.read_all(declared, {"text_pair": "x"}, owner="m")


def test_cut_text_says_where_it_was_cut():
    assert o.cut_text("abc", 5) == ("abc", None)
    text, notice = o.cut_text("x" * 60_001)
    assert len(text) == o.MAX_TEXT_CHARS and notice == "the text was cut to its first 50,000 of 60,001 characters"


def test_declarations_are_checked_when_made():
    with pytest.raises(ValueError, match="unknown kind"):
        o.Option("x", "colour")
    with pytest.raises(ValueError, match="needs low and high"):
        o.Option("x", "int")
    with pytest.raises(ValueError, match="needs choices"):
        o.Option("x", "choice")
    assert o.Option("text_pair", "text").flag == "--text-pair"
