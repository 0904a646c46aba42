"""The Language model page in Chromium: the GPT trained here (head view, model view, training curves; a
head picked and a text typed change the head view). A user's folder: tests/e2e/test_model_root_browser.py."""


import pytest

from tests.e2e.conftest import open_page, screenshot_path, wait_for_change, wait_idle

pytestmark = pytest.mark.e2e

LONG_WAIT = 300_000  # a cold server loads the model and compiles first
HEAD, GRID, CURVES = 0, 1, 2
BOS = "&lt;|endoftext|&gt;"  # labels reach plotly HTML-escaped (viz/labels.py)


def _open(page, url):
    return open_page(page, url, "language_model", "Language model (GPT)", charts=3, timeout=LONG_WAIT)


def test_the_model_trained_here(page, app_url):
    before = _open(page, app_url)
    tokens = len(before[HEAD][0]["z"])
    assert before[HEAD][0]["y"][0] == BOS and tokens > 20
    assert len(before[GRID][0]["z"]) == 2 * tokens + 1  # two layers of maps, one empty row between
    page.screenshot(path=screenshot_path("language_model.png"), full_page=True)

    page.get_by_label("Head", exact=True).click()
    page.get_by_role("option", name="1", exact=True).click()  # the page opens on the best induction head, L1H3
    changed = wait_for_change(page, before, 120, chart=HEAD)
    assert changed[HEAD][0]["z"] != before[HEAD][0]["z"]
    wait_idle(page)
    assert "lm_head=1" in page.url  # the view is in the link

    box = page.get_by_label("Text", exact=True)
    box.fill("Return a new list.")
    box.press("Control+Enter")
    typed = wait_for_change(page, changed, 120, chart=HEAD)
    assert typed[HEAD][0]["y"][0] == BOS and len(typed[HEAD][0]["z"]) < tokens
    wait_idle(page)
