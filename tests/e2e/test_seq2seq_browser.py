"""The Seq2seq alignment page in Chromium: type a date, switch variant, move D, screenshot."""

import json
import time

import pytest

from models.seq2seq.bottleneck import BUCKETS
from tests.e2e.conftest import open_page, plotly_traces, pushed_margins, screenshot_path, wait_for_charts, wait_idle

pytestmark = pytest.mark.e2e
# Whether chart i draws a legend whose box meets no title's box (the chart's and its axes').
LEGEND_CLEAR_OF_TITLES = """i => {
    const gd = document.querySelectorAll('.js-plotly-plot')[i], legend = gd.querySelector('.legend');
    if (!legend) return 'no legend';
    const a = legend.getBoundingClientRect();
    return Array.from(gd.querySelectorAll('.g-xtitle text, .g-ytitle text, .g-gtitle text'), t => t.getBoundingClientRect())
        .every(b => a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top); }"""


def wait_for_main_change(page, before, timeout: float = 240.0) -> list:
    """Returns the charts once the main heatmap (chart 0, trace 0) differs from `before`."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        now = plotly_traces(page)
        if now and now[0] and json.dumps(now[0][0]) != json.dumps(before[0][0]):
            return now
        time.sleep(0.3)
    raise AssertionError("the main heatmap did not change")


def test_type_date_switch_variant_move_window(page, app_url):
    # The first visit loads and compiles three models (slow on a busy 2-core machine): wait longer.
    before = open_page(page, app_url, "seq2seq", "Seq2seq alignment", charts=3, timeout=300_000)
    assert len(before[0][0]["x"]) == len("Wednesday, May 9, 2018")
    assert pushed_margins(page)[0] == {}  # the main map's label margins were reserved: drawn once
    # The compare view's local-m panel has a legend (its windows' centres p_t): it clears the axis
    # titles and the margins held for it too.
    assert page.evaluate(LEGEND_CLEAR_OF_TITLES, 2) is True
    assert pushed_margins(page)[2] == {}

    box = page.get_by_label("Date to normalise (or anything)")
    box.fill("2018/05/09")
    box.press("Enter")
    typed = wait_for_main_change(page, before)
    assert len(typed[0][0]["x"]) == len("2018/05/09")
    page.get_by_text("2018-05-09").first.wait_for(timeout=30_000)
    wait_idle(page)

    page.locator('[data-testid="stRadio"]').filter(has_text="Attention variant").get_by_text(
        "Luong local-p (predictive)", exact=True).click()
    switched = wait_for_main_change(page, typed)
    assert switched[0][0]["z"] != typed[0][0]["z"]
    assert any(len(trace["x"]) == 10 for trace in switched[0][1:]), "the p_t markers are drawn"
    wait_idle(page)
    page.screenshot(path=screenshot_path("seq2seq.png"))  # local-p at the trained D = 3

    slider = page.locator('[data-testid="stSlider"] input[type="range"]').first
    slider.focus()
    for _ in range(3):
        slider.press("ArrowLeft")  # D 3 -> 0 is clamped at 1: a narrower window
    narrowed = wait_for_main_change(page, switched)
    assert narrowed[0][0]["z"] != switched[0][0]["z"]
    wait_idle(page)

    # The lower sections are views, one drawn at a time: picking one draws its figures.
    page.get_by_test_id("stButtonGroup").get_by_role("radio", name="Compare two inputs").click()
    wait_for_charts(page, 4, timeout=120_000)  # the main map, A, B and their difference
    wait_idle(page)
    page.get_by_text("Second date (B)").first.wait_for(timeout=30_000)
    page.get_by_test_id("stButtonGroup").get_by_role("radio", name="Watch it learn").click()
    wait_for_charts(page, 2, timeout=120_000)
    wait_idle(page)
    page.get_by_text("Output at step").first.wait_for(timeout=30_000)
    # the other views' figures go: the main map and the training step's are left
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length === 2", timeout=60_000)


def test_no_attention_draws_its_context_vector_and_the_bottleneck_view_its_curve(page, app_url):
    before = open_page(page, app_url, "seq2seq", "Seq2seq alignment", charts=3, timeout=300_000)
    page.locator('[data-testid="stRadio"]').filter(has_text="Attention variant").get_by_text(
        "No attention (last state)", exact=True).click()
    switched = wait_for_main_change(page, before)
    assert switched[0][0]["z"] is None and len(switched[0][0]["x"]) == 64  # bars of c: 32 forward + 32 backward units
    page.get_by_text("there is no α to draw").first.wait_for(timeout=30_000)
    wait_idle(page)
    page.get_by_test_id("stButtonGroup").get_by_role("radio", name="Why attention: the bottleneck").click()
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length === 2", timeout=120_000)
    wait_idle(page)
    curve = plotly_traces(page)[1]
    assert len(curve) == 3 and all(len(t["x"]) == len(BUCKETS) for t in curve)  # three models, every length bucket
    page.get_by_text("Exact match against input length").first.wait_for(timeout=30_000)
    assert page.evaluate(LEGEND_CLEAR_OF_TITLES, 1) is True
