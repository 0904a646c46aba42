"""AppTest of the Inside a language model page: it opens with its defaults in English and Chinese, each
section draws what its model computed (checked against the models and a numpy oracle), links open
it as they were, and values a browser should not send get one line, never a traceback."""

import shutil

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from models.lm.generate import generation_record
from models.lm.model import run
from models.lm.quality import CHECKPOINT_DIR
from models.lm.records import load_runner
from models.registry import get_mechanism
from tests.pages.conftest import APP, chart_data, chart_specs, decode, open_page, opened_page
from ui.inside_lm import DEFAULT_PROMPT, PROMPT_MAX_CHARS
from viz.i18n_text import gettext_for

PAGE = "pages/inside_lm.py"
STEP, CHOSEN = range(2)  # the generation section's charts in its first view, in order
HEAD = MODEL = 0  # the only chart of the head view and of the model view


@pytest.fixture(scope="module")
def runner():
    return load_runner(None)


@pytest.fixture(scope="module")
def generated(runner):
    # The page's defaults: 12 tokens, greedy.
    return generation_record(runner, DEFAULT_PROMPT, max_new=12, temperature=0.0, top_k=0, seed=0)


at = opened_page(PAGE, timeout=300)


def open_link(params: dict) -> AppTest:
    app = AppTest.from_file(APP, default_timeout=300)
    app.switch_page(PAGE)
    app.query_params.update(params)
    app.run()
    assert not app.exception, app.exception
    return app


def test_generation_opens_on_the_first_step_of_what_the_model_wrote(at, generated):
    assert at.title[0].value == "Inside a language model"
    specs = chart_specs(at)
    assert len(specs) == 2  # the step view and the probabilities; the head and model views are views of their own
    n = int(generated.extras["n_prompt"])
    layers, heads = generated.weights.shape[:2]
    # Step 1: the last prompt token (query n - 1) wrote the first new token; layer L - 1 by default.
    z = chart_data(at, STEP)  # every layer's heads: 2 × 4 rows
    np.testing.assert_allclose(z, generated.weights[:, :, n - 1, :n].reshape(layers * heads, n), atol=1e-6)
    np.testing.assert_allclose(z.sum(1), 1.0, atol=1e-4)
    written = specs[CHOSEN]["data"]
    np.testing.assert_allclose(decode(written[0]["y"]), generated.extras["chosen_prob"], atol=1e-6)
    np.testing.assert_allclose(decode(written[1]["y"]), generated.extras["top_probs"][:, 0], atol=1e-6)
    assert any(generated.meta["generated_text"] in m.value.replace("\\", "") for m in at.markdown)


def test_the_step_slider_moves_the_query(at, generated):
    n = int(generated.extras["n_prompt"])
    layers = generated.weights.shape[0]
    at.slider(key="inside_step").set_value(4).run()
    assert not at.exception
    z = chart_data(at, STEP)
    heads = generated.weights.shape[1]
    assert z.shape == (layers * heads, n + 3)  # the query before the 4th written token sees n + 3 keys
    np.testing.assert_allclose(z, generated.weights[:, :, n + 2, : n + 3].reshape(layers * heads, n + 3), atol=1e-6)


def test_the_head_view_and_the_model_view_are_one_click_away(at, generated):
    layers, heads = generated.weights.shape[:2]
    at.segmented_control(key="inside_view").set_value("head").run()
    assert not at.exception and len(chart_specs(at)) == 1
    maps = generated.weights[layers - 1, 0]
    np.testing.assert_allclose(chart_data(at, HEAD), maps, atol=1e-6)
    assert np.all(maps[np.triu_indices(len(maps), 1)] == 0)
    at.selectbox(key="inside_head").set_value(2).run()
    np.testing.assert_allclose(chart_data(at, HEAD), generated.weights[layers - 1, 2], atol=1e-6)
    at.segmented_control(key="inside_view").set_value("model").run()
    assert not at.exception and len(chart_specs(at)) == 1
    assert not [box for box in at.selectbox if box.key in ("inside_layer", "inside_head")]  # every map is shown
    shown = chart_data(at, MODEL)  # layers down, heads across, a blank line between maps
    maps = generated.weights
    tiled = np.concatenate([np.concatenate(list(layer), axis=1) for layer in maps], axis=0)
    np.testing.assert_allclose(shown[~np.isnan(shown).all(1)][:, ~np.isnan(shown).all(0)], tiled, atol=1e-6)
    at.segmented_control(key="inside_view").set_value("step").run()
    assert len(chart_specs(at)) == 2


def test_the_first_tokens_of_a_longer_generation_are_the_generation_of_that_many(runner):
    # Token t depends only on the tokens before it (greedy, or sampled with the seed folded with its
    # position), so the page cuts every N from one generation of the longest instead of generating again.
    import functools

    from ui.inside_lm_generate import MAX_NEW, first_tokens, longest_new

    longest = longest_new(runner, DEFAULT_PROMPT)
    assert longest == MAX_NEW.high  # the default prompt leaves room for the slider's top
    decode_ids = functools.partial(runner.lm.tokenizer.decode, skip_special_tokens=False)
    for settings in ({"temperature": 0.0, "top_k": 0, "seed": 0}, {"temperature": 1.3, "top_k": 7, "seed": 11}):
        whole = generation_record(runner, DEFAULT_PROMPT, max_new=longest, **settings)
        for n in (1, 12, 33, longest):
            cut = first_tokens(whole, n, decode_ids)
            made = generation_record(runner, DEFAULT_PROMPT, max_new=n, **settings)
            assert (cut.query_labels, cut.key_labels, dict(cut.meta)) == (made.query_labels, made.key_labels,
                                                                          dict(made.meta))
            np.testing.assert_array_equal(cut.weights, made.weights)
            assert set(cut.extras) == set(made.extras)
            for name in made.extras:
                np.testing.assert_array_equal(np.asarray(cut.extras[name]), np.asarray(made.extras[name]))
    with pytest.raises(ValueError):
        first_tokens(whole, longest + 1, decode_ids)
    assert longest_new(runner, "word " * 200) == 0  # a prompt the longest N would cut: N is generated as asked


def test_moving_n_does_not_generate_again(monkeypatch, runner):
    import ui.inside_lm_generate as generate

    app = open_page(PAGE, timeout=300)  # N = 12 is generated as asked; the longest is written meanwhile
    generate.longest_generations().wait(timeout=300)

    def refused(*args, **kwargs):
        raise AssertionError("generated again")

    monkeypatch.setattr(generate, "cached_generation", refused)
    for n in (13, 40, 64, 5):
        app.slider(key="inside_n").set_value(n).run()
        assert not app.exception
        made = generation_record(runner, DEFAULT_PROMPT, max_new=n, temperature=0.0, top_k=0, seed=0)
        shown = decode(chart_specs(app)[CHOSEN]["data"][0]["y"])
        np.testing.assert_allclose(shown, made.extras["chosen_prob"], atol=1e-6)
        assert any(made.meta["generated_text"] in m.value.replace("\\", "") for m in app.markdown)
    # Other settings have a longest generation of their own, not written yet: N is generated as asked
    # meanwhile (here, refused: the path above really was the cut one).
    app.slider(key="inside_temperature").set_value(0.5).run()
    assert any("generated again" in e.message for e in app.exception)


def test_logit_lens_last_row_is_the_models_own_prediction(at, runner):
    at.segmented_control(key="inside_section").set_value("lens").run()
    assert not at.exception
    ids = runner.encode(DEFAULT_PROMPT).ids
    logits, _ = run(runner.lm.graphdef, runner.lm.state, ids[None], attention=False)
    z = logits[0].astype(np.float64)
    p = np.exp(z - z.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    grid = chart_data(at, 1)
    assert grid.shape == (runner.config.num_layers + 1, len(ids))
    np.testing.assert_allclose(grid[-1], p.max(-1), atol=1e-4)  # the final answer is the last row's top token
    bars = chart_data(at, 0, "y")  # the last position's final answer, layer by layer
    np.testing.assert_allclose(bars, grid[:, -1], atol=1e-6)
    assert bars[-1] == pytest.approx(p[-1].max(), abs=1e-4)
    table = at.dataframe[0].value
    assert list(table.columns) == ["", "#1", "#2", "#3", "#4", "#5"] and len(table) == runner.config.num_layers + 1


def test_knockout_of_chosen_heads_and_the_sweep(at, runner):
    at.segmented_control(key="inside_section").set_value("knockout").run()
    assert not at.exception
    chosen = at.multiselect(key="inside_heads").value
    expected = get_mechanism("lm-knockout").build({"text": DEFAULT_PROMPT, "heads": ",".join(chosen), "mode": "zero"})
    np.testing.assert_allclose(chart_data(at, 0, "y"), expected.weights, atol=1e-6)
    np.testing.assert_allclose(chart_data(at, 0, "y", trace=1), expected.extras["loss_change"], atol=1e-6)
    assert len(expected.weights) == len(chosen) + 1  # each head alone, then all chosen at once
    at.radio(key="inside_mode").set_value("first").run()
    at.toggle(key="inside_sweep").set_value(True).run()
    assert not at.exception
    sweep = chart_data(at, 1)
    assert sweep.shape == (runner.config.num_layers, runner.config.num_heads)
    alone = get_mechanism("lm-knockout").build({"text": DEFAULT_PROMPT, "heads": "1.2", "mode": "first"})
    np.testing.assert_allclose(sweep[1, 2], alone.weights[0], atol=1e-5)


def test_neuron_view_softmax_is_the_attention_row(at, runner):
    at.segmented_control(key="inside_section").set_value("neuron").run()
    assert not at.exception
    maps = runner.attention(DEFAULT_PROMPT).weights
    spec = chart_specs(at)[0]
    weights = np.asarray(decode(spec["data"][-1]["x"]), dtype=float)
    np.testing.assert_allclose(weights, maps[-1, 0, -1], atol=1e-5)  # layer L - 1, head 0, the last query
    at.selectbox(key="inside_neuron_layer").set_value(0).run()
    at.selectbox(key="inside_neuron_query").set_value(3).run()
    weights = np.asarray(decode(chart_specs(at)[0]["data"][-1]["x"]), dtype=float)
    np.testing.assert_allclose(weights, maps[0, 0, 3], atol=1e-5)
    assert np.all(weights[4:] == 0)  # causal: later keys get nothing


def test_sinks_share_and_rate_against_a_numpy_oracle(at, runner):
    at.segmented_control(key="inside_section").set_value("sinks").run()
    assert not at.exception
    maps = runner.attention(DEFAULT_PROMPT).weights.astype(np.float64)
    shares = maps[:, :, 1:, 0].mean(-1)  # mean attention on the first token over queries 1..T-1
    np.testing.assert_allclose(chart_data(at, 0), shares, atol=1e-5)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Sink rate"] == f"{np.mean(shares > 0.3):.0%}"
    assert metrics["Sink heads"] == f"{int(np.sum(shares > 0.3))} / {shares.size}"
    t = maps.shape[-1]
    assert any(f"{np.mean(1 / np.arange(2, t + 1)):.2f} on average here" in c.value for c in at.caption)  # even head
    assert any("must sum to 1" in m.value for m in at.markdown)  # the paragraph says why softmax makes a sink
    rates = chart_data(at, 1, "y")
    history = chart_data(at, 2)  # [head, step]
    np.testing.assert_allclose(rates, (history > 0.3).mean(0), atol=1e-6)  # the rate over training, per step
    np.testing.assert_allclose(chart_data(at, 1, "y", trace=1), history.max(0), atol=1e-6)


def test_flow_draws_the_route_of_the_registry_record(at):
    at.segmented_control(key="inside_section").set_value("flow").run()
    assert not at.exception
    record = get_mechanism("flow").build({"text": DEFAULT_PROMPT, "threshold": 0.04, "position": -1})
    np.testing.assert_allclose(chart_data(at, 1), record.extras["head_totals"], atol=1e-6)
    assert any(", ".join(record.meta["route_heads"]) in c.value for c in at.caption)
    drawn = sum(len(decode(t.get("x", []))) for t in chart_specs(at)[0]["data"] if t.get("mode") == "lines")
    at.slider(key="inside_flow_threshold").set_value(0.0).run()
    assert not at.exception
    every = sum(len(decode(t.get("x", []))) for t in chart_specs(at)[0]["data"] if t.get("mode") == "lines")
    assert every > drawn  # threshold 0 keeps every edge that leads to the prediction


def test_chinese_opens_with_its_texts():
    _ = gettext_for("zh")
    app = open_link({"lang": "zh"})
    assert app.title[0].value == _("Inside a language model") != "Inside a language model"
    assert len(chart_specs(app)) == 2
    for section in ("lens", "knockout", "neuron", "sinks", "flow"):
        app.segmented_control(key="inside_section").set_value(section).run()
        assert not app.exception and chart_specs(app)


@pytest.mark.parametrize("params, says", [
    ({"inside_n": "100000"}, "is not one this control takes"),
    ({"inside_temperature": "inf"}, "is not one this control takes"),
    ({"inside_top_k": "-3"}, "is not one this control takes"),
    ({"inside_prompt": "x" * (PROMPT_MAX_CHARS + 1)}, "more than this box takes"),
])
def test_values_out_of_bounds_get_one_line(params, says):
    app = open_link(params)
    assert len(app.warning) == 1 and says in app.warning[0].value
    assert len(chart_specs(app)) == 2  # the defaults are shown


def test_scripted_values_over_the_bounds_never_reach_the_model():
    app = open_page(PAGE, timeout=300)
    app.session_state["inside_prompt"] = "x" * (PROMPT_MAX_CHARS + 500)
    app.session_state["inside_n"] = 10**6
    app.run()
    assert not app.exception
    # Neither reaches the model: the text is cut to the box's bound, N goes back to its default.
    assert len(app.text_area(key="inside_prompt").value) == PROMPT_MAX_CHARS
    assert app.session_state["inside_n"] == 12
    assert len(app.warning) == 1 and "cut to its first 128" in app.warning[0].value  # the model's own bound, one line


def test_a_link_reopens_a_step(generated):
    app = open_link({"inside_step": "3", "inside_layer": "0", "inside_head": "2"})
    n = int(generated.extras["n_prompt"])
    np.testing.assert_allclose(chart_data(app, STEP)[:4], generated.weights[0, :, n + 1, : n + 2], atol=1e-6)
    app = open_link({"inside_view": "head", "inside_layer": "0", "inside_head": "2"})
    np.testing.assert_allclose(chart_data(app, HEAD), generated.weights[0, 2], atol=1e-6)


def test_a_link_reopens_a_section_and_a_bad_head_list_is_refused():
    # Bound choices travel as the labels the controls show.
    app = open_link({"inside_section": "3 Head knock-out", "inside_heads": ["L0 H1", "L9 H9"],
                     "inside_mode": "its attention put on the first token"})
    assert app.radio(key="inside_mode").value == "first"
    assert not app.exception
    assert len(app.warning) == 1 and "L9 H9" in app.warning[0].value  # no head of this model: one line


SECTIONS = ["1 Generate & watch it read", "2 Logit lens", "3 Head knock-out", "4 Neuron view", "5 Attention sinks",
            "6 Information flow"]


@pytest.mark.parametrize("section", SECTIONS)
def test_every_section_says_when_it_read_a_cut_prompt(section):
    # The GPT trained here reads 128 positions: a longer prompt is cut, and each section says so once,
    # beside what it drew from the tokens it read.
    prompt = "The cat sat on the mat and looked at the dog. " * 30  # ~1,400 characters, over 128 tokens
    assert len(prompt) <= PROMPT_MAX_CHARS
    app = open_link({"inside_section": section, "inside_prompt": prompt})
    assert chart_specs(app)
    assert len(app.warning) == 1 and "cut to its first 128" in app.warning[0].value
    short = open_link({"inside_section": section})
    assert len(short.warning) == 0 and chart_specs(short)


def test_a_large_sweep_asks_first_and_one_above_the_bound_is_refused(monkeypatch):
    import ui.inside_lm_knockout as knockout

    monkeypatch.setattr(knockout, "LARGE_SWEEP", 1)  # the GPT trained here counts as large
    app = open_link({"inside_section": "3 Head knock-out"})
    app.toggle(key="inside_sweep").set_value(True).run()
    assert not app.exception and len(chart_specs(app)) == 1  # only the chosen heads' bars: it asks first
    app.checkbox(key="inside_sweep_confirm").check().run()
    assert not app.exception and len(chart_specs(app)) == 2
    monkeypatch.setenv("ATTENTION_LAB_MAX_SWEEP", "10")
    app.run()
    assert not app.exception and len(app.error) == 1 and "above this server's bound" in app.error[0].value


def test_a_folder_under_the_model_root(tmp_path, monkeypatch, generated):
    root = tmp_path / "models"
    shutil.copytree(CHECKPOINT_DIR, root / "my-gpt")
    monkeypatch.setenv("ATTENTION_LAB_MODEL_ROOT", str(root))
    app = open_page(PAGE, timeout=300)
    app.text_input(key="inside_model_dir").set_value("my-gpt").run()
    assert not app.exception
    assert any(c.value.startswith("my-gpt (") for c in app.caption)
    app.segmented_control(key="inside_view").set_value("head").run()
    np.testing.assert_allclose(chart_data(app, HEAD), generated.weights[-1, 0], atol=1e-5)  # the same weights
    app.text_input(key="inside_model_dir").set_value("../outside").run()
    assert not app.exception
    assert [e.value for e in app.error] == ["that model folder is not available here; the folders you may use are "
                                            "the ones the operator put under the model root"]
