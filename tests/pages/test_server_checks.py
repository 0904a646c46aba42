"""Widget ranges are enforced in the browser only: every value a page uses is checked again on
the server, and an out-of-range value gets one line, never a traceback or a wrong figure."""

import pytest
import streamlit

from tests.pages.conftest import chart_specs, open_page, send_widget_value

OUT_OF_RANGE = {
    "pages/home.py": {"home_temperature": 10**6},
    "pages/playground.py": {"temperature": -5.0, "samples": 10**9},
    "pages/seq2seq.py": {"s2s_window": 999},
    "pages/feedforward.py": {"length": 10**9, "seed": -1},
    "pages/sentence_alignment.py": {"al_tau_cosine": 0.0},
    "pages/han.py": {"han_text": "The food was good. " * 2_000},  # 38,000 characters; the box takes 20,000
    "pages/transformer.py": {"tf_position": 999},
    "pages/induction.py": {"ind_length": 10**6, "ind_seed": -1},
    "pages/language_model.py": {"lm_text": "The for statement. " * 1_200},  # 22,800 characters; the box takes 20,000
    "pages/inside_lm.py": {"inside_prompt": "x" * 2_500, "inside_n": 10**6},
    "pages/explanation.py": {"ex_model": "minilm", "ex_text": "x" * 5_000},
}


@pytest.mark.parametrize("page", OUT_OF_RANGE, ids=lambda p: p.removeprefix("pages/"))
def test_out_of_range_session_values_never_reach_a_model(page):
    at = open_page(page, timeout=300)
    if page == "pages/playground.py":
        at.session_state["mode"] = "sample"  # draws the samples slider, whose stored value is out of range
    for key, value in OUT_OF_RANGE[page].items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    for key, value in OUT_OF_RANGE[page].items():
        shown = at.session_state[key] if key in at.session_state else None
        assert shown != value or at.error, f"{key}={value!r} was used as it came"


def test_a_widget_that_returns_a_value_outside_its_range_gets_one_line(monkeypatch):
    # What the server would see if the browser's range check were bypassed and Streamlit's own
    # reset did not happen: the page's check of the option still refuses the value.
    real_slider = streamlit.slider

    def scripted_slider(label, *args, **kwargs):
        value = real_slider(label, *args, **kwargs)
        return 10**6 if kwargs.get("key") == "home_temperature" else value

    monkeypatch.setattr(streamlit, "slider", scripted_slider)
    at = open_page("pages/home.py")
    assert not at.exception
    assert [e.value for e in at.error] == ["temperature must be a number from 0.05 to 10, got 1000000"]
    assert not chart_specs(at)  # nothing was drawn from the refused value


def test_a_head_index_outside_the_model_gets_one_line(monkeypatch):
    from streamlit.delta_generator import DeltaGenerator

    real_selectbox = DeltaGenerator.selectbox

    def scripted_selectbox(self, label, options, *args, **kwargs):
        value = real_selectbox(self, label, options, *args, **kwargs)
        return 99 if kwargs.get("key") == "sa_layer" else value

    monkeypatch.setattr(DeltaGenerator, "selectbox", scripted_selectbox)
    at = open_page("pages/self_attention.py", timeout=300)
    assert not at.exception
    assert [e.value for e in at.error] == ["pick a value from 0 to 5"]


def test_an_empty_choice_of_shape_gets_one_line():
    # The Shape pills are required, so a browser cannot empty them; a crafted message could.
    at = open_page("pages/images.py")
    at.pills(key="build_shape_0").set_value(None).run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == ["unknown shape or colour: None, red; move or shrink an object"]
    at.pills(key="build_shape_0").set_value("square").run()
    assert not at.error and any(c.value == "True caption: a red square" for c in at.caption)


@pytest.mark.parametrize("edit", [
    {"edited_rows": {"99": {"k1": 2.0}}},  # a row past the table's end
    {"deleted_rows": [99]},
    {"edited_rows": {"0": {"nope": 2.0}}},  # a column the table has not
    {"added_rows": [{"nope": 1}]},
    {"deleted_rows": ["x"]},
    {"added_rows": [{"label": "x", "k1": 1.0, "k2": 1.0, "v1": 1.0, "v2": 1.0}] * 2000},  # each row cost more than the last
], ids=["edit past the end", "delete past the end", "unknown column", "added unknown column", "delete by text", "2000 rows"])
def test_a_table_edit_the_table_cannot_take_gets_one_line_and_a_fresh_table(edit):
    import json

    at = open_page("pages/playground.py")
    before = chart_specs(at)
    send_widget_value(at, "kv_table", json.dumps(edit))
    assert not at.exception, at.exception
    assert [w.value for w in at.warning if w.value.startswith("That edit of the table could not be applied")]
    assert chart_specs(at) == before  # the table starts again from its rows
    at.slider(key="query_x").set_value(0.5).run()  # and the page goes on
    assert not at.exception and not at.warning
    assert chart_specs(at) != before


def test_a_table_edit_a_browser_makes_is_applied():
    import json

    at = open_page("pages/playground.py")
    send_widget_value(at, "kv_table", json.dumps({"edited_rows": {"0": {"label": "mine"}},
                                                  "added_rows": [{"label": "new", "k1": 0.5, "k2": 0.5, "v1": 1.0, "v2": 0.0}]}))
    assert not at.exception and not at.warning
    assert chart_specs(at)[0]["data"][0]["x"][0] == "mine" and chart_specs(at)[0]["data"][0]["x"][-1] == "new"
