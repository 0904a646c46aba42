"""The feed-forward attention page in Chromium: T to 1,001 and 10,000, both rows redraw, each drawn once; screenshot."""

import pytest

from tests.e2e.conftest import open_page, plotly_traces, pushed_margins, screenshot_path, wait_for_change, wait_idle

pytestmark = pytest.mark.e2e


def test_length_slider_to_10000_redraws_both_rows(page, app_url):
    open_page(page, app_url, "feedforward", "Feed-forward attention", charts=1)
    before = plotly_traces(page)
    assert [len(trace["y"]) for trace in before[0]] == [1_000, 2, 1_000, 2]  # α and marks, per model
    assert page.get_by_role("button", name="Export").count() == 1
    # The top margin reserved for the legend over the plot held: plotly.js drew the figure once.
    assert pushed_margins(page) == [{}]

    slider = page.locator('[data-testid="stSlider"] input[type="range"]').first
    slider.focus()
    # At T = 1,001 the time axis ends just past its tick at 1,000, whose label reaches past the plot
    # area: the right margin reserved for it held too (viz.margins), so that draw was also the only one.
    slider.press("ArrowRight")
    page.get_by_text("α over 1,001 steps").first.wait_for(timeout=60_000)
    wait_idle(page)
    assert pushed_margins(page) == [{}]
    slider.press("End")
    page.get_by_text("α over 10,000 steps").first.wait_for(timeout=60_000)
    after = wait_for_change(page, before, timeout=60)
    wait_idle(page)
    after = plotly_traces(page)
    assert [len(trace["y"]) for trace in after[0]] == [10_000, 2, 10_000, 2]  # the marked steps stay highlighted
    page.get_by_text("the model trained on T₀ = 10,000, the length nearest to T").first.wait_for()  # the table followed

    page.mouse.move(0, 0)
    page.screenshot(path=screenshot_path("feedforward.png"))
