"""Links in Chromium: on every page, change the view, take the link from the Link box, open it in
another browser context (a new session) and compare every figure's data with the original."""

import json
from urllib.parse import parse_qsl, urlsplit

import pytest

from models.registry import PAGES
from tests.e2e.conftest import wait_for_change, wait_for_charts, wait_idle, wait_stable

pytestmark = pytest.mark.e2e

LONG_WAIT = 300_000
XSS = "<img src=x onerror=alert(1)>"


def press_slider(page, index: int, presses: int = 3, key: str = "ArrowRight") -> None:
    handle = page.locator("[data-testid=stSlider] input[type=range]").nth(index)
    handle.focus()
    for _ in range(presses):  # one direction only (a step back is sometimes not sent)
        handle.press(key)
        page.wait_for_timeout(150)


def type_text(page, testid: str, label: str, text: str) -> None:
    box = page.locator(f'[data-testid="{testid}"]').filter(has_text=label).locator("textarea, input").first
    box.fill(text)
    box.press("Control+Enter" if testid == "stTextArea" else "Enter")


# url path, the number of charts the page draws, and how to change its view
CHANGES = {
    "": (1, lambda p: press_slider(p, 0)),
    "playground": (1, lambda p: press_slider(p, 0)),
    "seq2seq": (3, lambda p: (type_text(p, "stTextInput", "Date to normalise", "3 July 1987"), wait_idle(p),
                             press_slider(p, 0, 2))),
    "sentence_alignment": (1, lambda p: (type_text(p, "stTextInput", "Sentence 2", "A dog sat on a rug"),
                                         wait_idle(p), press_slider(p, 0))),
    "feedforward": (1, lambda p: press_slider(p, 0)),
    "images": (1, lambda p: press_slider(p, 0)),  # the soft and the hard panels: one figure
    # The decoding step is a fragment (st.fragment): the first Link box, in the encoder's view, is
    # outside it and did not rerun; it must still give the new view's link.
    "transformer": (7, lambda p: (type_text(p, "stTextInput", "Date to normalise", "1 April 1990"), wait_idle(p),
                                  press_slider(p, 0, 2))),
    # A new document that keeps one sentence of document B's, so that the sentences' B − A map is drawn too.
    "han": (8, lambda p: (type_text(p, "stTextArea", "Type or paste",
                                    "The soup was cold. The staff was lovely. We took the bus home afterwards."),
                          wait_idle(p))),
    "induction": (3, lambda p: press_slider(p, 1, key="ArrowLeft")),  # the length: 64 at its maximum
    # Markup in the text travels in the link and must stay text in the Link box (no alert, no <img>).
    "self_attention": (1, lambda p: (type_text(p, "stTextArea", "Text", f"The dog chased the ball. {XSS}"),
                                     wait_idle(p))),
}


def url_path(page) -> str:
    return "" if page.default else page.file.removeprefix("pages/").removesuffix(".py")


def settle(page, charts: int, before=None, quiet: float = 2.0) -> list:
    """Returns the charts' data once drawn and unchanged for `quiet` s (after a change from `before`).
    A page that has just loaded has no key presses in flight, so a shorter quiet does there."""
    wait_for_charts(page, charts, timeout=LONG_WAIT)
    wait_idle(page, timeout=LONG_WAIT)
    if before is not None:
        wait_for_change(page, before, timeout=120)
    return wait_stable(page, quiet=quiet)


def link_from_box(page) -> str:
    page.get_by_role("button", name="Link").first.click()
    box = page.locator('[data-testid="stPopoverBody"] textarea[data-al-link]').first
    box.wait_for(timeout=30_000)
    link = box.input_value().strip()
    assert not page.locator('[data-testid="stPopoverBody"] img').count(), "markup from the URL became HTML"
    copy = page.locator('[data-testid="stPopoverBody"] button[data-al-copy]').first
    copy.click()
    page.wait_for_function("b => b.textContent === 'Copied'", arg=copy.element_handle(), timeout=10_000)
    page.keyboard.press("Escape")
    return link


@pytest.fixture(scope="module")
def other_tab(browser):
    """A tab in a browser context of its own, where a link made in the shared tab (`page`) is opened. Each
    goto is a new Streamlit session; a tab kept between tests loads a page in about 1 s where a new tab
    takes 2.5 s (it compiles Streamlit's scripts again)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1300})
    yield context.new_page()
    context.close()


@pytest.fixture
def tabs(page, other_tab):
    """(the shared tab, the other context's tab): the view is made in the first, its link opened in the second."""
    return page, other_tab


@pytest.mark.parametrize("path", list(CHANGES), ids=lambda p: p or "home")
def test_a_link_made_on_the_page_reopens_the_same_figures(tabs, app_url, path):
    assert path in {url_path(p) for p in PAGES}
    charts, change = CHANGES[path]
    page, other = tabs
    dialogs = []

    def dismiss(dialog):
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    page.goto(f"{app_url}/{path}", timeout=LONG_WAIT)
    default = settle(page, charts, quiet=1.0)
    change(page)
    changed = settle(page, charts, before=default, quiet=1.0)
    link = link_from_box(page)
    assert link.startswith(f"{app_url}/{path}") and "?" in link, link
    assert dialogs == [], f"a script ran: {dialogs}"
    assert json.dumps(wait_stable(page, quiet=1.0)) == json.dumps(changed), "the view moved after it had settled"
    page.remove_listener("dialog", dismiss)

    other.goto(link, timeout=LONG_WAIT)  # the other context's tab: a session that never saw this view
    reopened = settle(other, charts, quiet=1.0)
    assert not other.locator('[data-testid="stException"]').count()
    assert json.dumps(reopened) == json.dumps(changed)
    assert json.dumps(reopened) != json.dumps(default)


def test_back_to_a_page_reopens_it_as_it_was_left(page, app_url):
    # Controls change the address without a history entry, so Back returns to the page's address as it
    # was first opened; Streamlit sets every control that address leaves out to its default.
    page.goto(f"{app_url}/seq2seq", timeout=LONG_WAIT)
    default = settle(page, 3, quiet=1.0)
    type_text(page, "stTextInput", "Date to normalise", "3 July 1987")
    wait_idle(page)
    page.get_by_text("Luong global, dot", exact=True).click()
    changed = settle(page, 3, before=default)
    left = page.url
    assert "s2s_text=" in left and "s2s_variant=" in left, left
    page.locator('[data-testid="stSidebarNav"] a', has_text="Home").first.click()
    # Home is open once its address is and the seq2seq page's three charts, stale while Home's script runs,
    # are gone; pressing Back before that raced Home's own run (a CI run then never drew the page again).
    page.wait_for_url(lambda url: urlsplit(url).path in ("", "/"), timeout=LONG_WAIT)
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length === 1", timeout=LONG_WAIT)
    wait_for_charts(page, 1, timeout=LONG_WAIT)
    wait_idle(page, timeout=LONG_WAIT)
    page.go_back()
    page.wait_for_url(lambda url: urlsplit(url).path == urlsplit(left).path, timeout=LONG_WAIT)
    back = settle(page, 3, quiet=1.0)
    # The same address: path and parameters (their order follows which rerun wrote them last).
    assert urlsplit(page.url).path == urlsplit(left).path
    assert sorted(parse_qsl(urlsplit(page.url).query)) == sorted(parse_qsl(urlsplit(left).query))
    assert page.get_by_role("radio", name="Luong global, dot").is_checked()
    assert json.dumps(back) == json.dumps(changed)
    assert not page.locator('[data-testid="stException"]').count()
