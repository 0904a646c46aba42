"""AppTest for the feed-forward attention page: both variants, the T slider, chosen marks, bad marks."""

import re

import numpy as np

from models.feedforward.task import make_sequence
from tests.pages.conftest import chart_data, chart_specs, open_page


def test_page_shows_both_variants_and_the_slider_changes_the_figures():
    at = open_page("pages/feedforward.py")
    assert not at.exception
    assert at.title[0].value == "Feed-forward attention"
    # one figure, one row per model on a shared time axis: traces (α, marked steps) per row
    assert len(chart_specs(at)) == 1
    spec = chart_specs(at)[0]
    assert [t["yaxis"] for t in spec["data"]] == ["y", "y", "y2", "y2"]
    assert spec["layout"]["yaxis"]["domain"][0] > spec["layout"]["yaxis2"]["domain"][1]  # paper form on top
    paper, unbounded = chart_data(at, 0, "y", trace=0), chart_data(at, 0, "y", trace=2)
    assert paper.shape == unbounded.shape == (1_000,)
    np.testing.assert_allclose([paper.sum(), unbounded.sum()], 1.0, rtol=1e-4)
    _, marked, target = make_sequence(1_000, seed=0)
    assert chart_data(at, 0, "x", trace=3).tolist() == list(marked)  # the highlighted steps
    assert unbounded[list(marked)].sum() > 0.9 and paper.max() < 7.5 / 1_000 * 1.1
    # One α scale for both rows, so the paper form's peaks are drawn as small as the text calls them.
    assert spec["layout"]["yaxis"]["range"] == spec["layout"]["yaxis2"]["range"]
    assert paper.max() < 0.05 * spec["layout"]["yaxis"]["range"][1]
    assert any("Both rows share one α scale" in m.value for m in at.markdown)
    legend = next(m.value for m in at.markdown if "the sequence's length" in m.value)
    assert "2 to 10,000" in legend and at.slider(key="length").min == 2 and at.slider(key="length").max == 10_000
    # Both models' numbers in one table: the target once, then each model's prediction and α on the marks.
    table = next(m.value for m in at.markdown if m.value.startswith("| |"))
    assert "| **Paper form** | **Unbounded score** |" in table.splitlines()[0]
    assert f"(target: the sum, {target:+.3f})" in table
    marked_row = next(line for line in table.splitlines() if line.startswith("| α on the two marked steps"))
    shares = [float(x) for x in re.findall(r"\*\*([\d.]+)%\*\*", marked_row)]
    np.testing.assert_allclose(shares, [100 * paper[list(marked)].sum(), 100 * unbounded[list(marked)].sum()], atol=0.006)
    assert any("e² ≈ 7.4" in m.value for m in at.markdown)

    at.slider(key="length").set_value(300).run()
    assert not at.exception
    assert chart_data(at, 0, "y", trace=0).shape == chart_data(at, 0, "y", trace=2).shape == (300,)
    table = next(m.value for m in at.markdown if m.value.startswith("| |"))
    # The model trained nearest to T, in a learner's words (no internal file name, no timing).
    assert "the model trained on T₀ = 100, the length nearest to T" in table
    assert "paper-T" not in table and " ms" not in table


def test_chosen_marks_move_the_highlight_and_bad_marks_give_one_line():
    at = open_page("pages/feedforward.py")
    at.slider(key="length").set_value(200).run()
    at.radio(key="placement").set_value("chosen").run()
    at.number_input(key="mark_a").set_value(150).run()
    at.number_input(key="mark_b").set_value(20).run()
    assert not at.exception
    assert chart_data(at, 0, "x", trace=1).tolist() == chart_data(at, 0, "x", trace=3).tolist() == [20, 150]
    at.number_input(key="mark_b").set_value(500).run()  # past T − 1: drawn at the last step, and said
    assert not at.exception and not at.error
    assert chart_data(at, 0, "x", trace=1).tolist() == [150, 199]
    assert any(c.value.startswith("Steps 150 and 500 do not both fit in T = 200 steps (0…199); the marks are at "
                                  "150 and 199.") for c in at.caption)
    at.number_input(key="mark_b").set_value(150).run()
    assert "the two marked steps must differ" in at.error[0].value


def test_chosen_marks_on_a_short_sequence_move_inside_it():
    # The default marks are 3 and 42: a sequence of 20 steps once gave only an error, and a link too.
    at = open_page("pages/feedforward.py")
    at.slider(key="length").set_value(20).run()
    at.radio(key="placement").set_value("chosen").run()
    assert not at.exception and not at.error
    assert chart_data(at, 0, "x", trace=1).tolist() == [3, 19]
    at.number_input(key="mark_a").set_value(30).run()  # both past the end: they stay apart
    assert chart_data(at, 0, "x", trace=1).tolist() == [18, 19]
    table = next(m.value for m in at.markdown if m.value.startswith("| |"))
    assert "| α on the two marked steps |" in table
