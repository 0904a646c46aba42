"""Figures of "Inside a language model" (viz/lm_inside.py), looked at as objects; and the neuron section
(ui/neuron.py) driven alone by AppTest."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from models.lm.generate import generation_record
from models.lm.records import load_runner
from models.registry import get_mechanism
from viz.i18n_text import gettext_for
from viz.lm_inside import chosen_probabilities, generation_step, neuron_figure

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lm"
TEXT = "The cat sat on the mat. The cat"


@pytest.fixture(scope="module")
def generated():
    return generation_record(load_runner(FIXTURES / "llama"), TEXT, max_new=6)


def test_a_step_shows_each_heads_row_over_the_keys_before_it(generated):
    n = generated.meta["n_prompt"]
    fig = generation_step(generated, 2)
    z = np.asarray(fig.data[0].z)
    assert z.shape == (2 * 8, n + 2)  # every layer's heads; keys 0..query
    np.testing.assert_allclose(z[9], generated.weights[1, 1, n + 1, : n + 2])
    kinds = np.asarray(fig.data[0].customdata)[0]
    assert list(kinds[:n]) == ["prompt token"] * n and list(kinds[n:]) == ["generated token"] * 2
    assert fig.layout.shapes[0].x0 == n - 0.5  # the band over the generated keys
    one = generation_step(generated, 0, layers=[1])
    assert np.asarray(one.data[0].z).shape == (8, n) and not one.layout.shapes
    with pytest.raises(ValueError):
        generation_step(generated, 6)


def test_the_probability_chart_holds_the_chosen_tokens_and_alternatives(generated):
    fig = chosen_probabilities(generated, step=1)
    np.testing.assert_allclose(fig.data[0].y, generated.extras["chosen_prob"])
    assert len(fig.data) == 1 + generated.extras["top_probs"].shape[1]
    np.testing.assert_allclose(fig.data[1].y, generated.extras["top_probs"][:, 0])
    assert fig.data[0].marker.line.color[1] != fig.data[0].marker.line.color[0]


def test_the_neuron_figure_and_its_chinese_texts():
    record = get_mechanism("lm-neuron").build({"text": TEXT, "model_dir": str(FIXTURES / "llama"), "layer": 1, "head": 3})
    fig = neuron_figure(record, key=1)
    heat = [t for t in fig.data if t.type == "heatmap"]
    bars = [t for t in fig.data if t.type == "bar"]
    np.testing.assert_allclose(heat[2].z, record.extras["k"])
    np.testing.assert_allclose(heat[3].z, record.extras["product"])
    np.testing.assert_allclose(bars[1].x, record.weights)
    zh = neuron_figure(record, gettext=gettext_for("zh"))
    assert zh.layout.title.text != fig.layout.title.text


def _neuron_section_alone():
    from pathlib import Path

    from models.lm.neuron import neuron_parts
    from models.lm.records import load_runner
    from ui.neuron import neuron_section

    runner = load_runner(Path("tests/fixtures/lm/llama"))
    encoding = runner.encode("The cat sat on the mat")
    neuron_section(lambda layer, head, query: neuron_parts(runner.lm, encoding.ids, layer, head, query),
                   encoding.labels, 2, 8, "t_neuron")


def test_the_neuron_section_shows_the_chosen_keys_arithmetic():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_neuron_section_alone, default_timeout=120).run()
    assert not at.exception
    assert "softmax over the keys it may see" in at.markdown[0].value
    at.selectbox(key="t_neuron_query").set_value(1).run()
    at.selectbox(key="t_neuron_key").set_value(3).run()
    assert not at.exception and "may not see key" in at.markdown[0].value


def _zero_height(axis_range) -> float:
    low, high = axis_range
    return -low / (high - low)


@settings(max_examples=200, deadline=None)
@given(prob=hnp.arrays(np.float64, st.integers(1, 6), elements=st.floats(-1, 1, allow_subnormal=False)),
       loss=hnp.arrays(np.float64, st.integers(1, 6), elements=st.floats(-5, 5, allow_subnormal=False)))
def test_the_knockout_axes_share_their_zero_line_and_leave_room_over_the_bars(prob, loss):
    from viz.lm_lens import zero_aligned_ranges

    ranges = zero_aligned_ranges(prob, loss, headroom=0.12)
    assert _zero_height(ranges[0]) == pytest.approx(_zero_height(ranges[1]), abs=1e-9)
    for values, (low, high) in zip((prob, loss), ranges):
        assert low <= 0 <= high and high > low
        assert values.max() * 1.12 <= high + 1e-12 and values.min() * 1.12 >= low - 1e-12  # every bar inside, with room


def test_the_knockout_bars_figure_uses_the_aligned_ranges():
    from models.record import AttentionRecord
    from viz.lm_lens import knockout_bars

    record = AttentionRecord("lm-knockout", np.zeros((1, 1)), ("layer", "head"), ["0"], ["0"],
                             meta={"knockouts": ["0.1", "1.3"], "prob_change": [0.2, -0.1], "loss_change": [0.5, 1.5],
                                   "mode": "zero"})
    fig = knockout_bars(record)
    prob_range, loss_range = list(fig.layout.yaxis.range), list(fig.layout.yaxis2.range)
    assert _zero_height(prob_range) == pytest.approx(_zero_height(loss_range))
    assert fig.layout.yaxis2.tickmode == "auto"  # its own round ticks, not ticks at the left axis's grid lines
    assert prob_range[1] >= 0.2 * 1.12 and loss_range[1] >= 1.5 * 1.12 and prob_range[0] <= -0.1 * 1.12
