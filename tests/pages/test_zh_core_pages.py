"""Home, the Playground, Seq2seq and Sentence alignment in Chinese (?lang=zh): no exception, and no
English UI text of the catalog left on the page (texts, widget labels and help, figure titles, axis
titles, legends and notes). Formulas, tokens and proper names are not in the catalog, or are
translated as themselves, so they are not flagged."""

import html
import re

import pytest
from babel.messages.pofile import read_po
from streamlit.testing.v1 import AppTest

from tests.pages.conftest import APP, chart_specs
from viz.i18n_text import gettext_for, po_path

PLACEHOLDER = re.compile(r"\{\w*[^{}]*\}")
TAG = re.compile(r"<[^>]+>")


def english_texts() -> tuple[set[str], list[str]]:
    """Returns the catalog's English texts whose Chinese differs: (whole texts, the longest fixed part of each
    text of 12+ characters, or of two words and 8+ beside a placeholder, to look for inside a longer shown string)."""
    with open(po_path("zh"), "rb") as po:
        messages = [m for m in read_po(po, locale="zh") if m.id and isinstance(m.id, str)]
    whole, parts = set(), []
    for m in messages:
        if not m.string or m.string == m.id or not re.search(r"[A-Za-z]{2}", m.id):
            continue
        whole.add(m.id)
        part = max(PLACEHOLDER.split(m.id.replace("**", "")), key=len).strip()
        if len(part) >= 12 or (len(part) >= 8 and " " in part and PLACEHOLDER.search(m.id) and re.search(r"[A-Za-z]{4}", part)):
            parts.append(part)
    return whole, parts


WHOLE, PARTS = english_texts()


def untranslated(shown: list[str]) -> list[str]:
    """Returns the shown strings that are, or hold, an English text of the catalog."""
    found = []
    for text in shown:
        plain = html.unescape(TAG.sub("", text)).replace("**", "").strip()
        if plain in WHOLE or any(part in plain for part in PARTS):
            found.append(plain)
    return found


def _figure_texts(spec: dict) -> list[str]:
    layout = spec.get("layout", {})
    texts = [(layout.get("title") or {}).get("text") or ""]
    for key, axis in layout.items():
        if re.fullmatch(r"[xy]axis\d*", key) and isinstance(axis, dict):
            texts.append((axis.get("title") or {}).get("text") or "")
    texts += [a.get("text", "") for a in layout.get("annotations", [])]
    for trace in spec.get("data", []):
        texts.append(trace.get("name") or "")
        texts += [line for line in TAG.split(trace.get("hovertemplate") or "")]
        colorbar = trace.get("colorbar") or {}
        texts.append((colorbar.get("title") or {}).get("text") or "")
    return [t for t in texts if t]


def shown_texts(at: AppTest) -> list[str]:
    """Returns every text the page shows: prose, notices, expander and widget labels, options, help, and
    the figures' texts."""
    texts = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning", "error", "success"):
        texts += [e.value for e in at.get(kind)]
    texts += [e.label for e in at.get("expander")]
    texts += [b.proto.popover.label for b in at.get("popover")]
    for kind in ("radio", "slider", "select_slider", "selectbox", "text_input", "number_input", "button",
                 "button_group", "checkbox", "toggle"):
        for widget in at.get(kind):
            proto = widget.proto
            texts += [getattr(proto, "label", ""), getattr(proto, "help", "")]
            texts += [getattr(o, "content", o) if not isinstance(o, str) else o for o in getattr(proto, "options", [])]
    for spec in chart_specs(at):
        texts += _figure_texts(spec)
    return [t for t in texts if isinstance(t, str) and t]


def open_zh(page_file: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=600)
    at.query_params = {"lang": "zh"}
    at.run()
    if page_file != "pages/home.py":
        at.switch_page(page_file)
        at.query_params["lang"] = "zh"
        at.run()
    assert not at.exception, at.exception
    return at


def test_the_check_finds_english():
    assert untranslated(["Attention Lab", "<b>Exact match against input length</b>", "输出", "α"]) == \
        ["Exact match against input length"]
    assert untranslated(["**Output:** `2018-05-09`"]) == ["Output: `2018-05-09`"]


@pytest.mark.parametrize("page", ["pages/home.py", "pages/sentence_alignment.py"])
def test_page_in_chinese_shows_no_english_ui_text(page):
    at = open_zh(page)
    assert untranslated(shown_texts(at)) == []


def test_playground_in_chinese_in_every_mode():
    at = open_zh("pages/playground.py")
    assert untranslated(shown_texts(at)) == []
    at.radio(key="mode").set_value("sample").run()
    at.radio(key="mechanism").set_value("qkv-additive").run()
    assert not at.exception
    assert untranslated(shown_texts(at)) == []


def test_seq2seq_in_chinese_in_every_view():
    at = open_zh("pages/seq2seq.py")
    assert untranslated(shown_texts(at)) == []
    views = [o.content for o in at.main.get("button_group")[0].proto.options]
    assert len(views) == 5 and "看它学习" in views
    for view in ("inputs", "learn", "local-m", "bottleneck"):
        at.session_state["s2s_view"] = view
        at.run()
        assert not at.exception, at.exception
        assert untranslated(shown_texts(at)) == [], view
    at.radio(key="s2s_variant").set_value("no-attention").run()
    assert not at.exception
    assert untranslated(shown_texts(at)) == []


def test_each_page_says_its_place_in_the_story():
    from ui.story import steps_of
    from ui.tour import STEPS

    assert steps_of("pages/seq2seq.py") == [1, 2, 4, 5] and steps_of("pages/playground.py") == [len(STEPS)]
    at = open_zh("pages/seq2seq.py")
    place = at.main.get("markdown")[0].value
    assert place == f"**第 1–2, 4–5 步，共 {len(STEPS)} 步**"
    links = [(link.proto.label, link.proto.page) for link in at.get("page_link")]
    # next: step 3 (hard and soft attention), the tour's next step after the page's first two
    assert ("下一步 →：" + gettext_for("zh")(STEPS[2].title), "start_here") in links, links
    assert not any(label.startswith("← 上一步") for label, _ in links)  # step 1 has no step before it
