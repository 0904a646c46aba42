"""The images page in Chromium: upload an image, move the samples slider, the panels change."""

import io

import numpy as np
import pytest
from PIL import Image

from models.captioner import task as S
from tests.e2e.conftest import open_page, plotly_traces, screenshot_path, wait_for_change, wait_idle

pytestmark = pytest.mark.e2e


def test_upload_then_samples_slider_changes_the_hard_panels(page, app_url):
    open_page(page, app_url, "images", "Hard vs soft attention (images)", charts=1)
    page.locator('[data-testid="stRadio"] label').filter(has_text="Upload an image").first.click()
    page.locator('[data-testid="stFileUploader"] input[type="file"]').wait_for(state="attached", timeout=60_000)
    scene = S.make_scene([S.SceneObject("triangle", "green", 6, 30, 22), S.SceneObject("circle", "red", 40, 8, 18)])
    big = np.kron(S.render_clean(scene), np.ones((4, 4, 1), np.uint8))  # a 256×256 upload
    buffer = io.BytesIO()
    Image.fromarray(big).save(buffer, format="PNG")
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        files=[{"name": "scene.png", "mimeType": "image/png", "buffer": buffer.getvalue()}]
    )
    page.get_by_text("Caption:").first.wait_for(timeout=90_000)
    wait_idle(page)
    before = plotly_traces(page)
    assert len(before) == 1  # the soft and the hard panels, one figure

    slider = page.locator('[data-testid="stSlider"] input[type="range"]').nth(1)  # N samples
    slider.focus()
    for _ in range(15):
        slider.press("ArrowRight")
    after = wait_for_change(page, before, timeout=60)
    assert after[0] != before[0]  # the hard panels moved with N
    wait_idle(page)
    text = page.locator('[data-testid="stMarkdownContainer"]').all_inner_texts()
    assert any("Caption:" in t and "triangle" in t for t in text)
    page.screenshot(path=screenshot_path("images.png"), full_page=False)


def test_clicking_a_patch_makes_it_the_query(page, app_url):
    open_page(page, app_url, "images", "Hard vs soft attention (images)", charts=1)
    page.get_by_test_id("stButtonGroup").get_by_role("radio", name="Self-attention on any photo").click()
    page.get_by_text("attends to…").first.wait_for(timeout=60_000)
    wait_idle(page)
    chart = page.locator(".js-plotly-plot").filter(has_text="attends to…").first
    assert "Patch r4c4" in chart.inner_text()  # the default query: the centre of the 8×8 grid
    chart.scroll_into_view_if_needed()  # the page's legends and place in the tour push it below a 1,300 px window
    wait_idle(page)
    # The page position of patch (1, 2)'s centre marker (trace 2, point 1·8 + 2), from plotly's own axes.
    x, y = chart.evaluate(
        """el => { const t = el._fullData[2], i = 10, L = el._fullLayout, box = el.getBoundingClientRect();
                   return [box.left + L.xaxis._offset + L.xaxis.l2p(t.x[i]),
                           box.top + L.yaxis._offset + L.yaxis.l2p(t.y[i])]; }"""
    )
    page.mouse.click(x, y)
    page.locator(".js-plotly-plot").filter(has_text="Patch r1c2 attends to…").first.wait_for(timeout=60_000)
    wait_idle(page)
    assert page.get_by_label("Query patch row").input_value() == "1"
    assert page.get_by_label("Query patch column").input_value() == "2"


def test_the_captioner_seed_box_keeps_its_step_buttons_and_they_redraw_the_samples(page, app_url):
    # Streamlit hides a number box's − and + below 7.5rem; the seed's column keeps it wider at 1400 px.
    open_page(page, app_url, "images", "Hard vs soft attention (images)", charts=1)
    wait_idle(page)
    seed = page.locator('[data-testid="stNumberInput"]').filter(has=page.get_by_label("Seed", exact=True))
    assert seed.count() == 1
    before = plotly_traces(page)
    seed.locator('[data-testid="stNumberInputStepUp"]').click()
    after = wait_for_change(page, before, timeout=60)
    assert page.get_by_label("Seed", exact=True).input_value() == "1"
    assert after[0] != before[0]  # new draws: the hard block's sample frequencies moved
