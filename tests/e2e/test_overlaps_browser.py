"""Figures a class can read, as Chromium draws them: no legend over a panel title or over the plot's
data, no colour-bar title cut at the figure's edge, and the feed-forward page's "uniform 1/T" label
beside its line, at desk and phone width."""

import pytest

from tests.e2e.conftest import open_page, wait_for_charts, wait_idle

pytestmark = pytest.mark.e2e

# Every text box of plotly's info layer (legend, the figure's title, annotations: panel titles and labels, colour-bar
# titles, and text drawn as points, such as the images page's own colour scale and its "weight" title)
# of every chart, with the chart's own box, in page pixels.
BOXES = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(plot => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const svg = plot.querySelector('svg.main-svg');
  return {
    chart: box(svg),
    legends: Array.from(plot.querySelectorAll('g.legend')).map(box),
    notes: Array.from(plot.querySelectorAll('g.annotation, .g-gtitle text')).map(e => [e.textContent, box(e)]),
    barTitles: Array.from(plot.querySelectorAll('.colorbar .cbtitle text, .colorbar text.cbtitle, g.textpoint text'))
      .map(e => [e.textContent, box(e)]),
  };
})"""


def _overlap(a, b, slack=1.0) -> bool:
    return a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack


def _check(charts) -> list[str]:
    found = []
    for i, c in enumerate(charts):
        for legend in c["legends"]:
            found += [f"chart {i}: legend over “{text}”" for text, note in c["notes"] if _overlap(legend, note)]
        for text, box in c["barTitles"]:
            if box[2] > c["chart"][2] + 1 or box[0] < c["chart"][0] - 1:
                found.append(f"chart {i}: colour-bar title “{text}” cut at the edge")
    return found


def test_the_check_finds_a_legend_over_a_title_and_a_cut_colour_bar_title():
    chart = {"chart": [0, 0, 100, 100], "legends": [[10, 10, 50, 30]], "notes": [["α", [20, 20, 60, 40]]],
             "barTitles": [["weigh", [90, 0, 120, 10]]]}
    assert _check([chart]) == ["chart 0: legend over “α”", "chart 0: colour-bar title “weigh” cut at the edge"]


@pytest.mark.parametrize("width", [1280, 390])
def test_playground_sampled_legend_covers_no_panel_title(page, app_url, width):
    page.set_viewport_size({"width": width, "height": 900})
    open_page(page, app_url, "playground?mode=Hard:%20sampled", "A Query over Key/Value pairs")
    charts = page.evaluate(BOXES)
    assert any(c["legends"] for c in charts), "the sampled view draws a legend"
    assert any(c["notes"] for c in charts), "the panels have titles"
    assert _check(charts) == []


@pytest.mark.parametrize("width", [1280, 390])
def test_knockout_legend_sits_under_the_title(page, app_url, width):
    # The legend over the plot and the figure's title share the top margin (viz.lm_lens.knockout_bars).
    page.set_viewport_size({"width": width, "height": 900})
    open_page(page, app_url, "inside_lm?inside_section=3%20Head%20knock-out", "Inside a language model")
    charts = page.evaluate(BOXES)
    assert any(c["legends"] for c in charts) and any(c["notes"] for c in charts)
    assert _check(charts) == []


@pytest.mark.parametrize("width", [1280, 390])
def test_images_and_feedforward_colour_bars_and_labels_are_whole(page, app_url, width):
    page.set_viewport_size({"width": width, "height": 900})
    open_page(page, app_url, "images", "Hard vs soft", charts=1)
    wait_idle(page)
    charts = page.evaluate(BOXES)
    assert any(text == "weight" for c in charts for text, _ in c["barTitles"]), "the maps' colour scale is titled"
    assert _check(charts) == []
    open_page(page, app_url, "feedforward?log_y=true", "Feed-forward", charts=1)
    wait_for_charts(page, 1)
    charts = page.evaluate(BOXES)
    assert _check(charts) == []
    # "uniform 1/T" is drawn next to its dotted line: the label's box and the line's are within 40 px.
    label = page.evaluate("""() => { const e = Array.from(document.querySelectorAll('.js-plotly-plot g.annotation'))
        .find(a => a.textContent.includes('1/T')); if (!e) return null; const r = e.getBoundingClientRect();
        return [r.top, r.bottom]; }""")
    lines = page.evaluate("""() => Array.from(document.querySelectorAll('.js-plotly-plot path.hline, .js-plotly-plot .shapelayer path'))
        .map(p => { const r = p.getBoundingClientRect(); return [r.top, r.bottom, r.width]; })""")
    assert label is not None, "the uniform 1/T label is drawn"
    flat = [line for line in lines if line[1] - line[0] < 4 and line[2] > 50]  # horizontal lines (shapes)
    assert flat, "the uniform line is drawn"
    assert min(min(abs(label[1] - line[0]), abs(label[0] - line[1])) for line in flat) < 40


# Per chart: does its box scroll sideways (more content than width), and does it fade its right edge?
SCROLLERS = """() => Array.from(document.querySelectorAll("[data-testid='stPlotlyChart']")).map(c => {
  const box = c.closest("[data-testid='stElementContainer']"); const s = getComputedStyle(box);
  return {scrolls: box.scrollWidth > box.clientWidth + 1, fades: (s.maskImage || s.webkitMaskImage || 'none') !== 'none',
          key: Array.from(box.classList).find(k => k.startsWith('st-key-')) || ''};
})"""


# The first header cell of each of the pages' Markdown tables, with the number of lines its text takes.
HEADER_LINES = """() => Array.from(document.querySelectorAll("[data-testid='stMarkdownContainer'] th:first-child")).map(th => {
  const range = document.createRange(); range.selectNodeContents(th);
  const tops = new Set(Array.from(range.getClientRects()).filter(r => r.width > 0).map(r => Math.round(r.top)));
  return [th.textContent.trim(), tops.size];
}).filter(([text]) => text)"""


def test_on_a_phone_the_seq2seq_map_fits_and_a_wide_chart_shows_it_scrolls(page, app_url):
    page.set_viewport_size({"width": 390, "height": 900})
    open_page(page, app_url, "seq2seq", "Seq2seq alignment")
    # The page draws its charts one after another: the first one drawn need not be the map (under load it was not).
    page.wait_for_function(f"() => ({SCROLLERS})().some(c => c.key.includes('s2s_main'))", timeout=90_000)
    wait_idle(page)
    main = [c for c in page.evaluate(SCROLLERS) if "s2s_main" in c["key"]]
    # The map of input characters takes the screen's width: the year at the end of the date shows at once.
    assert main and not main[0]["scrolls"] and not main[0]["fades"]
    open_page(page, app_url, "playground", "A Query over Key/Value pairs")
    wide = page.evaluate(SCROLLERS)
    assert wide and all(c["scrolls"] and c["fades"] for c in wide), wide
    page.set_viewport_size({"width": 1280, "height": 900})
    wait_idle(page)
    assert not any(c["scrolls"] or c["fades"] for c in page.evaluate(SCROLLERS))


def test_on_a_phone_a_symbol_table_keeps_its_narrow_first_header_whole(page, app_url):
    # Chinese breaks between any two characters: the symbol column, as narrow as x_t, broke 符号 in two.
    page.set_viewport_size({"width": 390, "height": 900})
    open_page(page, app_url, "start_here?lang=zh", "从这里开始")
    lines = page.evaluate(HEADER_LINES)
    assert ["符号", 1] in lines and all(count == 1 for _, count in lines), lines
