"""The images, feed-forward and hierarchical-attention pages in Chinese (?lang=zh): no exception, and
no English UI text (titles, explanations, widget labels, help and options, notices, figure titles, axis
titles, legends, hover labels) beyond proper names, tokens and formulas."""

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from models.captioner.model import VOCAB
from models.registry import MECHANISMS
from tests.pages.conftest import APP

# Proper names, model and file-format names, tokens and formula words that stay as they are in Chinese.
KEPT = {
    "Attention", "Lab", "MiniLM", "HAN", "GRU", "CSV", "UTF", "PNG", "JPEG", "safetensors", "REINFORCE", "Show",
    "Attend", "Tell", "Xu", "Raffel", "Ellis", "Yang", "softmax", "argmax", "tanh", "LReLU", "Query", "Key",
    "Value", "text", "label", "token", "Categorical", "mean", "colour", "position", "operatorname", "log", "exp",
}
# Citations and titles of papers, and the seq2seq models' name: proper names.
PAPERS = sorted({m.paper for m in MECHANISMS if m.paper} | {"Show, Attend and Tell", "seq2seq", "Seq2seq"}, key=len,
                reverse=True)
_LATEX = re.compile(r"\$[^$]*\$")
_CODE = re.compile(r"`[^`]*`")
_TAG = re.compile(r"<[^>]*>")
_PLACEHOLDER = re.compile(r"%\{[^}]*\}")
_QUOTED = re.compile(r"“[^”]*”")  # a caption or a document's words, quoted in a title: data, not UI
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*(?:-[A-Za-z]+)*")


def english_words(text: str) -> list[str]:
    """Returns the English words of a UI text that are not proper names, tokens or formulas."""
    for paper in PAPERS:
        text = text.replace(paper, "")
    for pattern in (_LATEX, _CODE, _TAG, _PLACEHOLDER, _QUOTED):
        text = pattern.sub(" ", text)
    return [w for w in _WORD.findall(text) if len(w) > 2 and w not in KEPT and w.lower() not in VOCAB]


def _figure_texts(spec: dict) -> list[str]:
    layout, texts = spec.get("layout", {}), []

    def title(value):
        return value.get("text") if isinstance(value, dict) else value

    texts.append(title(layout.get("title")))
    for name, value in layout.items():
        if re.fullmatch(r"[xy]axis\d*|coloraxis\d*", name):
            texts += [title(value.get("title")), title((value.get("colorbar") or {}).get("title"))]
    texts += [a.get("text") for a in layout.get("annotations", [])]
    for trace in spec.get("data", []):
        texts.append(trace.get("hovertemplate"))
        texts.append(title((trace.get("colorbar") or {}).get("title")))
        if trace.get("showlegend", True) and trace.get("type") != "image":
            texts.append(trace.get("name"))
    return [t for t in texts if isinstance(t, str)]


def ui_texts(at: AppTest) -> list[str]:
    """Returns every UI text of the page's main area: its elements, widgets and figures (not the
    sidebar's language switch, named in both languages; not the document's own words)."""
    main, texts = at.main, []
    for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning", "error", "success"):
        texts += [str(e.value) for e in main.get(kind) if 'class="han-text"' not in str(e.value)]
    texts += [e.label for e in main.get("expander")]
    for kind in ("radio", "slider", "select_slider", "number_input", "checkbox", "text_area", "text_input", "button",
                 "download_button", "button_group", "selectbox", "file_uploader"):
        for e in main.get(kind):
            texts += [getattr(e, "label", None), getattr(e, "help", None)]
            texts += [str(o) for o in getattr(e, "options", None) or []]
    for chart in main.get("plotly_chart"):
        texts += _figure_texts(json.loads(chart.proto.spec))
    return [t for t in texts if t]


def untranslated(at: AppTest) -> dict[str, list[str]]:
    return {t[:120]: words for t in ui_texts(at) if (words := english_words(t))}


def open_zh(page: str, query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=240)
    at.query_params = {"lang": "zh"}
    at.run()
    at.switch_page(page)
    at.query_params.update(query or {})
    return at.run()


def test_the_checker_finds_english_and_lets_names_tokens_and_formulas_pass():
    assert english_words("Marked steps") == ["Marked", "steps"]
    assert english_words("MiniLM 的 $\\alpha_{it}$ 与 u_w、softmax") == []
    assert english_words("真实描述：“a red circle”") == [] and english_words("描述：a red circle") == []
    assert english_words("图块 r%{customdata[0]}c%{customdata[1]}<br>α = %{z:.4f}") == []
    at = AppTest.from_file(APP, default_timeout=240)
    at.query_params = {"lang": "en"}
    at.run()
    at.switch_page("pages/feedforward.py")
    found = untranslated(at.run())  # the same page in English: its texts and its figure's are found
    assert any("Marked steps" in t for t in found) and any("time step t" in t for t in found)


@pytest.mark.parametrize("page, query, steps", [
    ("pages/images.py", {}, [("radio", "show", "hard")]),
    ("pages/images.py", {"img_view": "patches", "patch_mode": "sample"}, []),
    ("pages/feedforward.py", {"placement": "chosen", "log_y": "true", "length": "20"}, []),
    ("pages/han.py", {}, []),
    ("pages/han.py", {"han_text": "服务员很粗鲁！我们等了一个小时。菜还不错，但是太贵了。"}, []),
])
def test_the_page_in_chinese_shows_no_english_ui_text(page, query, steps):
    at = open_zh(page, query)
    for kind, key, value in steps:
        at.get(kind)  # the element exists before it is set
        getattr(at, kind)(key=key).set_value(value).run()
    assert not at.exception, at.exception
    assert at.title[0].value and not english_words(at.title[0].value)
    assert at.main.get("plotly_chart"), "the page drew no figure"
    assert untranslated(at) == {}
