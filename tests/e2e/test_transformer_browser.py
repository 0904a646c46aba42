"""The Transformer page in Chromium: a deep link on the shared server, the decoding-step slider, a view switch."""

import time

import pytest

from tests.e2e.conftest import plotly_traces, pushed_margins, wait_for_change, wait_for_charts, wait_idle

pytestmark = pytest.mark.e2e

CHARTS = 7


def wait_for_chart_shape(page, index: int, shape: tuple[int, int], timeout: float = 60.0) -> list:
    """Returns the charts once chart `index` (trace 0) is a map of `shape` rows and columns, or the
    charts as they are when `timeout` runs out (the caller's assertion then names what was drawn)."""
    deadline = time.time() + timeout
    while True:
        now = plotly_traces(page)
        z = now[index][0]["z"] if len(now) > index and now[index] else None
        if (z and (len(z), len(z[0])) == shape) or time.time() > deadline:
            return now
        time.sleep(0.3)


def test_step_slider_and_views_change_the_figures(page, app_url):
    page.goto(f"{app_url}/transformer?tf_position=2")  # a link that opens decoding step 2
    page.get_by_text("Transformer: three kinds of attention").first.wait_for(timeout=300_000)
    wait_for_charts(page, CHARTS, timeout=300_000)
    wait_idle(page, timeout=300_000)
    before = plotly_traces(page)
    assert len(before) == CHARTS
    assert pushed_margins(page) == [{}] * CHARTS  # every chart drawn once: its label margins were reserved
    assert len(before[2][0]["z"][0]) == 3, "the link's step 2: <s> and two characters written"

    slider = page.locator('[data-testid="stSlider"] input[type="range"]').first
    slider.focus()
    slider.press("ArrowRight")
    stepped = wait_for_change(page, before, 120, chart=2)
    assert len(stepped[2][0]["z"][0]) == 4
    wait_idle(page)
    assert "tf_position=3" in page.url

    page.get_by_test_id("stButtonGroup").get_by_role("radio", name="Cross-attention").click()
    wait_for_change(page, stepped, 120, chart=0)
    # The rerun can pass through an intermediate draw (the charts of the view being left); the test reads
    # the charts once the script has finished and the first chart holds the cross-attention map.
    wait_idle(page)
    crossed = wait_for_chart_shape(page, 0, (10, len("9 May 2018")))
    assert len(crossed[0][0]["z"]) == 10 and len(crossed[0][0]["z"][0]) == len("9 May 2018")
