"""Translations: the Chinese catalog is complete and up to date with the marked texts, and the
language comes from the sidebar switch, the link's ?lang= and the browser's language."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from streamlit.testing.v1 import AppTest

from tests.pages.conftest import APP, ROOT
from ui.i18n import language_of_locale
from viz.i18n_text import LANGUAGES, catalog, po_path

CAPTION_EN = "Attention Lab runs on this machine: no model hubs, no CDNs, no telemetry."
PLACEHOLDER = re.compile(r"\{(\w*)[^{}]*\}")


def _catalog(language: str):
    with open(po_path(language), "rb") as po:
        return read_po(po, locale=language)


def _text(message_id) -> str:
    return message_id if isinstance(message_id, str) else message_id[0]


@pytest.mark.parametrize("language", [lang for lang in LANGUAGES if lang != "en"])
def test_every_message_has_a_translation_with_the_same_placeholders(language):
    untranslated, fuzzy, placeholders = [], [], []
    for message in _catalog(language):
        if not message.id:
            continue
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if not all(s and s.strip() for s in strings):
            untranslated.append(_text(message.id))
        elif message.fuzzy:
            fuzzy.append(_text(message.id))
        elif any(set(PLACEHOLDER.findall(s)) != set(PLACEHOLDER.findall(_text(message.id))) for s in strings):
            placeholders.append(_text(message.id))  # .format would raise KeyError, or drop a value
    assert not untranslated, f"{len(untranslated)} messages have no {language} translation: {untranslated}"
    assert not fuzzy, f"fuzzy (guessed) translations are shown in English; check and unmark them: {fuzzy}"
    assert not placeholders, f"translations whose {{placeholders}} differ from the English: {placeholders}"
    assert catalog(language).gettext("Start here") != "Start here"  # the .po compiles and is used


def test_the_catalogs_hold_exactly_the_texts_marked_in_the_source(tmp_path):
    pot = tmp_path / "messages.pot"
    subprocess.run(["sh", "tools/i18n.sh", "extract", str(pot)], cwd=ROOT, check=True, capture_output=True,
                   env={"PYBABEL": str(Path(sys.executable).parent / "pybabel"), "PATH": "/usr/bin:/bin"})
    with open(pot, "rb") as f:
        marked = {_text(m.id) for m in read_po(f) if m.id}
    assert "Start here" in marked and CAPTION_EN in marked  # the extraction found the registry and app.py
    for language in LANGUAGES:
        if language == "en":
            continue
        held = {_text(m.id) for m in _catalog(language) if m.id}
        missing, stale = sorted(marked - held), sorted(held - marked)
        assert not missing, f"marked in the source but not in the {language} catalog (run make messages): {missing}"
        assert not stale, f"in the {language} catalog but no longer in the source (run make messages): {stale}"


# One Chinese term each (issue 53): 词元 for token, 学到的 for learned. "token" may stay only as a placeholder
# ({token}) or inside a name (tokenizer.json).
ENGLISH_TOKEN = re.compile(r"(?<![A-Za-z_{.\-/|])tokens?(?![A-Za-z_}])", re.IGNORECASE)
OTHER_LEARNED = ("学得", "学出来", "可学习")


def test_the_chinese_catalog_says_token_and_learned_one_way():
    mixed = []
    for message in _catalog("zh"):
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        for text in (s for s in strings if s and message.id):
            if ENGLISH_TOKEN.search(text) or any(word in text for word in OTHER_LEARNED):
                mixed.append(text)
    assert mixed == []
    zh = catalog("zh").gettext
    assert "词元" in zh("query token") and "学到的" in zh("learned weights")


def test_browser_languages_map_to_the_apps():
    assert [language_of_locale(x) for x in ("zh-CN", "zh", "ZH_tw", "zh-Hans-CN", "en-US", "de-DE", "", None)] == \
        ["zh", "zh", "zh", "zh", "en", "en", "en", "en"]


def _run(query: dict | None = None, locale: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params = dict(query or {})
    at.context = {"locale": locale}
    return at.run()


def _caption(at: AppTest) -> str:
    return at.sidebar.caption[0].value


def test_the_browsers_language_chooses_on_a_first_visit():
    zh = _run(locale="zh-CN")
    assert not zh.exception
    assert _caption(zh) == catalog("zh").gettext(CAPTION_EN) != CAPTION_EN
    assert "lang" not in zh.query_params  # the browser's own language: the address stays bare (ui/links.py's Back)
    en = _run(locale="en-GB")
    assert _caption(en) == CAPTION_EN and "lang" not in en.query_params


def test_the_links_language_wins_over_the_browsers_and_a_bad_one_gets_one_line():
    at = _run({"lang": "zh"}, locale="en-US")
    assert _caption(at) == catalog("zh").gettext(CAPTION_EN)
    at = _run({"lang": "en"}, locale="zh-CN")
    assert _caption(at) == CAPTION_EN
    at = _run({"lang": "klingon"}, locale="zh-CN")
    assert not at.exception
    assert _caption(at) == catalog("zh").gettext(CAPTION_EN)  # the browser's language, then
    warnings = [w.value for w in at.sidebar.warning]
    assert len(warnings) == 1 and "klingon" in warnings[0]
    assert at.query_params["lang"] == "zh"


def test_the_sidebar_switch_changes_the_language_and_the_link():
    at = _run(locale="en-US")
    switch = at.sidebar.get("button_group")[0]
    assert _caption(at) == CAPTION_EN
    switch.set_value("zh").run()
    assert _caption(at) == catalog("zh").gettext(CAPTION_EN)
    assert at.query_params["lang"] == "zh"
    at.switch_page("pages/start_here.py")
    at.query_params.pop("lang", None)  # a page switch empties the URL's parameters; the session keeps the language
    at.run()
    assert at.title[0].value == catalog("zh").gettext("Start here") != "Start here"
    assert at.query_params["lang"] == "zh"
    at.sidebar.get("button_group")[0].set_value("en").run()
    assert at.title[0].value == "Start here" and at.query_params["lang"] == "en"
