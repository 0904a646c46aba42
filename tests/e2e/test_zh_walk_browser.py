"""A walk of every page in Chinese (`?lang=zh`) in Chromium against `streamlit run`: each page opens
with no exception, and no English text of the catalog shows where its Chinese translation belongs."""

import re

import pytest
from babel.messages.pofile import read_po

from models.pages import PAGES
from tests.e2e.conftest import wait_idle
from viz.i18n_text import po_path

pytestmark = pytest.mark.e2e


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


def _path(page) -> str:
    return "" if page.default else page.file.removeprefix("pages/").removesuffix(".py")


@pytest.mark.parametrize("page_entry", PAGES, ids=[p.file.removeprefix("pages/") for p in PAGES])
def test_every_page_in_chinese_opens_without_an_exception_or_an_english_text(page, app_url, page_entry):
    page.goto(f"{app_url}/{_path(page_entry)}?lang=zh")
    page.locator('[data-testid="stSidebarNav"]').get_by_text("首页").wait_for(timeout=120_000)
    wait_idle(page, timeout=180_000)
    page.wait_for_timeout(500)  # a fragment or a second run may follow the first
    wait_idle(page, timeout=180_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    # The sidebar lists every page in Chinese, with no "View N more" button of Streamlit's own (English).
    nav = page.locator('[data-testid="stSidebarNav"]')
    assert nav.locator("a").count() == len(PAGES)
    assert not re.search(r"\bView\b|\bmore\b", nav.inner_text()), nav.inner_text()
    shown = re.sub(r"\s+", " ", page.locator('[data-testid="stMain"]').inner_text())
    assert re.search(r"[\u4e00-\u9fff]", shown), "no Chinese text on the page"
    untranslated = [text for text in ENGLISH if re.sub(r"\s+", " ", text) in shown]
    assert not untranslated, f"English texts on the Chinese page: {untranslated[:10]}"
