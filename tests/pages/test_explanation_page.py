"""AppTest of "Is attention an explanation?": α beside each attribution method on the same input, checked against
the models' own records and the date fields' truth; the 2019 tests' α and α̃ as their records hold them."""

import numpy as np
import pytest

from models.encdec.quality import held_out_examples
from models.explain.dates import truth
from models.explain.measures import alignment_error_rate, shares
from models.registry import get_mechanism
from tests.pages.conftest import chart_specs, decode, open_page, opened_page
from viz.i18n_text import gettext_for

PAGE = "pages/explanation.py"
at = opened_page(PAGE, timeout=300)


def heatmaps(app, chart: int) -> list[np.ndarray]:
    return [np.asarray(decode(t["z"]), float) for t in chart_specs(app)[chart]["data"] if t["type"] == "heatmap"]


def titles(app, chart: int) -> list[str]:
    return [a["text"] for a in chart_specs(app)[chart]["layout"]["annotations"]]


def test_the_date_model_draws_alpha_and_each_method_scored_against_the_fields(at):
    assert not at.exception
    example = held_out_examples(1_000)[0]  # the page offers the first 1,000 held-out dates
    cross = get_mechanism("transformer-cross").build({"text": example.source})
    alpha = np.asarray(cross.weights[-1]).mean(0)
    panels = heatmaps(at, 0)
    np.testing.assert_allclose(panels[0], shares(alpha), atol=1e-5)
    sure, possible, rows = truth(example, alpha.shape[-1])
    assert titles(at, 0)[0].endswith(f"AER {alignment_error_rate([alpha], [sure], [possible], [rows]):.2f}")
    methods = at.multiselect(key="ex_methods").value
    assert len(panels) == 1 + len(methods) and "norm" in methods
    norm = get_mechanism("transformer-cross-attribution").build({"text": example.source, "method": "norm"})
    np.testing.assert_allclose(panels[1 + methods.index("norm")], shares(norm.weights[-1]), atol=1e-5)
    at.multiselect(key="ex_methods").select("alti").run()
    assert any("alti does not apply" in c.value for c in at.caption)  # a refused method: its reason, one line
    assert len(heatmaps(at, 0)) == len(panels)
    at.multiselect(key="ex_methods").unselect("alti").run()


@pytest.mark.parametrize("model", ["minilm", "gpt"])
def test_the_self_attention_models_draw_every_method_over_the_same_tokens(at, model):
    at.radio(key="ex_model").set_value(model).run()
    assert not at.exception
    spec = chart_specs(at)[0]
    xs = {tuple(t["x"]) for t in spec["data"] if t["type"] == "heatmap"}
    assert len(xs) == 1  # every panel over the same input tokens
    panels = heatmaps(at, 0)
    assert len({p.shape for p in panels}) == 1
    assert all(np.allclose(p.sum(-1)[p.sum(-1) > 0], 1.0, atol=1e-5) for p in panels)


def test_the_adversary_keeps_the_output_and_moves_alpha(at):
    at.radio(key="ex_model").set_value("dates").run()
    record = get_mechanism("bahdanau-adversary").build({"text": "Wednesday, May 9, 2018"})
    own, tilde = heatmaps(at, 1)
    np.testing.assert_allclose(own, shares(record.weights[0]), atol=1e-5)
    np.testing.assert_allclose(tilde, shares(record.weights[1]), atol=1e-5)
    said = [m.value for m in at.markdown if "Jensen–Shannon" in m.value][0]
    assert f"**{record.meta['output_alpha']}**" in said and f"{record.meta['mean_jsd']:.3f}" in said
    assert record.meta["max_tvd"] <= 0.01


def test_the_han_tests_and_a_text_without_sentences(at):
    at.radio(key="ex_test_model").set_value("han").run()
    assert not at.exception and len(heatmaps(at, 1)) == 2
    at.radio(key="ex_test").set_value("permutation").run()
    assert not at.exception and any("100 shuffles" in m.value for m in at.markdown)
    at.text_input(key="ex_test_text_han").set_value("   ").run()
    assert not at.exception and at.info


def test_chinese_opens_with_its_texts():
    _ = gettext_for("zh")
    app = open_page(PAGE, timeout=300)
    app.query_params["lang"] = "zh"
    app.run()
    assert not app.exception
    assert app.title[0].value == _("Is attention an explanation?") != "Is attention an explanation?"
    assert len(chart_specs(app)) == 4


def test_a_held_out_date_outside_the_set_is_refused_in_one_line():
    from tests.pages.test_links import open_link

    app = open_link(PAGE, {"ex_date": "5000"})
    assert not app.exception
    assert len(app.warning) == 1 and "5000" in app.warning[0].value
    assert app.number_input(key="ex_date").value == 0 and len(chart_specs(app)) == 4


@pytest.mark.parametrize("page, key, entry, text_key", [
    ("pages/self_attention.py", "sa", "transformer-attribution", "sa_text"),
    ("pages/language_model.py", "lm", "lm-attribution", "lm_text"),
])
def test_a_models_own_page_compares_alpha_with_an_attribution(page, key, entry, text_key):
    from models.attribution.records import final_map

    app = open_page(page, timeout=300)
    before = len(chart_specs(app))
    app.toggle(key=f"{key}_compare").set_value(True).run()
    app.selectbox(key=f"{key}_method").set_value("value-zeroing").run()
    assert not app.exception and len(chart_specs(app)) == before + 1
    text = app.text_area(key=text_key).value
    expected = final_map(get_mechanism(entry).build({"text": text, "method": "value-zeroing"}))
    compared = [i for i, spec in enumerate(chart_specs(app))
                if [a["text"] for a in spec["layout"].get("annotations", [])][-1:] == ["value-zeroing"]]
    assert len(compared) == 1  # α's panel and the method's
    drawn = heatmaps(app, compared[0])
    assert len(drawn) == 2
    np.testing.assert_allclose(drawn[1], shares(expected)[-len(drawn[1]):], atol=1e-5)


def test_the_flow_route_of_minilm_is_the_registry_record():
    at = open_page(PAGE, timeout=300)  # the page as it opens (the shared one stops above, at an empty text)
    record = get_mechanism("flow-minilm").build({"text": "The cat sat on the mat because it was warm.",
                                                 "threshold": 0.04, "position": 0})
    np.testing.assert_allclose(heatmaps(at, 3)[0], record.extras["head_totals"], atol=1e-6)
    assert any(", ".join(record.meta["route_heads"]) in c.value for c in at.caption)
