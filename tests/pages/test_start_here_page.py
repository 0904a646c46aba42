"""The guided tour ("Start here"): every step in English and Chinese, its one control, its link to
the full page, and the step in the URL."""

import json
from urllib.parse import parse_qs

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


@pytest.mark.parametrize("given", ["0", "11", "abc", "2.5", "-1", "１"])
def test_a_links_step_that_is_no_step_gets_one_line(given):
    at = open_tour({"step": given})
    assert not at.exception
    assert len(at.warning) == 1 and "1 to 10" in at.warning[0].value
    assert at.header[0].value.startswith("1. ") and at.query_params["step"] == "1"


def test_a_control_value_no_choice_holds_shows_the_default():
    from ui.tour import Control

    control = Control("x", ("a", "b"), "b")
    assert [control.read(v) for v in ("a", "b", "c", None, ["a"], 1)] == ["a", "b", "b", "b", "b", "b"]
