"""The Sentence alignment page in Chromium: paraphrases align, local window and D change the map."""

import pytest

from tests.e2e.conftest import plotly_traces, wait_for_change, wait_idle

pytestmark = pytest.mark.e2e

TITLE = "Sentence-pair alignment with pretrained embeddings"
LONG_WAIT = 300_000  # a cold server loads the model and compiles first


def argmax_label(trace, row_label):
    row = trace["z"][trace["y"].index(row_label)]
    return trace["x"][row.index(max(row))]


def test_paraphrases_align_and_the_window_changes_the_map(page, app_url):
    page.goto(f"{app_url}/sentence_alignment", timeout=LONG_WAIT)
    page.get_by_text(TITLE).first.wait_for(timeout=LONG_WAIT)
    page.wait_for_function(
        "() => { const el = document.querySelector('.js-plotly-plot'); return el && el._fullData && el._fullData.length; }",
        timeout=LONG_WAIT,
    )
    wait_idle(page, timeout=LONG_WAIT)
    (trace,) = plotly_traces(page)[0]
    assert argmax_label(trace, "cat") == "cat" and argmax_label(trace, "mat") == "rug"
    # wait_for raises if the element never shows; the table is drawn on a canvas, so no text to read.
    page.get_by_text("Best-aligned pairs").first.wait_for(state="visible", timeout=60_000)
    page.locator('[data-testid="stDataFrame"]').first.wait_for(state="visible", timeout=60_000)

    before = plotly_traces(page)
    page.get_by_text("Local (p_t = t·S/T)").click()
    local = wait_for_change(page, before, timeout=120)
    wait_idle(page, timeout=LONG_WAIT)
    assert any(v == 0 for row in local[0][0]["z"] for v in row)  # keys outside the window

    slider = page.locator('[data-testid="stSlider"] input[type="range"]').last
    slider.focus()
    # The view before the key presses: a fast rerun can redraw before a snapshot taken after them.
    before = plotly_traces(page)
    for _ in range(3):
        slider.press("ArrowRight")
    wider = wait_for_change(page, before, timeout=120)
    zeros = sum(v == 0 for row in wider[0][0]["z"] for v in row)
    assert zeros < sum(v == 0 for row in local[0][0]["z"] for v in row)
