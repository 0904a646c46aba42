"""AppTest of the Language model page: the GPT trained here on its default text (head view on the
induction head, model view, training curves), another text and head, a text it does not know, and a
user's folder from the model root."""

import shutil

import numpy as np
import pytest

from models.lm.quality import CHECKPOINT_DIR, training_record
from models.lm.records import load_runner
from tests.pages.conftest import chart_data, chart_specs, open_page

PAGE = "pages/language_model.py"
HEAD, GRID, CURVES = 0, 1, 2
BOS = "&lt;|endoftext|&gt;"  # labels reach plotly HTML-escaped (viz/labels.py)


def shown(labels):
    return [label.replace("\u200b", "") for label in labels]  # repeats carry invisible suffixes


@pytest.fixture(scope="module")
def at():
    app = open_page(PAGE, timeout=300)
    assert not app.exception, app.exception
    return app


def test_the_default_text_opens_on_the_best_prefix_matching_head(at):
    assert at.title[0].value == "Language model (GPT)"
    specs = chart_specs(at)
    assert len(specs) == 3
    layer, head = training_record().meta["best"]
    assert specs[HEAD]["layout"]["title"]["text"] == f"Layer {layer}, head {head}"
    z = chart_data(at, HEAD)
    tokens = len(specs[HEAD]["data"][0]["y"])
    assert z.shape == (tokens, tokens) and specs[HEAD]["data"][0]["y"][0] == BOS
    np.testing.assert_allclose(z.sum(1), 1.0, atol=1e-4)
    assert np.all(z[np.triu_indices(tokens, 1)] == 0)  # causal: nothing above the diagonal
    grid = chart_data(at, GRID)
    assert grid.shape == (2 * tokens + 1, 4 * tokens + 3)  # 2 layers × 4 heads, one empty line between maps
    kinds = [t["type"] for t in specs[CURVES]["data"]]
    assert kinds.count("heatmap") == 3 and kinds.count("scatter") == 3
    assert not at.warning  # the default text is familiar
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["Held-out perplexity"]) < float(metrics["Bigram baseline"])


def test_a_new_text_and_head_change_the_head_view(at):
    before = chart_data(at, HEAD)
    at.selectbox(key="lm_layer").set_value(0).run()
    at.selectbox(key="lm_head").set_value(1).run()
    assert not at.exception
    assert chart_specs(at)[HEAD]["layout"]["title"]["text"] == "Layer 0, head 1"
    assert not np.array_equal(chart_data(at, HEAD), before)
    at.text_area(key="lm_text").set_value("Return a new list of the items.").run()
    assert not at.exception
    labels = shown(chart_specs(at)[HEAD]["data"][0]["y"])
    assert labels[0] == BOS and "".join(labels[1:]) == "Return a new list of the items."


def test_text_outside_what_it_knows_gets_one_line(at):
    at.text_area(key="lm_text").set_value("Zxqv jjkw pfft 9431 qqq zzx vvbn wkkw xq zz plok.").run()
    assert not at.exception
    assert len(at.warning) == 1 and "outside what" in at.warning[0].value
    at.text_area(key="lm_text").set_value("   ").run()
    assert not at.exception and at.info


def test_a_folder_under_the_model_root(tmp_path, monkeypatch):
    root = tmp_path / "models"
    shutil.copytree(CHECKPOINT_DIR, root / "my-gpt")
    monkeypatch.setenv("ATTENTION_LAB_MODEL_ROOT", str(root))
    app = open_page(PAGE, timeout=300)
    assert not app.exception
    app.text_input(key="lm_model_dir").set_value("my-gpt").run()
    assert not app.exception
    ours = load_runner(root / "my-gpt").attention(app.text_area(key="lm_text").value)
    z = chart_data(app, HEAD)
    title = chart_specs(app)[HEAD]["layout"]["title"]["text"]  # "Layer L, head H"
    layer, head = (int(part.split()[-1]) for part in title.split(","))
    np.testing.assert_allclose(z, ours.weights[layer, head], atol=1e-6)
    assert any("my-gpt" in c.value for c in app.caption)
    app.text_input(key="lm_model_dir").set_value("../../etc").run()
    assert not app.exception and len(app.error) == 1 and "not available" in app.error[0].value
