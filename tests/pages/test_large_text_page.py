"""The sidebar's "Large text" switch draws every figure's text larger, on every page, until it is turned off."""

from tests.pages.conftest import chart_specs, open_page
from ui.widgets import LARGE_TEXT_KEY, LARGE_TEXT_SCALE
from viz.fonts import TEXT_PX


def test_the_switch_scales_the_figures_text_and_keeps_across_pages():
    at = open_page("pages/seq2seq.py")
    assert chart_specs(at)[0]["layout"]["font"]["size"] == TEXT_PX
    at.toggle(key=LARGE_TEXT_KEY).set_value(True).run()
    assert not at.exception, at.exception
    large = round(TEXT_PX * LARGE_TEXT_SCALE, 1)
    assert {spec["layout"]["font"]["size"] for spec in chart_specs(at)} == {large}
    at.switch_page("pages/feedforward.py").run()
    assert chart_specs(at) and {spec["layout"]["font"]["size"] for spec in chart_specs(at)} == {large}
    at.toggle(key=LARGE_TEXT_KEY).set_value(False).run()
    assert {spec["layout"]["font"]["size"] for spec in chart_specs(at)} == {TEXT_PX}
