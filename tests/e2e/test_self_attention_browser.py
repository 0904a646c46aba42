"""The Self-attention page in Chromium: model view screenshot, a ~500-token input, a sentence pair."""

import os
import shutil

import pytest

from tests.e2e.conftest import ARTIFACTS, ROOT, wait_idle

pytestmark = pytest.mark.e2e

TITLE = "Self-attention of a pretrained transformer"
SCREENSHOT = ARTIFACTS / "self_attention_model_view.png"
# The README's copy is refreshed only on request, so a test run leaves the git tree clean.
DOCS_SCREENSHOT = ROOT / "docs" / "self_attention_model_view.png"
UPDATE_DOCS = os.environ.get("UPDATE_DOCS_SCREENSHOTS") == "1"
# ~500 tokens of varied English (each sentence is 10 tokens with [CLS]/[SEP] shared).
LONG_TEXT = " ".join(f"Sentence {i} says the cat saw dog number {i}." for i in range(49))

# Generous: a cold server loads the model and compiles (seconds on idle cores, minutes on a busy machine).
LONG_WAIT = 300_000

CHARTS_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(el => ({
    title: (el.layout && el.layout.title && el.layout.title.text) || '',
    traces: (el._fullData || []).length,
    rows: el._fullData && el._fullData[0] && el._fullData[0].z ? el._fullData[0].z.length : 0,
    first: el._fullData && el._fullData[0] && el._fullData[0].z && el._fullData[0].z[1] ? Array.from(el._fullData[0].z[1]).slice(0, 8) : []}))  // a one-row map (the neuron view's q) has no second row"""


def charts(page):
    return page.evaluate(CHARTS_JS)


def open_self_attention(page, url: str):
    """Opens the page; the first visit loads the model and compiles one length bucket."""
    page.goto(f"{url}/self_attention", timeout=LONG_WAIT)
    page.get_by_text(TITLE).first.wait_for(timeout=LONG_WAIT)
    wait_for_chart(page, "c.traces === 1")
    wait_idle(page, timeout=LONG_WAIT)


def wait_for_chart(page, condition: str, timeout: float = LONG_WAIT):
    """Waits until some drawn chart c satisfies the JS expression `condition`."""
    page.wait_for_function(
        f"""() => Array.from(document.querySelectorAll('.js-plotly-plot')).some(el => {{
              const c = {{title: (el.layout && el.layout.title && el.layout.title.text) || '',
                          traces: (el._fullData || []).length,
                          rows: el._fullData && el._fullData[0] && el._fullData[0].z ? el._fullData[0].z.length : 0}};
              return {condition}; }})""",
        timeout=timeout,
    )


def set_text(page, label: str, text: str):
    box = page.locator('[data-testid="stTextArea"]').filter(has_text=label).locator("textarea")
    box.fill(text)
    box.press("Control+Enter")


def pick(page, label: str, option: str):
    page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first.click()  # the first: the neuron view below has its own
    page.get_by_role("option", name=option, exact=True).click()


def click_statistics_cell(page, layer: int, head: int):
    """Clicks the (layer, head) cell of the statistics heatmap (the first chart on the page)."""
    x, y = page.evaluate(
        f"""() => {{ const el = document.querySelector('.js-plotly-plot'); const fl = el._fullLayout;
            const r = el.getBoundingClientRect();
            return [r.left + fl._size.l + fl.xaxis.l2p({head}), r.top + fl._size.t + fl.yaxis.l2p({layer})]; }}"""
    )
    page.mouse.move(x, y)
    page.mouse.click(x, y)


def test_model_view_click_a_head_then_500_tokens_stay_responsive(page, app_url):
    open_self_attention(page, app_url)
    page.get_by_test_id("stButtonGroup").get_by_role("radio", name="Model view").click()
    wait_for_chart(page, "c.traces === 1 && c.title.includes('Model view')")
    wait_idle(page)
    page.mouse.move(0, 0)  # no hover label or mode bar in the screenshot
    SCREENSHOT.parent.mkdir(exist_ok=True)
    page.locator(".js-plotly-plot").first.screenshot(path=str(SCREENSHOT))
    assert SCREENSHOT.stat().st_size < 400_000
    if UPDATE_DOCS:
        shutil.copyfile(SCREENSHOT, DOCS_SCREENSHOT)

    # Choosing a cell of the statistics heatmap opens that head in the head view.
    page.get_by_test_id("stButtonGroup").get_by_role("radio", name="Head statistics").click()
    wait_for_chart(page, "c.traces === 2 && c.rows === 6")
    wait_idle(page)
    click_statistics_cell(page, 2, 7)
    wait_for_chart(page, "c.title.includes('Layer 2, head 7') && c.traces === 1")
    wait_idle(page)

    set_text(page, "Text", LONG_TEXT)
    wait_for_chart(page, "c.title.includes('Layer 2, head 7') && c.rows > 480")
    wait_idle(page)
    shown = [c for c in charts(page) if "Layer 2, head 7" in c["title"] and c["rows"] > 480][-1]
    assert shown["rows"] <= 512 and any(v > 0 for v in shown["first"])

    # Still responsive: another head of the long input arrives and differs.
    pick(page, "Head", "3")
    wait_for_chart(page, "c.title.includes('Layer 2, head 3') && c.rows > 480")
    wait_idle(page)
    other = [c for c in charts(page) if "Layer 2, head 3" in c["title"]][-1]
    assert other["first"] != shown["first"]

    page.get_by_test_id("stButtonGroup").get_by_role("radio", name="Model view").click()
    wait_for_chart(page, "c.traces === 1 && c.title.includes('block-averaged to')")
    rows = max(c["rows"] for c in charts(page) if "block-averaged to" in c["title"])
    assert 32 < (rows + 1) // 6 - 1 <= 64  # 6 layers of at most 64 rows each, an empty row between them


def test_sentence_pair_shows_the_four_blocks(page, app_url):
    open_self_attention(page, app_url)
    set_text(page, "Text", "The cat sat on the mat.")
    set_text(page, "Second sentence", "A cat was sitting on the rug.")
    page.get_by_text("pair, A:").first.wait_for(timeout=LONG_WAIT)
    wait_idle(page)
    page.get_by_test_id("stButtonGroup").get_by_role("radio", name="Sentence pair").click()
    wait_for_chart(page, "c.traces === 4")
    wait_idle(page)
    text = page.locator(".js-plotly-plot").first.inner_text()
    for block in ("A→A", "A→B", "B→A", "B→B"):
        assert block in text
