"""AppTest of the Seq2seq alignment page: output, variants, D, snapshots, truth overlay, bad input."""

import numpy as np
import pytest

from tests.pages.conftest import chart_data, chart_specs, decode, markdown_text, open_page, opened_page

PAGE = "pages/seq2seq.py"


at = opened_page(PAGE, timeout=600)


def _view(at, name: str):
    at.session_state["s2s_view"] = name
    at.run()
    assert not at.exception, at.exception
    return at


def test_default_input_is_decoded_with_a_heatmap(at):
    assert at.title[0].value == "Seq2seq alignment"
    assert "`2018-05-09`" in markdown_text(at)
    specs = chart_specs(at)
    # The main map and the open tab's (the variant comparison's two); the other tabs draw nothing until opened.
    assert len(specs) == 3
    z = chart_data(at, 0)
    assert z.shape == (10, len("Wednesday, May 9, 2018"))
    assert np.all(z >= 0) and np.allclose(z.sum(1), 1.0, atol=1e-4)
    assert specs[0]["layout"]["xaxis"]["ticktext"][:3] == ["W", "e", "d"]
    # the comparison's right side is local-m by default: window band drawn
    assert specs[2]["layout"].get("shapes"), "local variants draw the [p_t − D, p_t + D] band"


def test_variant_and_window_change_the_heatmap(at):
    before = chart_data(at, 0)
    at.radio(key="s2s_variant").set_value("local-p").run()
    assert not at.exception
    local = chart_data(at, 0)
    assert not np.array_equal(before, local)
    shapes = chart_specs(at)[0]["layout"]["shapes"]
    assert len(shapes) == 10 and shapes[0]["x1"] - shapes[0]["x0"] == pytest.approx(2 * 3 + 1)
    at.slider(key="s2s_window").set_value(6).run()
    wider = chart_specs(at)[0]["layout"]["shapes"]
    assert wider[0]["x1"] - wider[0]["x0"] == pytest.approx(2 * 6 + 1)
    assert not np.array_equal(local, chart_data(at, 0))
    names = [t.get("name", "") for t in chart_specs(at)[0]["data"]]
    assert any(n.startswith("p_t") for n in names)


def test_only_the_open_tab_draws_its_figures(at):
    counts = {}
    for name in ("variants", "inputs", "learn", "local-m"):
        counts[name] = len(chart_specs(_view(at, name)))
    assert counts == {"variants": 3, "inputs": 4, "learn": 2, "local-m": 1}
    assert "Local-m assumes a **monotonic** alignment" in markdown_text(at)
    _view(at, "variants")
    assert "Local-m assumes" not in markdown_text(at)


def test_training_step_slider_shows_step_0_and_says_what_it_is(at):
    # The module's page is on local-p by now: its step 0 is the warm start from luong-general.
    assert at.radio(key="s2s_variant").value == "local-p"
    _view(at, "learn")
    final = chart_data(at, 1)
    at.select_slider(key="s2s_step").set_value(0).run()
    assert not at.exception
    first = chart_data(at, 1)
    assert first.shape == final.shape and not np.allclose(first, final)
    assert "starts from the trained **Luong global, general** model: at step 0 it has that model's" in markdown_text(at)
    assert any("Step 0 shows" in c.value and "warm start" in c.value for c in at.caption)
    at.radio(key="s2s_variant").set_value("bahdanau").run()
    at.select_slider(key="s2s_step").set_value(0).run()
    assert "step 0 is the untrained (random) model" in markdown_text(at)
    assert any("Step 0 shows" in c.value and "random weights" in c.value for c in at.caption)
    assert "warm start" not in markdown_text(at)
    at.radio(key="s2s_variant").set_value("local-p").run()
    _view(at, "variants")


def test_random_example_overlays_the_true_alignment(at):
    at.button(key="s2s_random").click().run()
    assert not at.exception
    text = at.text_input(key="s2s_text").value
    assert text != "Wednesday, May 9, 2018"
    names = [t.get("name") for t in chart_specs(at)[0]["data"]]
    assert "true alignment" in names


def test_bad_inputs_get_one_line_messages():
    at = open_page(PAGE, timeout=600)
    at.text_input(key="s2s_text").input("").run()
    assert not at.exception and "empty" in at.error[0].value
    at.text_input(key="s2s_text").input("9 May 2018 " * 6).run()
    assert any("capped at 40" in w.value for w in at.warning)
    at.text_input(key="s2s_text").input("9 May 2018 ☃").run()
    assert any("☃" in w.value for w in at.warning)
    assert chart_specs(at)[0]["layout"]["xaxis"]["ticktext"][-1] == "&lt;unk&gt;"
    at.text_input(key="s2s_text").input("31 February 2018").run()
    assert "`2018-02-31`" in markdown_text(at)
    assert any("not a real calendar date" in w.value for w in at.warning)
    at.text_input(key="s2s_text").input("<img src=x onerror=alert(1)>").run()
    assert not at.exception
    assert "&lt;" in chart_specs(at)[0]["layout"]["xaxis"]["ticktext"]


def test_two_inputs_and_their_difference(at):
    from models.compare import align_tokens, difference_matrix
    from models.registry import get_mechanism

    at.radio(key="s2s_variant").set_value("bahdanau").run()
    at.text_input(key="s2s_text").input("Wednesday, May 9, 2018").run()  # an earlier test drew a random date
    _view(at, "inputs")
    # By default B differs from A in one place (the day): most cells are shared, and some change visibly.
    assert at.text_input(key="s2s_text_b").value == "Wednesday, May 19, 2018"
    default = np.asarray(chart_data(at, 3), float)
    assert np.isnan(default).mean() < 0.3 and np.nanmax(np.abs(default)) > 0.1
    at.text_input(key="s2s_text_b").input("9 June 2018").run()
    assert not at.exception
    a = get_mechanism("bahdanau").build({"text": at.text_input(key="s2s_text").value})
    b = get_mechanism("bahdanau").build({"text": "9 June 2018"})
    rows, cols = align_tokens(a.query_labels, b.query_labels), align_tokens(a.key_labels, b.key_labels)
    np.testing.assert_allclose(chart_data(at, 3), difference_matrix(a.weights, b.weights, rows, cols), atol=1e-5)
    spec = chart_specs(at)[3]
    assert spec["data"][0]["zmid"] == 0
    assert any("(A only)" in x for x in spec["data"][0]["x"]) and any("(B only)" in x for x in spec["data"][0]["x"])
    assert chart_specs(at)[2]["layout"]["title"]["text"] == f"B: {b.meta['output']}"


def test_no_attention_shows_its_context_vector_and_says_it_has_no_alpha(at):
    from models.registry import get_mechanism

    at.radio(key="s2s_variant").set_value("no-attention").run()
    assert not at.exception, at.exception
    text = at.text_input(key="s2s_text").value
    record = get_mechanism("no-attention").build({"text": text})
    assert f"`{record.meta['output']}`" in markdown_text(at)
    assert any("no attention" in i.value and "no α" in i.value for i in at.info)
    main = chart_specs(at)[0]
    assert main["data"][0]["type"] == "bar" and main["layout"]["yaxis"]["title"]["text"] == "c"
    np.testing.assert_allclose(chart_data(at, 0, "y"), record.weights, atol=1e-6)
    _view(at, "inputs")
    assert any("no α to compare" in c.value for c in at.caption)
    at.radio(key="s2s_variant").set_value("bahdanau").run()
    assert not at.info or not any("no α" in i.value for i in at.info)


def test_bottleneck_view_draws_the_committed_curve(at):
    from models.seq2seq.bottleneck import read_curve

    curve = read_curve()
    _view(at, "bottleneck")
    specs = chart_specs(at)
    assert len(specs) == 2  # the main map and the curve
    traces = specs[1]["data"]
    assert [t["name"] for t in traces] == ["No attention (last state)", "Bahdanau (additive)", "Luong global, general"]
    for trace, model in zip(traces, curve["exact_match"]):
        np.testing.assert_allclose(np.asarray(decode(trace["y"]), float), 100 * np.asarray(curve["exact_match"][model]))
    assert "On the longest inputs attention beats no attention by" in "\n".join(c.value for c in at.caption)
    assert len(specs[1]["layout"]["shapes"]) == 1  # the buckets past the training length, shaded
    _view(at, "variants")
