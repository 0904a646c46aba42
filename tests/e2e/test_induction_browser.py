"""The Induction heads page in Chromium: the snapshot slider changes the head's pattern (and the
URL), typed tokens change the copy view."""

import time

import pytest

from tests.e2e.conftest import open_page, plotly_traces, pushed_margins, wait_for_change, wait_idle

pytestmark = pytest.mark.e2e

LONG_WAIT = 300_000  # a cold server loads the model and compiles first
HEAD, COPY = 1, 2


def test_snapshot_slider_and_typed_tokens_change_the_figures(page, app_url):
    before = open_page(page, app_url, "induction", "Induction heads", charts=3, timeout=LONG_WAIT)
    assert len(before[HEAD][0]["z"]) == 63  # [BOS] + r + r, r of 31 tokens
    # The margins reserved for the 63 token labels held: plotly.js drew each map once, not twice.
    margins = pushed_margins(page)
    assert margins[HEAD] == {} and margins[COPY] == {}, margins

    # The head view's training step (the typed sequence's own step slider is further down).
    slider = page.locator('[data-testid="stSlider"]').filter(has_text="Training step (a snapshot)").first \
        .locator('input[type="range"]')
    slider.focus()
    slider.press("ArrowLeft")  # the final weights -> the snapshot before them
    earlier = wait_for_change(page, before, 120, chart=HEAD)
    assert earlier[HEAD][0]["z"] != before[HEAD][0]["z"]
    wait_idle(page)
    assert "ind_step=" in page.url  # the view is in the link
    time.sleep(0.5)  # the rerun draws the charts one after the other: take them all once it is done
    wait_idle(page)
    earlier = plotly_traces(page)
    assert len(earlier[COPY][0]["z"]) == 11  # the default example: [BOS] + 10 tokens

    box = page.get_by_label("Your tokens")
    box.fill("x b cat q x b")
    box.press("Enter")
    typed = wait_for_change(page, earlier, 120, chart=COPY)
    assert len(typed[COPY][0]["z"]) == 7
    wait_idle(page)
