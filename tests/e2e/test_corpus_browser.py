"""The corpus page in Chromium: a small text file uploaded, the GPT trained here run over it (the smallest
model: a fast test), every head in the scatter, a head picked, its top inputs listed as links that open
the Language model page on that text with that layer and head."""

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.e2e.conftest import plotly_traces, screenshot_path, wait_for_charts, wait_idle

pytestmark = pytest.mark.e2e

LONG_WAIT = 300_000  # a cold server loads the model and compiles first
LINES = ["The for statement iterates over the items of any sequence.", "Lists are mutable; tuples are not.",
         "print(x) prints x, and print(x) prints x again.", "A module is a file of definitions."]


def test_upload_run_pick_a_head_and_follow_a_top_input(page, app_url, tmp_path):
    corpus = tmp_path / "texts.txt"
    corpus.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    page.goto(f"{app_url}/corpus", timeout=LONG_WAIT)
    page.get_by_text("Many inputs: head statistics").first.wait_for(timeout=LONG_WAIT)
    wait_idle(page, timeout=LONG_WAIT)
    page.get_by_text("GPT trained here (decoder LM)").click()
    wait_idle(page)
    page.get_by_text("Upload a .txt or .csv").click()
    wait_idle(page)
    page.locator('input[type="file"]').set_input_files(str(corpus))
    page.get_by_text("4 texts ready: press Run.").wait_for(timeout=60_000)
    page.get_by_role("button", name="Run").click()
    wait_for_charts(page, 1, timeout=LONG_WAIT)
    wait_idle(page, timeout=LONG_WAIT)
    traces = plotly_traces(page)[0]
    layers = [t for t in traces if len(t["x"]) == 4]  # the GPT: 2 layers of 4 heads; the selected-head ring has 1
    assert len(layers) == 2

    picker = page.locator('[data-testid="stSelectbox"]').filter(has_text="Head").last
    picker.click()
    page.keyboard.type("2")
    page.keyboard.press("Enter")
    page.get_by_text("L0H2: where it attends most sharply").wait_for(timeout=60_000)
    wait_idle(page)
    links = page.locator('[data-testid="stMarkdownContainer"] a[href*="language_model"]')
    assert links.count() == 4  # every text is among the 5 sharpest of 4
    href = links.first.get_attribute("href")
    query = parse_qs(urlsplit(href).query)
    assert query["lm_layer"] == ["0"] and query["lm_head"] == ["2"] and query["lm_text"][0] in LINES
    assert links.first.inner_text() == query["lm_text"][0]
    page.screenshot(path=screenshot_path("corpus.png"), full_page=True)

    page.goto(href if href.startswith("http") else f"{app_url}/{href.lstrip('./')}", timeout=LONG_WAIT)
    wait_for_charts(page, 1, timeout=LONG_WAIT)
    wait_idle(page, timeout=LONG_WAIT)
    assert page.get_by_label("Text", exact=True).input_value() == query["lm_text"][0]
