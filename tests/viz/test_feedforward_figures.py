"""The feed-forward α figure: the uniform line's label sits on its line on both axes, log ticks are
written out, and the figure's own texts come through gettext."""

import math

import numpy as np
import pytest

from models.record import AttentionRecord
from viz.feedforward import alpha_over_time, log_ticks
from viz.i18n_text import gettext_for


def _record(length: int = 1_000) -> AttentionRecord:
    alpha = np.full(length, 0.5 / (length - 2), np.float32)
    alpha[[3, 42]] = 0.25
    return AttentionRecord(mechanism="feedforward", weights=alpha, axes=("time",), query_labels=("c",),
                           key_labels=tuple(f"t{t}" for t in range(length)), extras={"marked": np.array([3, 42])})


@pytest.mark.parametrize("log_y", [False, True])
def test_the_uniform_label_sits_on_its_line(log_y):
    fig = alpha_over_time(_record(), log_y=log_y)
    line = next(s for s in fig.layout.shapes if s.xref == "x domain")
    label = next(a for a in fig.layout.annotations if a.text == "uniform 1/T")
    assert line.y0 == pytest.approx(1e-3)
    # An annotation on a log axis is placed at the log of its value, a shape at the value itself.
    assert label.y == pytest.approx(math.log10(1e-3) if log_y else 1e-3) and label.yanchor == "bottom"


def test_log_ticks_are_one_and_three_times_powers_of_ten_over_the_range():
    ticks = log_ticks(np.array([0.00095, 0.0072]))
    assert ticks["tickvals"] == pytest.approx([0.001, 0.003, 0.01]) and ticks["ticktext"] == ["0.001", "0.003", "0.01"]
    assert log_ticks(np.zeros(3)) == {}
    fig = alpha_over_time(_record(), log_y=True)
    assert fig.layout.yaxis.tickmode == "array" and fig.layout.yaxis.type == "log"


def test_the_figures_own_texts_are_translated():
    fig = alpha_over_time(_record(), log_y=True, gettext=gettext_for("zh"))
    texts = [fig.layout.xaxis.title.text, fig.data[1].name, *[a.text for a in fig.layout.annotations]]
    assert "time step t" not in texts and "marked steps" not in texts and "uniform 1/T" not in texts
    assert fig.layout.xaxis.title.text == gettext_for("zh")("time step t") != "time step t"


def _two_rows(length: int = 1_000) -> AttentionRecord:
    # The paper form (tanh score: peaks at most e² ≈ 7.4 times the rest) above the unbounded score.
    paper = np.full(length, 1.0, np.float32)
    paper[[3, 42]] = 7.0
    unbounded = np.full(length, 0.1 / (length - 2), np.float32)
    unbounded[[3, 42]] = 0.45
    weights = np.stack([paper / paper.sum(), unbounded])
    return AttentionRecord(mechanism="feedforward", weights=weights, axes=("model", "time"), query_labels=("paper", "unbounded"),
                           key_labels=tuple(f"t{t}" for t in range(length)), extras={"marked": np.array([3, 42])})


@pytest.mark.parametrize("log_y", [False, True])
def test_the_rows_share_one_alpha_scale(log_y):
    # Each row scaled to its own peak drew the paper form's peaks of 0.007 as tall as the unbounded
    # score's 0.45: on one scale they are the small bumps the text says they are.
    record = _two_rows()
    fig = alpha_over_time(record, log_y=log_y)
    assert fig.layout.yaxis.range == fig.layout.yaxis2.range and fig.layout.yaxis2.matches == "y"
    low, high = fig.layout.yaxis.range
    peak = float(record.weights[0].max())
    if log_y:
        assert low <= math.log10(float(record.weights.min())) and high >= math.log10(0.45)
    else:
        assert low == 0 and high >= 0.45 and peak / high < 0.05  # the paper form's peak: under 5 % of the height
