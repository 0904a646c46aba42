"""The seams a learner steps through off the straight path, in Chromium against `streamlit run`:

- switching language on every page after changing its main controls keeps every control's choice (no
  exception, the same options checked, the same address but for ?lang=), and switching back again;
- every tour step's "Open the full page" link, in both languages, opens its page with every value it carries
  taken (none refused, none replaced);
- a link made in one language opens the same view in the other;
- every formula and symbol renders in KaTeX (no .katex-error) on every page.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

import pytest

from models.pages import PAGES
from tests.e2e.conftest import VIEWPORT, wait_idle
from viz.i18n_text import gettext_for

pytestmark = pytest.mark.e2e

LANGUAGE_BUTTON = {"en": "English", "zh": "中文"}
REFUSED = "The link's value for {control}, “{given}”, is not one this control takes; it shows {shown}."
TOUR_STEPS = 10

# For every radio group of the main area (radios, segmented controls, pills): the indices of its checked options.
CHECKED = """() => Array.from(document.querySelectorAll('[data-testid="stMain"] [role="radiogroup"]')).map(group => {
    const items = Array.from(group.querySelectorAll('[data-testid="stRadioOption"], button[role="radio"]'));
    return items.flatMap((item, i) => item.dataset.selected === 'true' || item.getAttribute('aria-checked') === 'true'
                                      ? [i] : []);
})"""


def settle(page) -> None:
    wait_idle(page, timeout=180_000)
    page.wait_for_timeout(400)  # a fragment or a second run may follow the first
    wait_idle(page, timeout=180_000)


def refused_fragment(language: str) -> str:
    """Returns the words of the 'link's value refused' line between its first two placeholders, as shown in `language`."""
    text = gettext_for(language)(REFUSED)
    return text.split("}", 2)[2].split("{")[0].strip(" ,，“”\"") or text


def params(url: str) -> list[tuple[str, str]]:
    return sorted((k, v) for k, v in parse_qsl(urlsplit(url).query) if k != "lang")


def with_language(url: str, language: str) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "lang"] + [("lang", language)]
    return urlunsplit(parts._replace(query=urlencode(query)))


def state(page) -> dict:
    """What the page shows that a language switch must keep: its address but for the language, and the checked
    option of every radio group."""
    return {"params": params(page.url), "checked": page.evaluate(CHECKED)}


def problems(page, language: str) -> list[str]:
    found = []
    if page.locator('[data-testid="stException"]').count():
        found.append("an exception: " + page.locator('[data-testid="stException"]').first.inner_text()[:300])
    if page.locator(".katex-error").count():
        found.append("KaTeX errors: " + str(page.locator(".katex-error").all_inner_texts()[:3]))
    if refused_fragment(language) in page.locator('[data-testid="stMain"]').inner_text():
        found.append("a link value refused")
    return found


def change_controls(page, groups: int = 3) -> None:
    """Moves the first `groups` radio groups of the main area (a view switch, a variant, a mode) on by one option."""
    for index in range(groups):
        group = page.locator('[data-testid="stMain"] [role="radiogroup"]')
        if group.count() <= index:
            return
        items = group.nth(index).locator('[data-testid="stRadioOption"], button[role="radio"]')
        checked = page.evaluate(CHECKED)[index]
        if items.count() < 2:
            continue
        items.nth(((checked[0] if checked else 0) + 1) % items.count()).click()
        settle(page)


def switch_language(page, language: str) -> None:
    page.get_by_test_id("stSidebar").get_by_role("radio", name=LANGUAGE_BUTTON[language]).click()
    settle(page)


def open_seq2seq(page, url: str) -> None:
    """Opens the seq2seq page at `url` and waits until its map is drawn and its variant and view controls are there
    (the title comes first: a click before the controls' run ended was lost)."""
    page.goto(url)
    page.locator(".js-plotly-plot").first.wait_for(timeout=180_000)
    page.locator('[data-testid="stMain"] [role="radiogroup"]').nth(1).wait_for(timeout=60_000)
    settle(page)


@pytest.fixture
def tab(browser):
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    yield page
    context.close()


def test_switching_language_keeps_every_pages_controls(tab, app_url):
    found = {}
    paths = ["" if page.default else f"{page.url_path}?step=3" if page.url_path == "start_here" else page.url_path
             for page in PAGES]
    assert len(paths) == len(PAGES) and "seq2seq" in paths
    for path in paths:
        tab.goto(f"{app_url}/{path}")
        tab.locator('[data-testid="stMain"] h1').first.wait_for(timeout=180_000)
        settle(tab)
        change_controls(tab)
        before = state(tab)
        seen = {"en": problems(tab, "en")}
        for language in ("zh", "en"):
            switch_language(tab, language)
            now = state(tab)
            seen[language] = seen.get(language, []) + problems(tab, language)
            if now != before:
                seen[language].append(f"controls changed: {before} → {now}")
        if any(seen.values()):
            found[path] = seen
    assert found == {}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_tour_link_opens_its_page_with_every_value_taken(tab, app_url, language):
    found = {}
    for step in range(1, TOUR_STEPS + 1):
        tab.goto(f"{app_url}/start_here?step={step}&lang={language}")
        link = tab.get_by_test_id("stPageLink").filter(has=tab.locator("a[href*='?']")).first
        link.wait_for(timeout=180_000)
        settle(tab)
        href = urljoin(tab.url, link.locator("a").get_attribute("href"))
        asked = params(href)
        assert asked, f"step {step}'s link carries no view"
        link.locator("a").click()
        tab.wait_for_url(lambda url, path=urlsplit(href).path: urlsplit(url).path == path, timeout=60_000)
        settle(tab)
        shown = dict(params(tab.url))
        # A value is taken when the address keeps it, or drops it as the control's own default; a value the
        # page does not take gets the refused line, and another value in its place would show in the address.
        replaced = [(k, v, shown[k]) for k, v in asked if k in shown and shown[k] != v]
        trouble = problems(tab, language) + ([f"replaced: {replaced}"] if replaced else [])
        if trouble:
            found[step] = trouble
    assert found == {}


@pytest.mark.parametrize(("made_in", "opened_in"), [("zh", "en"), ("en", "zh")])
def test_a_link_made_in_one_language_opens_the_same_view_in_the_other(tab, app_url, made_in, opened_in):
    open_seq2seq(tab, f"{app_url}/seq2seq?lang={made_in}")
    change_controls(tab, groups=2)  # the variant and the view
    made = state(tab)
    assert made["params"], "the controls wrote the view into the address"
    open_seq2seq(tab, with_language(tab.url, opened_in))
    assert problems(tab, opened_in) == []
    assert state(tab) == made


def test_back_in_chinese_returns_to_the_page_as_it_was_left(tab, app_url):
    # Controls change the address without a history entry (ui.link_box.one_history_entry_per_page): after a
    # page switch Back returns to the page, its controls and its language in one step.
    open_seq2seq(tab, f"{app_url}/seq2seq?lang=zh")
    entries = tab.evaluate("() => history.length")
    change_controls(tab, groups=2)
    left = tab.url
    assert tab.evaluate("() => history.length") == entries, "a control change added a history entry"
    assert "lang=zh" in left and params(left), left
    tab.locator('[data-testid="stSidebarNav"] a').nth(1).click()
    tab.wait_for_url(lambda url: urlsplit(url).path != urlsplit(left).path, timeout=60_000)
    settle(tab)
    assert "lang=zh" in tab.url
    tab.go_back()
    settle(tab)
    assert urlsplit(tab.url).path == urlsplit(left).path
    assert sorted(parse_qsl(urlsplit(tab.url).query)) == sorted(parse_qsl(urlsplit(left).query))
    assert problems(tab, "zh") == []
