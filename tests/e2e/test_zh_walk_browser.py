"""A walk of every page in Chinese (`?lang=zh`) in Chromium against `streamlit run`, from a first visit
(an empty cache) through the sidebar, then through the tour step by step: each page opens with no exception,
no English text of the catalog shows where its Chinese translation belongs, in the page's text or in its
figures' titles, axes, annotations and legends, every formula renders in KaTeX, and no request leaves the machine (every file the pages
ask for comes from the app's own server: a ":material/…:" page icon once fetched its favicon from
fonts.gstatic.com)."""

import re
from urllib.parse import urlsplit

import pytest
from babel.messages.pofile import read_po

from models.pages import PAGES
from tests.e2e.conftest import VIEWPORT, wait_idle
from viz.i18n_text import po_path

pytestmark = pytest.mark.e2e

LOCAL_SCHEMES = {"data", "blob", "about"}
TOUR_STEPS = 10


def _english_sentences() -> list[str]:
    # Whole English texts of three words or more whose Chinese differs: if one of them is on the page,
    # a text was shown untranslated. Texts with placeholders are shown filled in, so they are left out;
    # markdown marks are dropped, as the browser does not show them.
    with open(po_path("zh"), "rb") as po:
        catalog = read_po(po, locale="zh")
    found = []
    for message in catalog:
        if not message.id or not isinstance(message.id, str) or "{" in message.id or message.string == message.id:
            continue
        text = re.sub(r"[*`_]", "", message.id).strip()
        if len(text.split()) >= 3 and "$" not in text and "\\" not in text:
            found.append(text)
    return found


ENGLISH = _english_sentences()


def _english_figure_texts() -> set[str]:
    # Every English text of the catalog whose Chinese differs, whole: a figure's axis title, legend name or
    # annotation that equals one was drawn untranslated ("key token", "weight", "α (soft)").
    with open(po_path("zh"), "rb") as po:
        catalog = read_po(po, locale="zh")
    return {m.id.strip() for m in catalog if m.id and isinstance(m.id, str) and "{" not in m.id and m.string
            and m.string != m.id and re.search(r"[A-Za-z]{3}", m.id)}


ENGLISH_FIGURE_TEXTS = _english_figure_texts()
# Every text a plotly chart draws, tagged: titles and axis titles ("title"), annotations and legend names ("other").
FIGURE_TEXTS = r"""() => Array.from(document.querySelectorAll('.js-plotly-plot')).flatMap(gd => {
    const layout = gd._fullLayout || {}, out = [];
    const text = t => t && (typeof t === 'string' ? t : t.text);
    out.push(['title', text(layout.title)]);
    for (const key of Object.keys(layout)) if (/^[xy]axis\d*$/.test(key)) out.push(['title', text(layout[key].title)]);
    for (const a of layout.annotations || []) out.push(['other', a.text]);
    for (const t of gd._fullData || []) if (t.showlegend !== false) out.push(['other', t.name]);
    // plotly.js keeps an English placeholder ("Click to enter X axis title") where a title is empty; it is not drawn.
    return out.filter(([, t]) => t && !String(t).startsWith('Click to enter')).map(([kind, t]) => [kind, String(t).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim()]);
})"""


# Words a Chinese figure's title or axis title never holds (its tokens and names are in tick labels and legends).
ENGLISH_TITLE_WORDS = re.compile(r"\b(head|heads|layer|layers|token|tokens|weight|weights|query|key|keys|step|steps|"
                                 r"time|window|sentence|word|words|uniform|marked|output|input|embedding|character|"
                                 r"position|attention|score)\b", re.IGNORECASE)


def english_in_figures(page) -> list[str]:
    """Returns the figure texts of the open page that are English texts of the catalog or hold one of its
    English sentences, and the titles that hold an English word of the trade."""
    texts = page.evaluate(FIGURE_TEXTS)
    return sorted({t for kind, t in texts if t in ENGLISH_FIGURE_TEXTS or any(s in t for s in ENGLISH)
                   or kind == "title" and ENGLISH_TITLE_WORDS.search(t)})


def problems_on(page) -> list[str]:
    """Returns what is wrong with the Chinese page open in `page` (nothing: [])."""
    found = []
    if page.locator('[data-testid="stException"]').count():
        found.append("an exception")
    # The sidebar lists every page in Chinese, with no "View N more" button of Streamlit's own (English).
    nav = page.locator('[data-testid="stSidebarNav"]')
    if nav.locator("a").count() != len(PAGES):
        found.append(f"{nav.locator('a').count()} pages in the sidebar, not {len(PAGES)}")
    if re.search(r"\bView\b|\bmore\b", nav.inner_text()):
        found.append(f"English in the sidebar: {nav.inner_text()!r}")
    shown = re.sub(r"\s+", " ", page.locator('[data-testid="stMain"]').inner_text())
    if not re.search(r"[\u4e00-\u9fff]", shown):
        found.append("no Chinese text on the page")
    untranslated = [text for text in ENGLISH if re.sub(r"\s+", " ", text) in shown]
    if untranslated:
        found.append(f"English texts: {untranslated[:10]}")
    in_figures = english_in_figures(page)
    if in_figures:
        found.append(f"English in figures: {in_figures[:10]}")
    if page.locator(".katex-error").count():
        found.append(f"KaTeX errors: {page.locator('.katex-error').all_inner_texts()[:3]}")
    return found


def settle(page) -> None:
    wait_idle(page, timeout=180_000)
    page.wait_for_timeout(500)  # a fragment or a second run may follow the first
    wait_idle(page, timeout=180_000)


def test_every_page_in_chinese_shows_no_english_text_and_asks_only_the_local_server(browser, app_url):
    # A browser context of its own: an empty cache, as a first visit has, so that every file is asked for.
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(f"{app_url}/?lang=zh")
    page.locator('[data-testid="stSidebarNav"]').get_by_text("首页").wait_for(timeout=120_000)
    settle(page)
    problems = {urlsplit(page.url).path: problems_on(page)}
    links = page.locator('[data-testid="stSidebarNav"] a[data-testid="stSidebarNavLink"]')
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert len(hrefs) == len(PAGES), hrefs
    for i, href in enumerate(hrefs):  # every page but the one open (Home, the default page)
        if href == page.url.split("?")[0]:
            continue
        links.nth(i).click()
        page.wait_for_url(lambda url, href=href: url.split("?")[0] == href, timeout=60_000)  # a page may add parameters
        settle(page)
        problems[urlsplit(href).path] = problems_on(page)
    # The tour, step by step through its own "next" button: each step's text and figure.
    page.goto(f"{app_url}/start_here?step=1&lang=zh")
    for step in range(1, TOUR_STEPS + 1):
        settle(page)
        page.locator(".js-plotly-plot").first.wait_for(timeout=120_000)
        problems[f"/start_here?step={step}"] = problems_on(page)
        if step < TOUR_STEPS:
            page.get_by_role("button", name=re.compile("^下一步")).first.click()
            page.wait_for_url(lambda url, step=step: f"step={step + 1}" in url, timeout=60_000)
    page.wait_for_timeout(1_000)
    context.close()
    assert len(problems) == len(PAGES) + TOUR_STEPS, sorted(problems)
    assert {path: found for path, found in problems.items() if found} == {}
    host = urlsplit(app_url).netloc
    outside = sorted({u for u in asked if urlsplit(u).scheme not in LOCAL_SCHEMES and urlsplit(u).netloc != host})
    assert len(asked) > 20, "the pages were loaded"
    assert outside == [], f"requests that left the machine: {outside[:5]}"
