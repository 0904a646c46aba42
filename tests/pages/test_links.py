"""Links that reopen a view (ui/links.py): a URL's parameters set the page's controls and text,
values the controls do not take are refused in one line, and texts travel up to a length.

The browser half (a link made by moving controls, opened in a fresh browser) is in
tests/e2e/test_links_browser.py.
"""

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.pages.conftest import APP, chart_specs, decode, open_page
from ui.link_box import HISTORY_HTML, link_box_html
from ui.links import LINK_TEXT_MAX
from ui.router import PAGE_STYLE
from viz.i18n_text import gettext_for

XSS = "<img src=x onerror=alert(1)>"


def open_link(page_file: str, params: dict) -> AppTest:
    """Returns an AppTest whose first run is `page_file` opened with these URL parameters."""
    at = AppTest.from_file(APP, default_timeout=300)
    if page_file != "pages/home.py":
        at.switch_page(page_file)
    at.query_params.update(params)
    at.run()
    assert not at.exception
    return at


def figures(at: AppTest) -> list:
    """Returns the data of every figure: per trace, its x, y and z (decoded)."""
    out = []
    for spec in chart_specs(at):
        out.append([{k: _plain(decode(t.get(k))) for k in ("x", "y", "z")} for t in spec["data"]])
    return out


def _plain(value):
    # NaN (a blank cell) becomes None, so that equal figures compare equal.
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return None if isinstance(value, float) and value != value else value


# page, URL parameters (choices by the label the control shows, as Streamlit writes them), and
# the same view made by hand: [(widget kind, key, value)]
LINKS = [
    ("pages/home.py", {"home_temperature": "0.3"}, [("slider", "home_temperature", 0.3)]),
    ("pages/playground.py", {"mechanism": "General (bilinear) score", "query_x": "-1.2", "temperature": "0.5",
                             "mode": "Hard: argmax"},
     [("radio", "mechanism", "qkv-general"), ("slider", "query_x", -1.2), ("slider", "temperature", 0.5),
      ("radio", "mode", "argmax")]),
    ("pages/seq2seq.py", {"s2s_text": "12 March 1999", "s2s_variant": "Luong global, general", "s2s_window": "5",
                          "s2s_view": "learn"},
     [("text_input", "s2s_text", "12 March 1999"), ("radio", "s2s_variant", "luong-general"),
      ("slider", "s2s_window", 5), ("segmented_control", "s2s_view", "learn")]),
    ("pages/sentence_alignment.py", {"al_text": "A dog ran", "al_pair": "The dog was running", "al_window_mode": "Local (p_t = t·S/T)"},
     [("text_input", "al_text", "A dog ran"), ("text_input", "al_pair", "The dog was running"),
      ("radio", "al_window_mode", "local")]),
    ("pages/feedforward.py", {"length": "120", "seed": "5", "log_y": "true"},
     [("slider", "length", 120), ("number_input", "seed", 5), ("checkbox", "log_y", True)]),
    ("pages/images.py", {"image_source": "random", "scene_seed": "11", "cap_temperature": "0.5"},
     [("radio", "image_source", "random"), ("number_input", "scene_seed", 11),
      ("slider", "cap_temperature", 0.5)]),
    ("pages/images.py", {"build_shape_0": "triangle", "build_colour_0": "green", "build_size_0": "20"},
     [("pills", "build_shape_0", "triangle"), ("pills", "build_colour_0", "green"), ("slider", "build_size_0", 20)]),
    ("pages/transformer.py", {"tf_text": "1 April 1990", "tf_view": "cross", "tf_head": "2",
                              "tf_position": "4"},
     [("text_input", "tf_text", "1 April 1990"), ("segmented_control", "tf_view", "cross"),
      ("selectbox", "tf_head", 2), ("slider", "tf_position", 4)]),
    ("pages/han.py", {"han_text": "The soup was cold. We sat by the door. The staff was lovely."},
     [("text_area", "han_text", "The soup was cold. We sat by the door. The staff was lovely.")]),
    ("pages/induction.py", {"ind_seed": "5", "ind_length": "41", "ind_layer": "0", "ind_text": "a b c d a b c"},
     [("number_input", "ind_seed", 5), ("slider", "ind_length", 41), ("radio", "ind_layer", 0),
      ("text_input", "ind_text", "a b c d a b c")]),
    ("pages/language_model.py", {"lm_text": "Return a new list.", "lm_layer": "0", "lm_head": "2"},
     [("text_area", "lm_text", "Return a new list."), ("selectbox", "lm_layer", 0), ("selectbox", "lm_head", 2)]),
    ("pages/inside_lm.py", {"inside_prompt": "Return a new list of the items.", "inside_step": "3", "inside_layer": "0"},
     [("text_area", "inside_prompt", "Return a new list of the items."), ("slider", "inside_step", 3),
      ("selectbox", "inside_layer", 0)]),
    ("pages/explanation.py", {"ex_model": "minilm", "ex_text": "A dog barked at the cat.", "ex_test": "permutation"},
     [("radio", "ex_model", "minilm"), ("text_input", "ex_text", "A dog barked at the cat."),
      ("radio", "ex_test", "permutation")]),
    ("pages/self_attention.py", {"sa_text": "A dog barked.", "sa_layer": "3", "sa_head": "7", "sa_merge": "true"},
     [("text_area", "sa_text", "A dog barked."), ("selectbox", "sa_layer", 3), ("selectbox", "sa_head", 7),
      ("toggle", "sa_merge", True)]),
]


@pytest.mark.parametrize(("page_file", "params", "by_hand"), LINKS, ids=[link[0] for link in LINKS])
def test_a_link_reopens_the_view_made_by_hand(page_file, params, by_hand):
    linked = open_link(page_file, params)
    assert not linked.warning, [w.value for w in linked.warning]
    made = open_page(page_file, timeout=300)
    default = figures(made)
    for kind, key, value in by_hand:
        widget = getattr(made, kind)(key=key)
        (widget.input(value) if kind in ("text_input", "text_area") else widget.set_value(value)).run()
        assert not made.exception
    assert figures(made) != default, "the link's view differs from the default view"
    assert figures(linked) == figures(made)


def test_a_transformer_link_from_before_the_shared_pickers_opens_its_view():
    # Until 3 December the Transformer's views had a layer and head picker each (tf_cross_head=2).
    old = open_link("pages/transformer.py", {"tf_view": "Cross-attention", "tf_cross_layer": "1", "tf_cross_head": "2",
                                             "tf_encoder_head": "3"})
    new = open_link("pages/transformer.py", {"tf_view": "cross", "tf_layer": "1", "tf_head": "2"})
    assert figures(old) == figures(new)
    assert chart_specs(old)[0]["layout"]["title"]["text"] == "Cross-attention: layer 1, head 2"
    assert dict(old.query_params) == {"tf_view": "cross", "tf_layer": "1", "tf_head": "2"}  # ids now
    hostile = open_link("pages/transformer.py", {"tf_cross_head": "<b>9", "tf_encoder_layer": "7"})
    assert (hostile.selectbox(key="tf_layer").value, hostile.selectbox(key="tf_head").value) == (0, 0)
    assert not dict(hostile.query_params)
    # The shown view is the encoder's: its layer "7" is refused in one line; the cross head is another view's.
    assert [w.value for w in hostile.warning] == [
        "The link's value for Layer, “7”, is not one this control takes; it shows 0."]


def test_values_a_control_does_not_take_are_refused_in_one_line_each():
    at = open_link("pages/self_attention.py", {"sa_layer": "99", "sa_head": XSS, "sa_view": "Nowhere", "sa_merge": "x"})
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 4, warnings
    assert any("Layer" in w and "“99”" in w for w in warnings)
    assert all("\n" not in w for w in warnings)
    assert not any(re.search(r"(?<!\\)<img", w) for w in warnings), "HTML from a URL is shown as text"
    assert any("\\<img" in w for w in warnings)
    plain = open_page("pages/self_attention.py")  # refused values leave the page's own defaults
    assert [at.selectbox(key=k).value for k in ("sa_layer", "sa_head")] == \
        [plain.selectbox(key=k).value for k in ("sa_layer", "sa_head")]
    assert chart_specs(at), "the page still draws its figure"


def test_a_choice_the_pills_do_not_offer_is_refused_in_one_line():
    at = open_link("pages/images.py", {"build_shape_0": "hexagon", "build_colour_0": XSS})
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 2, warnings
    assert any("Shape" in w and "“hexagon”" in w and "circle" in w for w in warnings)
    assert not any(re.search(r"(?<!\\)<img", w) for w in warnings), "HTML from a URL is shown as text"
    assert at.pills(key="build_shape_0").value == "circle" and at.pills(key="build_colour_0").value == "red"
    assert any(c.value == "True caption: a red circle" for c in at.caption)


def test_a_linked_position_past_the_edge_draws_the_object_inside_and_says_so():
    # x's range is the same for every size; a link may pair x = 52 with a 24 px object.
    at = open_link("pages/images.py", {"build_size_0": "24", "build_x_0": "52"})
    assert not at.error, "the scene is drawn, not refused"
    assert any(c.value.startswith("x = 52 puts a 24 px object past the edge; it is drawn at 40") for c in at.caption)
    at.run()  # any later run moves the slider itself
    assert at.slider(key="build_x_0").value == 40
    assert not any(c.value.startswith("x = 52") for c in at.caption)


def test_a_value_equal_to_the_default_is_not_refused():
    at = open_link("pages/self_attention.py", {"sa_layer": "0", "sa_merge": "false"})
    assert not at.warning


def test_texts_travel_up_to_the_link_limit():
    at = open_page("pages/self_attention.py", timeout=300)
    at.text_area(key="sa_text").input("A short sentence.").run()
    assert at.query_params["sa_text"] == "A short sentence."
    assert not any("Links carry" in c.value for c in at.caption)
    at.text_area(key="sa_text").input("word " * (LINK_TEXT_MAX // 5 + 10)).run()
    assert "sa_text" not in at.query_params
    assert any("Links carry texts of up to 1,000 characters" in c.value for c in at.caption)


def test_a_link_text_longer_than_the_box_takes_is_refused():
    at = open_link("pages/sentence_alignment.py", {"al_text": "x" * 6000})
    assert any("more than this box takes" in w.value for w in at.warning)
    assert at.text_input(key="al_text").value != "x" * 6000


def test_html_in_a_linked_text_is_text():
    at = open_link("pages/self_attention.py", {"sa_text": XSS})
    assert at.text_area(key="sa_text").value == XSS
    assert not any(re.search(r"(?<!\\)<img", m.value) for m in at.markdown)


def test_the_playground_table_travels_and_a_bad_one_is_refused():
    rows = [{"label": "near", "k1": 1.0, "k2": 0.0, "v1": 1.0, "v2": 1.0},
            {"label": "far", "k1": -1.0, "k2": 0.0, "v1": 0.0, "v2": 0.0}]
    at = open_link("pages/playground.py", {"kv": json.dumps(rows)})
    assert not at.warning
    assert figures(at)[0][0]["x"] == ["near", "far"]
    at.slider(key="query_x").set_value(-0.4).run()  # a later run starts from the link's rows too
    assert figures(at)[0][0]["x"] == ["near", "far"] and json.loads(at.query_params["kv"]) == rows
    for bad in ("not json", json.dumps([{"label": "a"}]), json.dumps([rows[0]] * 40), json.dumps({"a": 1})):
        broken = open_link("pages/playground.py", {"kv": bad})
        assert any("table" in w.value for w in broken.warning), bad
        assert len(figures(broken)[0][0]["x"]) == 5, "the default table"


def test_a_playground_table_with_a_bad_cell_says_so_and_keeps_the_controls():
    rows = [{"label": "a", "k1": "abc", "k2": 0.0, "v1": 1.0, "v2": 1.0}]
    at = open_link("pages/playground.py", {"kv": json.dumps(rows), "query_x": "-1.2"})
    assert not at.exception
    assert [e.value for e in at.error if "column k1 needs a number" in e.value]
    assert not figures(at)  # nothing is drawn from a table that cannot be read …
    assert at.slider(key="query_x").value == -1.2  # … and the controls, below the table, stay as they were
    at.slider(key="query_x").set_value(0.3).run()
    assert not at.exception and not figures(at)


def test_every_export_menu_has_a_link_box_that_reads_the_views_url():
    at = open_link("pages/self_attention.py", {"sa_layer": "3"})
    labels = [p.proto.popover.label for p in at.get("popover")]
    boxes = [h for h in at.get("html") if "data-al-link" in h.proto.body]
    assert labels.count("Export") == labels.count("Link") == len(boxes) > 0
    # The box shows the browser's address (tests/e2e/test_links_browser.py reads it in Chromium),
    # which Streamlit keeps equal to the URL parameters of the run.
    english = link_box_html("en", gettext_for("en"))  # the constant markup, its words in the session's language
    assert all(h.proto.body == english and h.proto.unsafe_allow_javascript for h in boxes)
    assert at.query_params["sa_layer"] == "3"


def test_the_link_box_html_never_holds_user_text():
    # The box and the history rule are the st.html elements that run a script, both constant: whatever the
    # user typed (here markup) reaches the box only as the browser's address, assigned as the textarea's
    # value, never as HTML.
    xss = "<img src=x onerror=alert(1)>"
    at = open_link("pages/self_attention.py", {"sa_text": f"The cat. {xss}"})
    assert at.text_area(key="sa_text").value == f"The cat. {xss}"
    bodies = [h.proto.body for h in at.get("html") if h.proto.body not in (PAGE_STYLE, HISTORY_HTML)]
    assert HISTORY_HTML in [h.proto.body for h in at.get("html")]
    assert bodies and all(body == link_box_html("en", gettext_for("en")) for body in bodies)
    assert all("onerror" not in body and "The cat" not in body for body in bodies)


def test_a_playground_table_with_empty_cells_keeps_working_and_its_link_holds_null():
    # An added row starts empty, and a cleared cell arrives as NaN: neither may break the page or its link.
    rows = [{"label": "near", "k1": 1.0, "k2": 0.0, "v1": 1.0, "v2": 1.0},
            {"label": "far", "k1": -1.0, "k2": 0.0, "v1": 0.0, "v2": 0.0},
            {"label": None, "k1": None, "k2": None, "v1": None, "v2": None}]
    at = open_link("pages/playground.py", {"kv": json.dumps(rows)})
    assert not at.error and figures(at)[0][0]["x"] == ["near", "far"], "the empty row is skipped"
    assert json.loads(at.query_params["kv"])[2] == rows[2], "an empty cell travels as null"
    half = [*rows[:2], {"label": "half", "k1": None, "k2": 1.0, "v1": 1.0, "v2": 1.0}]
    at = open_link("pages/playground.py", {"kv": json.dumps(half), "query_x": "-1.2"})
    assert [e.value for e in at.error if "row 3: column k1 needs a number" in e.value]
    assert at.slider(key="query_x").value == -1.2


def test_link_cells_are_json_safe_and_as_short_as_float32_allows():
    import numpy as np

    from ui.links import _link_cell

    assert _link_cell(float(np.float32(0.1))) == 0.1 and _link_cell(float(np.float32(-2.35))) == -2.35
    assert _link_cell(float("nan")) is None and _link_cell(float("inf")) is None and _link_cell(None) is None
    assert _link_cell(3) == 3.0 and _link_cell("cat") == "cat" and _link_cell(1e300) == 1e300
    assert _link_cell(10**400) == str(10**400)  # no float holds it: it travels as text


@pytest.mark.parametrize("page_file, params, label", [
    ("pages/playground.py", {"seed": "inf"}, "Seed"),
    ("pages/playground.py", {"mode": "Hard: sampled", "seed": "1e400"}, "Seed"),
    ("pages/images.py", {"cap_seed": "-inf"}, "Seed"),
    ("pages/images.py", {"image_source": "random", "scene_seed": "1e400"}, "Scene seed"),
    ("pages/feedforward.py", {"placement": "Chosen", "mark_a": "1e400"}, "First marked step"),
    ("pages/induction.py", {"ind_seed": "-inf"}, "Seed"),
])
def test_an_infinite_number_in_a_link_is_refused_in_one_line(page_file, params, label):
    # Streamlit's number box raised OverflowError on int(float("inf")) inside the widget.
    at = open_link(page_file, params)
    given = next(v for k, v in params.items() if v.lstrip("-").lower() in ("inf", "1e400"))
    assert [w.value for w in at.warning if f"for {label}, “{given}”, is not one this control takes" in w.value]
    assert chart_specs(at), "the page still draws its figure"


def test_the_query_patch_travels_after_the_patch_size_moved_its_default():
    # The query box's default is the grid's centre, which the patch size moves: the row and column
    # travel even at a default, or a link would reopen at the centre of the new grid.
    at = open_link("pages/images.py", {"image_source": "random", "img_view": "patches"})
    assert (at.query_params["patch_row"], at.query_params["patch_col"]) == ("4", "4")
    at.slider(key="patch_size").set_value(24).run()
    assert at.number_input(key="patch_row").value == 4 and at.query_params["patch_row"] == "4"
    title = chart_specs(at)[0]["layout"]["title"]["text"]
    again = open_link("pages/images.py", dict(at.query_params))
    assert chart_specs(again)[0]["layout"]["title"]["text"] == title == "Patch r4c4 attends to…"
    hostile = open_link("pages/images.py", {"img_view": "patches", "patch_row": "400",
                                            "patch_col": XSS})
    assert len(hostile.warning) == 2 and all("is not one this control takes" in w.value for w in hostile.warning)
    at.session_state["img_view"] = "captioner"
    at.run()
    assert "patch_row" not in at.query_params, "the patch view's query leaves the URL with the view"


def test_a_link_to_a_trained_model_this_server_does_not_keep_says_so():
    for given in ("../../etc/passwd", XSS, "0123456789abcdef0123456789abcdef"):
        at = open_link("pages/han.py", {"model": given})
        said = [i.value for i in at.info if "is not one this server keeps" in i.value]
        assert len(said) == 1 and "kept for 24 hours" in said[0], [i.value for i in at.info]
        assert not re.search(r"(?<!\\)<img", said[0]), "HTML from a URL is shown as text"
    assert not [i.value for i in open_link("pages/han.py", {}).info if "server keeps" in i.value]


def test_a_playground_link_with_mixed_or_huge_cells_gets_one_line_and_the_page_keeps_working():
    # Arrow takes no column of text and numbers mixed, nor an int beyond 64 bits: each broke the page
    # for the rest of the session, the rows being kept for its later runs.
    good = {"label": "near", "k1": 1.0, "k2": 0.0, "v1": 1.0, "v2": 1.0}
    cases = {
        "huge int": ([{**good, "k1": 10**30}], "entries must lie within"),
        "int beyond a float": ([{**good, "k1": 10**400}], "entries must lie within"),
        "text and numbers in one column": ([{**good, "k1": "abc"}, good], "row 1: column k1 needs a number"),
        "a number as a label": ([{**good, "label": 7}, {**good, "label": "far", "k1": -1.0}], None),
    }
    for name, (rows, message) in cases.items():
        at = open_link("pages/playground.py", {"kv": json.dumps(rows), "query_x": "-1.2"})
        assert not at.exception, (name, at.exception)
        if message:
            assert [e.value for e in at.error if message in e.value], (name, [e.value for e in at.error])
        else:
            assert not at.error and figures(at)[0][0]["x"] == ["7", "far"], name
        at.slider(key="query_x").set_value(0.3).run()  # a later run, from the kept rows
        assert not at.exception, (name, at.exception)
        assert at.slider(key="query_x").value == 0.3
