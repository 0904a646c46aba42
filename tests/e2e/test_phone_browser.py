"""Charts on a phone (390 × 844, touch), as Chromium draws them: on every page and every step of the tour
each chart fits its column or scrolls sideways in its own box with the fading right edge (ui/router.py's
style); a swipe over a chart scrolls its box and the page and zooms nothing; on a desk a mouse still drags
to zoom."""

import time

import pytest

from models.pages import FEEDFORWARD, PAGES, SELF_ATTENTION
from tests.e2e.conftest import open_page, wait_idle
from ui.tour import STEPS

pytestmark = pytest.mark.e2e

WAIT = 120_000
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
PATHS = [("" if page.default else page.url_path) for page in PAGES] + [
    f"start_here?step={number}" for number in range(1, len(STEPS) + 1)]

# Per chart: the figure's drawn width, its column (the element container's inner width) and how that box
# scrolls and fades; and whether the page itself scrolls sideways.
CHARTS = """() => ({
  charts: Array.from(document.querySelectorAll("[data-testid='stPlotlyChart']")).map(chart => {
    const box = chart.closest("[data-testid='stElementContainer']"), style = getComputedStyle(box);
    const svg = chart.querySelector('svg.main-svg');
    return {key: (Array.from(box.classList).find(k => k.startsWith('st-key-')) || '?').slice(7),
            figure: svg ? svg.getBoundingClientRect().width : 0, column: box.clientWidth, content: box.scrollWidth,
            right: box.getBoundingClientRect().right, overflow: style.overflowX,
            cue: (style.maskImage || style.webkitMaskImage || 'none') !== 'none'};
  }),
  pageWidth: Math.max(document.documentElement.scrollWidth,
                      ...Array.from(document.querySelectorAll("[data-testid='stMain']"), main => main.scrollWidth)),
  exception: document.querySelectorAll("[data-testid='stException']").length,
})"""
# Every chart drawn, and none still loading: a chart's element shows a skeleton until the browser has
# fetched Streamlit's plotly.js bundle (seconds, on a first visit).
DRAWN = """() => !document.querySelector("[data-testid='stMain'] [data-testid='stSkeleton']")
  && Array.from(document.querySelectorAll("[data-testid='stPlotlyChart']")).every(chart => {
    const plot = chart.querySelector('.js-plotly-plot'), svg = chart.querySelector('svg.main-svg');
    return plot && plot._fullLayout && svg && svg.getBoundingClientRect().width > 0; })"""


def chart_problems(measured: dict, width: int) -> list[str]:
    """Returns what is wrong with the charts of one page as CHARTS measured them at `width` px (nothing: [])."""
    found = [f"{measured['exception']} exception(s)"] if measured["exception"] else []
    if measured["pageWidth"] > width + 1:
        found.append(f"the page is {measured['pageWidth']} px wide")
    for c in measured["charts"]:
        fits = c["figure"] <= c["column"] + 1
        scrolls = c["content"] > c["column"] + 1 and c["content"] >= c["figure"] - 1 and c["overflow"] in ("auto", "scroll")
        if c["right"] > width + 1:
            found.append(f"{c['key']}: its box ends at {c['right']:.0f} px, off the screen")
        elif not fits and not scrolls:
            found.append(f"{c['key']}: {c['figure']:.0f} px in a {c['column']} px column that does not scroll to its end")
        elif not fits and not c["cue"]:
            found.append(f"{c['key']}: scrolls sideways with no fading edge")
    return found


def test_the_check_finds_a_cut_chart_a_silent_scroller_and_a_wide_page():
    chart = {"key": "k", "figure": 600.0, "column": 358, "content": 600, "right": 374.0, "overflow": "auto", "cue": True}
    page = {"charts": [chart], "pageWidth": 390, "exception": 0}
    assert chart_problems(page, 390) == []
    assert chart_problems({**page, "charts": [{**chart, "overflow": "visible", "content": 358}]}, 390) == [
        "k: 600 px in a 358 px column that does not scroll to its end"]
    assert chart_problems({**page, "charts": [{**chart, "cue": False}]}, 390) == ["k: scrolls sideways with no fading edge"]
    assert chart_problems({**page, "pageWidth": 600, "charts": [{**chart, "figure": 358.0, "right": 600.0}]}, 390) == [
        "the page is 600 px wide", "k: its box ends at 600 px, off the screen"]


@pytest.fixture(scope="module")
def phone(browser):
    """(context, page) of a phone: 390 × 844 px, touch, a coarse pointer."""
    context = browser.new_context(**PHONE)
    page = context.new_page()
    yield context, page
    context.close()


def open_on_phone(page, url: str) -> dict:
    """Opens `url` and returns CHARTS once the app is idle and every chart is drawn."""
    page.goto(url, timeout=WAIT)
    wait_idle(page, timeout=WAIT)
    page.wait_for_function(DRAWN, timeout=WAIT)
    page.wait_for_timeout(300)  # a fragment or a second run may follow the first
    wait_idle(page, timeout=WAIT)
    page.wait_for_function(DRAWN, timeout=WAIT)
    return page.evaluate(CHARTS)


def test_on_a_phone_every_chart_fits_its_column_or_scrolls_with_a_fading_edge(phone, app_url):
    _context, page = phone
    problems, count = {}, 0
    for path in PATHS:
        measured = open_on_phone(page, f"{app_url}/{path}")
        count += len(measured["charts"])
        if found := chart_problems(measured, PHONE["viewport"]["width"]):
            problems[path or "/"] = found
    assert problems == {}
    assert count >= len(PATHS), f"only {count} charts on {len(PATHS)} pages and steps"


# The box of the first chart that scrolls sideways: its scroll, the page's (the box's scrolling ancestor),
# every axis range of its plot, the cue's mask size, and plotly.js's notes ("Double-click to zoom back out").
SCROLLER = """() => Array.from(document.querySelectorAll("[data-testid='stPlotlyChart']"))
  .map(chart => chart.closest("[data-testid='stElementContainer']"))
  .find(box => box.scrollWidth > box.clientWidth + 1)"""
STATE = f"""() => {{ const box = ({SCROLLER})(); let outer = box.parentElement;
  while (outer && !(outer.scrollHeight > outer.clientHeight + 1 && /auto|scroll/.test(getComputedStyle(outer).overflowY)))
    outer = outer.parentElement;
  const layout = box.querySelector('.js-plotly-plot')._fullLayout;
  const drag = box.querySelector('.nsewdrag').getBoundingClientRect();
  return {{left: box.scrollLeft, top: (outer || document.scrollingElement).scrollTop,
          ranges: Object.keys(layout).filter(k => /^[xy]axis[0-9]*$/.test(k)).map(k => [k, ...layout[k].range]),
          mask: getComputedStyle(box).maskSize, notes: document.querySelectorAll('.plotly-notifier .notifier-note').length,
          drag: [drag.left, drag.top, drag.right, drag.bottom]}}; }}"""


def _swipe(cdp, x: float, y: float, dx: float, dy: float, steps: int = 8) -> None:
    # A finger put down at (x, y), moved by (dx, dy) over `steps` frames, lifted: Chromium's own touch input.
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for i in range(1, steps + 1):
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x + dx * i / steps, "y": y + dy * i / steps}]})
        time.sleep(0.016)
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


def _settled(page, before: dict, key: str, timeout: float = 3.0) -> dict:
    # STATE once `key` has stopped changing (a fling scrolls on for a while after the finger lifts).
    deadline, last = time.time() + timeout, before
    while time.time() < deadline:
        page.wait_for_timeout(250)
        now = page.evaluate(STATE)
        if now[key] == last[key] and now[key] != before[key]:
            return now
        last = now
    return last


def test_on_a_phone_a_swipe_over_a_chart_scrolls_and_zooms_nothing(phone, app_url):
    context, page = phone
    open_on_phone(page, f"{app_url}/{SELF_ATTENTION.url_path}")  # maps of tokens: they scroll sideways
    assert page.evaluate(f"() => !!({SCROLLER})()"), "a chart scrolls sideways"
    # plotly's modebar, always shown on a touch screen, would cover the chart's title: hidden there.
    assert page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot .modebar-container')]"
                         ".every(m => getComputedStyle(m).display === 'none')")
    page.evaluate(f"() => ({SCROLLER})().scrollIntoView({{block: 'center'}})")
    page.wait_for_timeout(300)
    before = page.evaluate(STATE)
    left, top, right, bottom = before["drag"]
    assert before["mask"] == "100% 100%", "the right edge fades"
    x, y = min(right, PHONE["viewport"]["width"]) - 30, (top + bottom) / 2
    assert left < x - 150, before  # the finger stays on the plot
    cdp = context.new_cdp_session(page)
    _swipe(cdp, x, y, -150, 0)
    sideways = _settled(page, before, "left")
    assert sideways["left"] >= 50, (before, sideways)
    _swipe(cdp, PHONE["viewport"]["width"] / 2, y, 0, -200)
    down = _settled(page, sideways, "top")
    assert down["top"] >= before["top"] + 50, (before, down)
    assert down["ranges"] == before["ranges"] and down["notes"] == 0, "the swipes zoomed the plot"
    cdp.detach()
    # Scrolled to its end, the box's fade has slid out: the colour bar's numbers show whole.
    page.evaluate(f"() => {{ const box = ({SCROLLER})(); box.scrollLeft = box.scrollWidth; }}")
    page.wait_for_timeout(200)
    assert page.evaluate(STATE)["mask"] != "100% 100%"


def test_on_a_desk_a_mouse_still_drags_to_zoom(page, app_url):
    open_page(page, app_url, FEEDFORWARD.url_path, FEEDFORWARD.title)
    drag = page.evaluate("""() => { const r = document.querySelector('.js-plotly-plot .nsewdrag').getBoundingClientRect();
                                    return [r.left, r.top, r.width, r.height]; }""")
    ranges = "() => document.querySelector('.js-plotly-plot')._fullLayout.xaxis.range.slice()"
    before = page.evaluate(ranges)
    x, y = drag[0] + drag[2] * 0.3, drag[1] + drag[3] * 0.5
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + drag[2] * 0.3, y, steps=6)
    page.mouse.up()
    page.wait_for_function(f"r => ({ranges})()[0] !== r[0] || ({ranges})()[1] !== r[1]", arg=before, timeout=10_000)
