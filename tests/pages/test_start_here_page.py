"""The guided tour ("Start here"): every step in English and Chinese, its one control, its link to
the full page, and the step in the URL."""

import html
import json
import re
from urllib.parse import parse_qs

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from models.registry import PAGES
from tests.pages.conftest import APP, chart_specs
from ui.tour import STEPS
from viz.formulas import formula_lines
from viz.i18n_text import gettext_for

PAGE = "pages/start_here.py"


def open_tour(query: dict) -> AppTest:
    """Returns an AppTest that has opened the tour with these URL parameters (e.g. {"step": "3"})."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params = dict(query)
    at.run()
    at.switch_page(PAGE)
    return at.run()


def _data(at: AppTest) -> str:
    specs = chart_specs(at)
    assert len(specs) == 1, f"{len(specs)} charts; a step shows one figure"
    return json.dumps(specs[0]["data"], sort_keys=True)


def _control(at: AppTest, step):
    key = f"tour_{step.key}_control"
    return at.select_slider(key=key) if step.control.kind == "select_slider" else at.radio(key=key)


def test_the_tour_is_first_in_the_sidebar_and_its_steps_are_complete():
    assert PAGES[0].file == PAGE and not PAGES[0].default
    files = {page.file for page in PAGES}
    assert 8 <= len(STEPS) <= 12 and len({s.key for s in STEPS}) == len(STEPS)
    for step in STEPS:
        words = len(step.body.split())
        assert words <= 130, f"{step.key}: {words} words"
        assert step.legend and all(symbol and meaning for symbol, meaning in step.legend), step.key
        assert step.control.default in step.control.choices and len(step.control.choices) >= 2, step.key
        assert step.see and step.question and step.answer and step.page in files, step.key


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("number", range(1, len(STEPS) + 1))
def test_every_step_shows_its_texts_one_live_figure_and_a_link_to_its_page(number, language):
    step = STEPS[number - 1]
    _ = gettext_for(language)
    at = open_tour({"step": str(number), "lang": language})
    assert not at.exception, at.exception
    assert at.header[0].value == f"{number}. {_(step.title)}"
    texts = [m.value for m in at.markdown]
    assert _(step.body) in texts
    assert any(_(step.see) in t for t in texts)
    if language == "zh":
        assert _(step.body) != step.body and _(step.see) != step.see and _("Symbol") != "Symbol"
    assert [x.value.strip("$\n") for x in at.get("latex")] == [formula_lines(step.formula)]
    legend = next(t for t in texts if t.startswith(f"| {_('Symbol')} |"))
    assert all(f"${symbol}$" in legend and _(meaning) in legend for symbol, meaning in step.legend)
    assert [e.label for e in at.expander] == [_("Question: {question}").format(question=_(step.question))]
    assert _(step.answer) in texts  # inside the expander, shown on click
    link = at.get("page_link")[0].proto
    assert link.page == step.page.removeprefix("pages/").removesuffix(".py")
    query = {k: v[0] for k, v in parse_qs(link.query_string).items()}
    assert query == {**step.page_params(step.control.default), "lang": language}
    assert at.query_params["step"] == str(number) and at.query_params["lang"] == language

    before = _data(at)
    other = next(c for c in step.control.choices if c != step.control.default)
    _control(at, step).set_value(other).run()
    assert not at.exception, at.exception
    assert _data(at) != before, f"step {number}: the control does not change the figure"
    query = {k: v[0] for k, v in parse_qs(at.get("page_link")[0].proto.query_string).items()}
    assert query == {**step.page_params(other), "lang": language}  # the full page opens in the same state


def test_previous_and_next_walk_the_steps_and_the_url_follows():
    at = open_tour({})
    assert at.header[0].value.startswith("1. ") and at.query_params["step"] == "1"
    assert at.button(key="tour_previous_top").disabled
    at.button(key="tour_next_top").click().run()
    at.button(key="tour_next_bottom").click().run()
    assert at.header[0].value.startswith("3. ") and at.query_params["step"] == "3"
    at.button(key="tour_previous_top").click().run()
    assert at.header[0].value.startswith("2. ") and at.query_params["step"] == "2"
    at.switch_page("pages/home.py").run()
    at.switch_page(PAGE)
    at.query_params.pop("step", None)  # a page switch empties the URL; the session remembers the step
    at.run()
    assert at.header[0].value.startswith("2. ") and at.query_params["step"] == "2"
    last = open_tour({"step": str(len(STEPS))})
    assert last.button(key="tour_next_top").disabled


@pytest.mark.parametrize("given", ["0", str(len(STEPS) + 1), "abc", "2.5", "-1", "１"])
def test_a_links_step_that_is_no_step_gets_one_line(given):
    at = open_tour({"step": given})
    assert not at.exception
    assert len(at.warning) == 1 and f"1 to {len(STEPS)}" in at.warning[0].value
    assert at.header[0].value.startswith("1. ") and at.query_params["step"] == "1"


def test_a_control_value_no_choice_holds_shows_the_default():
    from ui.tour import Control

    control = Control("x", ("a", "b"), "b")
    assert [control.read(v) for v in ("a", "b", "c", None, ["a"], 1)] == ["a", "b", "b", "b", "b", "b"]


# ------------------------------------------------------------------ each step's figure and formula

MARK = "§"
_FIELD = re.compile(r"%\{[^}]*\}")  # a hovertemplate's %{y}, %{z:.4f}
_TAG = re.compile(r"<[^>]*>")
_WORD = re.compile(r"[A-Za-z]{2,}")  # a word to translate; single letters are symbols (t, p_t, α_s, c)


def _figure_texts(spec: dict) -> list[tuple[str, str]]:
    """Returns (where, text) for every text a figure's builder writes: the title, axis and colour bar
    titles, annotations, the names of traces that show one (legend or hover), the literal text of
    hovertemplates, and the texts of text traces. Tick labels are the record's labels, not listed."""
    layout, data = spec["layout"], spec["data"]

    def title(container) -> str | None:
        value = (container or {}).get("title")
        return value.get("text") if isinstance(value, dict) else value

    found = [("title", title(layout))]
    found += [(f"{name}.title", title(axis)) for name, axis in layout.items() if re.fullmatch(r"[xy]axis\d*", name)]
    found += [(f"{name}.colorbar", title(axis.get("colorbar"))) for name, axis in layout.items()
              if name.startswith("coloraxis")]
    found += [(f"annotations[{i}]", note.get("text")) for i, note in enumerate(layout.get("annotations") or [])]
    for i, trace in enumerate(data):
        listed = trace.get("showlegend") is not False and layout.get("showlegend") is not False
        hovered = trace.get("hoverinfo") not in ("skip", "none") and "<extra></extra>" not in (trace.get("hovertemplate") or "")
        if listed or hovered:
            found.append((f"data[{i}].name", trace.get("name")))
        found.append((f"data[{i}].hovertemplate", _FIELD.sub("", trace.get("hovertemplate") or "")))
        found.append((f"data[{i}].colorbar", title(trace.get("colorbar"))))
        if "text" in str(trace.get("mode", "")):
            found += [(f"data[{i}].text", str(t)) for t in trace.get("text") or []]
    return [(where, text) for where, text in found if isinstance(text, str) and text]


def _labels(record) -> set[str]:
    # The record's own texts (tokens, characters, words, a caption): data, not the builder's words.
    values = [*record.query_labels, *record.key_labels, *np.asarray(record.extras.get("words", [])).reshape(-1)]
    return {html.escape(str(v), quote=True) for v in values} | {str(v) for v in values}


@pytest.mark.parametrize("number", range(1, len(STEPS) + 1))
def test_every_steps_figure_writes_its_texts_through_gettext(number):
    # The tour passes its gettext to every builder: with one that marks every text, a text without
    # the mark is one a Chinese figure would show in English ("p_t (window ±3)", "marked steps").
    step = STEPS[number - 1]
    for value in step.control.choices[:3]:
        record = step.record(value)
        spec = step.figure(record, value, lambda text: MARK + text).to_plotly_json()
        labels = _labels(record)
        unmarked = [(where, text) for where, text in _figure_texts(spec)
                    if MARK not in text and text not in labels and _WORD.search(_TAG.sub("", text))]
        assert unmarked == [], f"step {number} ({value}): texts not through gettext: {unmarked}"


LINE_LIMIT_PX = 300  # the text column is 296 px wide at a 1,280 px window, 358 px on a 390 px phone


@pytest.mark.parametrize("step", STEPS, ids=[s.key for s in STEPS])
def test_every_formula_line_fits_the_text_column(step):
    from tests.viz.latex_width import CALIBRATION, latex_px

    assert all(0.84 <= latex_px(line) / px <= 1.14 for px, line in CALIBRATION)  # the estimate is still calibrated
    typeset = formula_lines(step.formula)
    lines = typeset.removeprefix(r"\small\begin{gathered}").removesuffix(r"\end{gathered}").split("\\\\ ")
    assert len(lines) >= 2 and r"\begin" not in typeset.removeprefix(r"\small\begin{gathered}")  # one row of math a line
    widths = {line: round(latex_px(line)) for line in lines}
    assert max(widths.values()) <= LINE_LIMIT_PX, f"{step.key}: lines wider than the column: {widths}"


def test_the_steps_follow_the_order_the_ideas_appeared():
    # Bahdanau (2014/15), Xu's hard and soft (Feb 2015), Luong (Aug 2015), Raffel & Ellis (2015),
    # Yang (2016), self-attention and the Transformer (2017), then the general view. The 2019 debate on whether α
    # explains sits right after self-attention, where a reader first takes a map of α for a reason.
    assert [s.key for s in STEPS] == ["bottleneck", "bahdanau", "hard-soft", "luong-global", "luong-local",
                                      "feedforward", "hierarchical", "self-attention", "explanation", "transformer",
                                      "general"]


def test_step_links_name_what_the_step_shows_by_id():
    by_key = {s.key: s for s in STEPS}
    bottleneck = by_key["bottleneck"].page_params
    assert bottleneck("last")["s2s_variant"] == "no-attention" and bottleneck("attention")["s2s_variant"] == "bahdanau"
    assert bottleneck("last")["s2s_view"] == bottleneck("attention")["s2s_view"] == "bottleneck"
    assert by_key["hard-soft"].page_params("hard") == {"img_view": "captioner", "show": "hard"}
    assert [by_key["transformer"].page_params(kind)["tf_view"] for kind in ("encoder", "decoder", "cross")] == [
        "encoder", "decoder", "cross"]
    assert by_key["self-attention"].page_params("3")["sa_view"] == "head"


LINKS = [(step, value) for step in STEPS for value in dict.fromkeys((step.control.default, step.control.choices[-1]))]


@pytest.mark.parametrize(("step", "value"), LINKS, ids=[f"{step.key}-{value}" for step, value in LINKS])
def test_each_steps_link_opens_its_page_in_the_state_it_names(step, value):
    # The full page takes every value of the link: none is refused (one warning line) or replaced.
    params = step.page_params(value)
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params = {**params, "lang": "zh"}
    at.run()
    at.switch_page(step.page)
    at.run()
    assert not at.exception, at.exception
    refused = [w.value for w in at.warning if "链接" in w.value or "link" in w.value]
    assert refused == [], f"{step.key}: {refused}"
    shown = {key: at.session_state[key] for key in params}  # the controls' values: ids, numbers, texts
    assert all(_same(shown[key], given) for key, given in params.items()), f"{step.key}: {shown} for {params}"


def _same(value, given: str) -> bool:
    try:
        return float(value) == float(given)  # a slider's 5.0 for the link's "5"
    except (TypeError, ValueError):
        return str(value) == given
