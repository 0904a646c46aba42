"""AppTest of the Induction heads page: the curves, one head at one snapshot, typed tokens, exports."""

import numpy as np

from models.induction.records import induction_head, snapshot_steps
from tests.pages.conftest import chart_data, chart_specs, markdown_text, open_page, opened_page
from tests.pages.exports import assert_export_is_the_figure, recording_exports

PAGE = "pages/induction.py"
CURVES, HEAD, COPY = 0, 1, 2


at = opened_page(PAGE, timeout=300)


def test_the_page_shows_the_curves_a_head_and_the_copy_view(at):
    assert at.title[0].value == "Induction heads"
    specs = chart_specs(at)
    assert len(specs) == 3
    kinds = [t["type"] for t in specs[CURVES]["data"]]
    assert kinds.count("heatmap") == 3 and kinds.count("scatter") >= 3  # three scores under the losses
    assert chart_data(at, CURVES, trace=kinds.index("heatmap")).shape[0] == 8  # every head
    head = chart_data(at, HEAD)
    assert head.shape == (63, 63)
    np.testing.assert_allclose(head.sum(1), 1.0, atol=1e-4)
    assert np.all(head[np.triu_indices(63, 1)] == 0)
    layer, head = induction_head()
    assert f"L{layer}H{head} at step {snapshot_steps()[-1]:,}" in specs[HEAD]["layout"]["title"]["text"]
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["4-token repeats copied"].rstrip("%")) >= 80  # short repeats are copied
    assert "**Next token predicted after your sequence:** `p`" in markdown_text(at)  # k dog m sun p … k dog m sun


def test_head_and_snapshot_pickers_change_the_pattern(at):
    before = chart_data(at, HEAD)
    layer, head = induction_head()
    at.radio(key="ind_head").set_value((head + 1) % 4).run()
    assert not at.exception
    other = chart_data(at, HEAD)
    assert not np.allclose(other, before)
    at.radio(key="ind_head").set_value(head).run()
    curves, copy = chart_specs(at)[CURVES], chart_data(at, COPY)
    at.select_slider(key="ind_step").set_value(0).run()
    assert not at.exception
    untrained = chart_data(at, HEAD)
    assert not np.allclose(untrained, before)
    assert "at step 0" in chart_specs(at)[HEAD]["layout"]["title"]["text"]
    assert any(c.value.startswith("Step 0: before the phase change") for c in at.caption)
    # The snapshot is this section's: the curves and the typed sequence's view stay as they were.
    assert chart_specs(at)[CURVES] == curves
    np.testing.assert_allclose(chart_data(at, COPY), copy)
    at.select_slider(key="ind_step").set_value(snapshot_steps()[-1]).run()
    np.testing.assert_allclose(chart_data(at, HEAD), before, atol=1e-6)
    assert any(c.value.startswith(f"Step {snapshot_steps()[-1]:,}: after the phase change") for c in at.caption)


def test_the_typed_sequence_has_its_own_snapshot(at):
    final = chart_data(at, COPY)
    head = chart_data(at, HEAD)
    at.select_slider(key="ind_text_step").set_value(0).run()
    assert not at.exception
    assert not np.allclose(chart_data(at, COPY), final)  # the untrained model reads elsewhere
    assert "at step 0" in markdown_text(at) and "step 0" in chart_specs(at)[COPY]["layout"]["title"]["text"]
    np.testing.assert_allclose(chart_data(at, HEAD), head)  # the head section keeps its snapshot
    at.select_slider(key="ind_text_step").set_value(snapshot_steps()[-1]).run()
    np.testing.assert_allclose(chart_data(at, COPY), final, atol=1e-6)


def test_every_step_of_the_length_slider_changes_the_sequence(at):
    slider = at.slider(key="ind_length")
    assert (slider.min, slider.max, slider.step, slider.value) == (3, 63, 2, 63)  # odd lengths: [BOS] + r + r
    before = chart_data(at, HEAD)
    slider.set_value(61).run()
    assert not at.exception and chart_data(at, HEAD).shape == (61, 61) != before.shape
    at.slider(key="ind_length").set_value(63).run()
    np.testing.assert_allclose(chart_data(at, HEAD), before, atol=1e-6)


def test_typed_tokens_are_continued_and_bad_tokens_get_one_line(at):
    at.text_input(key="ind_text").input("e cat w sky n bee h jam t map r car e cat w sky n bee h jam").run()
    assert not at.exception
    assert "after your sequence:** `t`" in markdown_text(at)  # what followed the earlier "jam"
    assert chart_data(at, COPY).shape == (21, 21)
    ticks = chart_specs(at)[COPY]["layout"]["yaxis"]["ticktext"]
    assert ticks[-1] == "jam → t"
    at.text_input(key="ind_text").input("x zebra <b>").run()
    assert not at.exception and len(at.error) == 1
    assert "'zebra'" in at.error[0].value and "\n" not in at.error[0].value


def test_every_export_is_its_figure(monkeypatch):
    calls = recording_exports(monkeypatch)
    at = open_page(PAGE, timeout=300)
    assert not at.exception
    seen = set()
    for key, record, fig in calls:
        if key.startswith("ind_"):
            assert assert_export_is_the_figure(key, record, fig) >= 1
            seen.add(key)
    assert seen == {"ind_curves", "ind_head_map", "ind_copy"}
