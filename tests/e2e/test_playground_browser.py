"""The Playground in Chromium: deep link on a fresh server, slider, PNG download, screenshot."""

import pytest

from tests.e2e.conftest import (
    open_page,
    plotly_traces,
    screenshot_path,
    streamlit_server,
    wait_for_change,
    wait_for_charts,
    wait_idle,
)

pytestmark = pytest.mark.e2e


def test_playground_deep_link_slider_and_png_download(page):
    with streamlit_server() as url:
        # First request to this server is the deep link (see NOTES: legacy pages/ discovery).
        page.goto(f"{url}/playground")
        page.get_by_text("A Query over Key/Value pairs").first.wait_for(timeout=60_000)
        wait_for_charts(page, 1)
        wait_idle(page)
        nav = page.locator('[data-testid="stSidebarNav"]').inner_text()
        assert "Home" in nav and "Playground" in nav
        before = plotly_traces(page)
        # The three stages and the query–key plane are panels of one figure; under it, a variant after 2017.
        assert len(before) == 2

        slider = page.locator('[data-testid="stSlider"] input[type="range"]').first
        slider.focus()
        for _ in range(10):
            slider.press("ArrowLeft")
        after = wait_for_change(page, before)
        assert after[0][1]["y"] != before[0][1]["y"]  # the weights moved with the query
        wait_idle(page)

        page.get_by_role("button", name="Export α").click()  # the weights panel's menu
        png = page.get_by_role("button", name="PNG image")  # one click: rendered when clicked, then downloaded
        png.wait_for(timeout=60_000)
        wait_idle(page)
        with page.expect_download(timeout=90_000) as download:
            png.click()
        data = open(download.value.path(), "rb").read()
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
        assert download.value.suggested_filename.endswith(".png")

        page.keyboard.press("Escape")
        page.screenshot(path=screenshot_path("playground.png"))  # the README's first picture


def test_on_a_phone_tables_and_charts_scroll_in_their_boxes_not_the_page(page, app_url):
    page.set_viewport_size({"width": 390, "height": 844})
    open_page(page, app_url, "playground", "A Query over Key/Value pairs")
    table = page.locator('[data-testid="stMarkdownContainer"] table').first
    assert table.evaluate("t => t.scrollWidth > t.clientWidth")  # seven formulas are wider than a phone
    # The four panels keep about 200 px each to be read (358 px left their plots a few pixels wide) …
    widths = page.evaluate("[...document.querySelector('[data-testid=stPlotlyChart]').querySelectorAll('.main-svg')]"
                           ".map(e => e.getBoundingClientRect().width)")
    assert widths and min(widths) >= 840, widths
    assert page.evaluate("document.scrollingElement.scrollWidth") == 390  # … yet the page does not pan sideways
    page.set_viewport_size({"width": 1400, "height": 900})
    open_page(page, app_url, "playground", "A Query over Key/Value pairs")  # a new session at desk width
    table = page.locator('[data-testid="stMarkdownContainer"] table').first
    assert not table.evaluate("t => t.scrollWidth > t.clientWidth")  # on a desk the table fits as before
    assert page.evaluate("document.scrollingElement.scrollWidth") == 1400


def test_the_whole_figure_exports_as_one_picture_and_why_a_key_scores_high_as_its_record(page, app_url):
    # A teacher's slide: the four panels side by side in one PNG, four panels' width; and the plane's own
    # menu hands out the numbers it draws (each key, its score and α).
    import csv
    import io
    import struct

    from ui.widgets import WHOLE_PANEL_PX

    open_page(page, app_url, "playground", "A Query over Key/Value pairs")
    page.get_by_role("button", name="Export the whole figure").click()
    png = page.get_by_role("button", name="PNG image")
    png.wait_for(timeout=60_000)
    wait_idle(page)
    assert not page.get_by_role("button", name="CSV (weights)").count()  # pictures only: the numbers are per panel
    with page.expect_download(timeout=90_000) as download:
        png.click()
    data = open(download.value.path(), "rb").read()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and download.value.suggested_filename == "qkv-dot-stages.png"
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk; the picture is drawn at scale 2
    assert (width, height) == (2 * 4 * WHOLE_PANEL_PX, 2 * 480)
    with open(screenshot_path("playground-stages.png"), "wb") as out:
        out.write(data)
    page.keyboard.press("Escape")
    wait_idle(page)

    page.get_by_role("button", name="Export q and k").click()
    menu_csv = page.get_by_role("button", name="CSV (weights)")
    menu_csv.wait_for(timeout=60_000)
    with page.expect_download(timeout=90_000) as download:
        menu_csv.click()
    rows = list(csv.reader(io.StringIO(open(download.value.path(), encoding="utf-8").read())))
    assert rows[0][1:] == ["dim 1", "dim 2", "score", "α"] and [r[0] for r in rows[1:]] == [
        "cat", "dog", "car", "truck", "bicycle"]
    alpha = [float(r[4]) for r in rows[1:]]
    assert abs(sum(alpha) - 1) < 1e-5 and alpha.index(max(alpha)) == 0  # the default query is nearest cat
