"""The page "Is attention an explanation?" in Chromium, in English and 中文, at desk and phone width: both figures
drawn, the date's truth outlined, a method added redraws the panels, no traceback; screenshots."""

import pytest

from tests.e2e.conftest import open_page, screenshot_path, wait_for_change, wait_idle

pytestmark = pytest.mark.e2e


def test_methods_beside_alpha_and_the_adversary(page, app_url):
    traces = open_page(page, app_url, "explanation", "Is attention an explanation?", charts=4, timeout=300_000)
    panels = [t for t in traces[0] if t["z"] is not None]
    assert len(panels) == 5  # α and the four default methods
    assert any(t["z"] is None and len(t["x"]) for t in traces[0])  # the truth's outlines
    assert len([t for t in traces[1] if t["z"] is not None]) == 2  # α and α̃
    box = page.locator('[data-testid="stMultiSelect"]').first
    box.click()
    page.get_by_role("option", name="integrated-gradients").click()
    page.keyboard.press("Escape")
    after = wait_for_change(page, traces, timeout=300)
    wait_idle(page, timeout=300_000)
    assert len([t for t in after[0] if t["z"] is not None]) == 6
    assert not page.locator('[data-testid="stException"]').count()
    page.mouse.move(0, 0)
    page.screenshot(path=screenshot_path("explanation.png"))


def test_the_page_in_chinese_on_a_phone(page, app_url):
    page.set_viewport_size({"width": 390, "height": 844})
    open_page(page, app_url, "explanation?lang=zh", "注意力是一种解释吗？", charts=4, timeout=300_000)
    assert not page.locator('[data-testid="stException"]').count()
    assert page.get_by_text("1 α 旁边的归因").count() == 1
    assert page.get_by_text("Attributions beside").count() == 0  # no English heading left
    page.screenshot(path=screenshot_path("explanation-zh-phone.png"))
