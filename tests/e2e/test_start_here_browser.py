"""The guided tour in a browser: one server, one page, every step reached by clicking "next →",
its figure drawn, its formula within its column and no exception; once in English and once in
Chinese; and on a phone, the steps whose formulas and figure were cut off or crowded."""

import pytest

from tests.e2e.conftest import screenshot_path, wait_for_charts, wait_idle
from ui.tour import STEPS
from viz.i18n_text import gettext_for

WAIT = 120_000


# Each formula block's width beyond its column: a wider one is cut off at the edge. KaTeX's block
# scrolls 2 px even where its formula fits (its struts); the formulas that were cut off ran 20–60 px past.
_FORMULA_OVERFLOW = """() => [...document.querySelectorAll('.katex-display')].map(d => d.scrollWidth - d.clientWidth)"""
_KATEX_SLACK = 3


def _drawn_figure_title(page) -> str:
    # The title plotly.js drew (its SVG text), so a step's figure is the one on screen, not the last step's.
    return page.evaluate("""() => { const t = document.querySelector('.js-plotly-plot .gtitle');
                                    return t ? t.textContent : ''; }""")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_walking_the_tour_draws_every_steps_figure(browser, app_url, language):
    _ = gettext_for(language)
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="zh-CN" if language == "zh" else "en-US")
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{app_url}/start_here", timeout=WAIT)  # no ?lang=: the browser's language chooses
    titles = []
    for number, step in enumerate(STEPS, start=1):
        if number > 1:
            page.get_by_role("button", name=_("next →")).first.click()
        page.get_by_role("heading", name=f"{number}. {_(step.title)}").wait_for(timeout=WAIT)
        wait_idle(page, timeout=WAIT)
        wait_for_charts(page, 1, timeout=WAIT)
        page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length === 1", timeout=WAIT)
        assert not page.locator('[data-testid="stException"]').count(), f"step {number}: an exception"
        assert page.get_by_text(_("**Step {number} of {count}**").format(number=number, count=len(STEPS)).strip("*")).count()
        titles.append(_drawn_figure_title(page))
        assert max(page.evaluate(_FORMULA_OVERFLOW), default=0) <= _KATEX_SLACK, f"step {number}: its formula runs past its column"
        assert f"step={number}" in page.url
        if number in (1, len(STEPS)):
            page.screenshot(path=screenshot_path(f"start-here-{language}-step{number}.png"), full_page=True)
    assert len(set(titles)) == len(STEPS), f"a step showed another step's figure: {titles}"
    page.reload()  # the step survives a reload (it is in the URL)
    page.get_by_role("heading", name=f"{len(STEPS)}. {_(STEPS[-1].title)}").wait_for(timeout=WAIT)
    assert errors == []
    context.close()


def test_on_a_phone_the_formulas_fit_and_the_hierarchical_figure_names_every_word(browser, app_url):
    _ = gettext_for("zh")
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN")
    page = context.new_page()
    keys = [step.key for step in STEPS]
    for key in ("luong-global", "luong-local", "hierarchical", "self-attention", "transformer"):
        number = keys.index(key) + 1
        page.goto(f"{app_url}/start_here?step={number}&lang=zh", timeout=WAIT)
        page.get_by_role("heading", name=f"{number}. {_(STEPS[number - 1].title)}").wait_for(timeout=WAIT)
        wait_idle(page, timeout=WAIT)
        wait_for_charts(page, 1, timeout=WAIT)
        assert max(page.evaluate(_FORMULA_OVERFLOW), default=0) <= _KATEX_SLACK, f"{key}: its formula runs past the screen"
        if key == "hierarchical":
            # Every word of the opinion sentence is drawn as its own label, "rude" among them (the map
            # the tour showed before ran the words together and hid it).
            drawn = page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot .yaxislayer-above text')]
                                     .map(t => t.textContent)""")
            waiter = "The waiter forgot our order twice and was rude when we asked about it.".split()
            assert all(word in drawn for word in waiter), drawn
            page.screenshot(path=screenshot_path("start-here-zh-phone-hierarchical.png"), full_page=True)
    context.close()
