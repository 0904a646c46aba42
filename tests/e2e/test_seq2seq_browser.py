"""The Seq2seq alignment page in Chromium: type a date, switch variant, move D, screenshot."""

from pathlib import Path

import pytest

from tests.e2e.conftest import open_page, plotly_traces, wait_for_change, wait_idle

pytestmark = pytest.mark.e2e

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_type_date_switch_variant_move_window(page, app_url):
    open_page(page, app_url, "seq2seq", "Seq2seq alignment", charts=4)
    before = plotly_traces(page)
    assert len(before[0][0]["x"]) == len("Wednesday 9 May 2018")

    box = page.get_by_label("Date to normalise (or anything)")
    box.fill("2018/05/09")
    box.press("Enter")
    typed = wait_for_change(page, before, timeout=90)
    assert len(typed[0][0]["x"]) == len("2018/05/09")
    page.get_by_text("2018-05-09").first.wait_for(timeout=30_000)
    wait_idle(page)

    page.locator('[data-testid="stSelectbox"]').first.click()
    page.get_by_role("option", name="Luong local-p (predictive)").click()
    switched = wait_for_change(page, typed, timeout=90)
    assert switched[0][0]["z"] != typed[0][0]["z"]
    assert any(len(trace["x"]) == 10 for trace in switched[0][1:]), "the p_t markers are drawn"
    wait_idle(page)

    slider = page.locator('[data-testid="stSlider"] input[type="range"]').first
    slider.focus()
    for _ in range(3):
        slider.press("ArrowLeft")  # D 3 -> 0 is clamped at 1: a narrower window
    narrowed = wait_for_change(page, switched, timeout=90)
    assert narrowed[0][0]["z"] != switched[0][0]["z"]
    wait_idle(page)

    DOCS.mkdir(exist_ok=True)
    page.screenshot(path=str(DOCS / "seq2seq.png"))
