"""AppTest of the Sentence alignment page on the installed all-MiniLM-L6-v2."""

import json

import numpy as np

from tests.pages.conftest import chart_data, chart_specs, opened_page

XSS = "<img src=x onerror=alert(1)>"


at = opened_page("pages/sentence_alignment.py", timeout=300)


def test_default_paraphrases_align_and_pairs_are_listed(at):
    spec = chart_specs(at)[0]
    assert "cosine" in spec["layout"]["title"]["text"] and "global" in spec["layout"]["title"]["text"]
    z = chart_data(at, 0)
    y, x = list(spec["data"][0]["y"]), list(spec["data"][0]["x"])
    assert z.shape == (6, 7) and y[1] == "cat" and x[-1] == "rug"
    np.testing.assert_allclose(z.sum(axis=1), 1.0, atol=1e-4)
    assert x[int(z[y.index("mat")].argmax())] == "rug"
    table = at.dataframe[0].value
    rows = {(a, b) for a, b in zip(table["sentence 1"], table["sentence 2"])}
    assert ("cat", "cat") in rows and ("mat", "rug") in rows
    assert at.get("popover"), "the heatmap has an Export menu"


def test_score_and_local_window_change_the_heatmap(at):
    before = chart_data(at, 0)
    at.radio(key="al_score").set_value("scaled-dot").run()
    scaled = chart_data(at, 0)
    assert not at.exception and not np.allclose(scaled, before)
    at.radio(key="al_window_mode").set_value("local").run()
    local = chart_data(at, 0)
    shapes = chart_specs(at)[0]["layout"]["shapes"]
    assert len(shapes) == 12  # a window outline and a p_t dot per row
    assert (local == 0).sum() > 0 and not np.allclose(local, scaled)
    at.slider(key="al_window").set_value(5).run()
    wider = chart_data(at, 0)
    assert (wider == 0).sum() < (local == 0).sum()
    assert "local, D = 5" in chart_specs(at)[0]["layout"]["title"]["text"]
    at.radio(key="al_window_mode").set_value("global").run()
    at.radio(key="al_score").set_value("cosine").run()


def test_empty_sentence_shows_a_message(at):
    at.text_input(key="al_pair").input("  ").run()
    assert not at.exception and not at.error
    assert any("both boxes" in i.value for i in at.info)
    assert not chart_specs(at)
    at.text_input(key="al_pair").input("A cat was sitting on the rug").run()


def test_html_in_a_sentence_shows_as_text(at):
    at.text_input(key="al_text").input(f"{XSS} cat").run()
    assert not at.exception and not at.error
    labels = json.dumps(chart_specs(at)[0]["data"][0]["y"])
    assert "<" not in labels and "&lt;" in labels


def test_temperature_reshapes_alpha_as_the_softmax_says(at):
    # softmax(s/τ₂) = normalise(softmax(s/τ₁)^(τ₁/τ₂)) row by row: the map at τ₂ follows from the map at τ₁.
    at.slider(key="al_tau_cosine").set_value(0.05).run()
    sharp = chart_data(at, 0)
    at.slider(key="al_tau_cosine").set_value(0.2).run()
    soft = chart_data(at, 0)
    assert not at.exception and "τ = 0.2" in chart_specs(at)[0]["layout"]["title"]["text"]
    expected = sharp ** (0.05 / 0.2)
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(soft, expected, rtol=2e-3, atol=1e-5)
    assert soft.max(axis=1).mean() < sharp.max(axis=1).mean()  # a higher τ spreads α
    at.slider(key="al_tau_cosine").set_value(0.05).run()


def test_parts_the_vocabulary_cannot_spell_are_named_per_sentence(at):
    at.text_input(key="al_text").input("We ate 🍕🍕🍕 on the rug.").run()
    assert not at.exception
    notices = [w.value for w in at.warning]
    assert len(notices) == 1 and notices[0].startswith("Sentence 1: 1 part of the text MiniLM's vocabulary cannot "
                                                       "spell became \\[UNK\\]") and "🍕🍕🍕" in notices[0], notices
    at.text_input(key="al_text").input("The cat sat on the mat.").run()
    assert not at.warning and chart_specs(at)


def test_an_xlm_r_folder_aligns_english_with_chinese(monkeypatch):
    from pathlib import Path

    from models.registry import get_mechanism
    from tests.pages.conftest import open_page

    root = Path(__file__).resolve().parents[1] / "fixtures" / "encoders"
    monkeypatch.setenv("ATTENTION_LAB_MODEL_ROOT", str(root))
    app = open_page("pages/sentence_alignment.py", timeout=300)
    app.text_input(key="al_model_dir").set_value("xlm_roberta").run()
    app.text_input(key="al_text").set_value("The cat sat on the mat").run()
    app.text_input(key="al_pair").set_value("猫坐在垫子上").run()
    assert not app.exception, app.exception
    expected = get_mechanism("sentence-alignment").build(
        {"text": "The cat sat on the mat", "text_pair": "猫坐在垫子上", "model_dir": str(root / "xlm_roberta")})
    spec = chart_specs(app)[0]
    assert list(spec["data"][0]["x"]) == list(expected.key_labels)  # XLM-R's own pieces, no <s> or </s>
    np.testing.assert_allclose(chart_data(app, 0), expected.weights, atol=1e-6)
