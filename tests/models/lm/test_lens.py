"""Logit lens: the last row equals the model's logits (ours and Hugging Face's), every row equals a numpy
oracle of the final norm then the unembedding, and the record's options are checked."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from models.lm.lens import LENS_CHOICE, MAX_TOP_K, lens_logits, lens_record_size, residual_stream
from models.lm.model import pad_ids, run
from models.lm.records import shared_runner
from models.record import InputError
from models.registry import get_mechanism

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "lm"
TEXT = "the lazy dog sleeps on the mat"
LENS = get_mechanism("lm-logit-lens")


def _param(state, *path):
    node = state
    for key in path:
        node = node[key]
    return np.asarray(node[...], np.float64)


def numpy_lens(state, cfg, stream: np.ndarray) -> np.ndarray:
    """The oracle: final norm (LayerNorm with bias, else RMSNorm), then x @ W_U; stream [R, T, D] -> [R, T, V]."""
    x = stream.astype(np.float64)
    scale = _param(state, "final_norm", "scale")
    if cfg.arch.norm == "layer":
        centred = x - x.mean(-1, keepdims=True)
        normed = centred / np.sqrt((centred**2).mean(-1, keepdims=True) + cfg.norm_eps) * scale
        normed = normed + _param(state, "final_norm", "bias")
    else:
        normed = x / np.sqrt((x**2).mean(-1, keepdims=True) + cfg.norm_eps) * scale
    head = _param(state, "embed").T if cfg.tie_word_embeddings else _param(state, "lm_head", "kernel")
    return normed @ head


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def case(request):
    folder = FIXTURES / request.param
    runner = shared_runner(str(folder))
    reference = np.load(folder / "reference.npz")
    ids = reference["ids_0"].astype(np.int32)
    padded, mask = pad_ids(ids[None], runner.buckets)
    stream = np.asarray(residual_stream(runner.lm.state, padded, mask, graphdef=runner.lm.graphdef))
    logits = np.asarray(lens_logits(runner.lm.state, stream, graphdef=runner.lm.graphdef))
    return runner, reference, ids, stream[:, 0, : len(ids)], logits[:, 0, : len(ids)]


def test_the_last_layers_lens_is_the_models_logits(case):
    runner, reference, ids, _, lens = case
    assert lens.shape[0] == runner.config.num_layers + 1
    ours, _ = run(runner.lm.graphdef, runner.lm.state, ids[None], attention=False)
    np.testing.assert_allclose(lens[-1], ours[0], atol=1e-5, rtol=0)
    np.testing.assert_allclose(lens[-1], reference["logits_0"], atol=1e-4, rtol=0)  # Hugging Face's


def test_every_row_is_the_final_norm_then_the_unembedding(case):
    runner, _, _, stream, lens = case
    expected = numpy_lens(runner.lm.state, runner.config, stream)
    np.testing.assert_allclose(lens, expected, atol=2e-4, rtol=1e-4)
    # without the final norm the rows differ: the choice matters
    raw = stream.astype(np.float64) @ (_param(runner.lm.state, "embed").T if runner.config.tie_word_embeddings
                                       else _param(runner.lm.state, "lm_head", "kernel"))
    assert np.abs(raw - expected).max() > 1e-2


def test_the_record_holds_each_rows_probability_of_the_final_answer(case):
    runner, reference, ids, stream, _ = case
    record = LENS.build({"text": str(reference["text_0"]), "model_dir": str(runner.lm.folder), "top_k": 3,
                                "position": -2})
    t, rows = len(ids), runner.config.num_layers + 1
    assert record.mechanism == "lm-logit-lens" and record.axes == ("layer", "position")
    assert record.weights.shape == (rows, t) and record.query_labels[0] == "embedding"
    assert record.extras["input_ids"].tolist() == ids.tolist()
    oracle = numpy_lens(runner.lm.state, runner.config, stream)
    probs = np.exp(oracle - oracle.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    answer = oracle[-1].argmax(-1)
    assert record.extras["answer_ids"].tolist() == answer.tolist()
    np.testing.assert_allclose(record.weights, probs[:, np.arange(t), answer], atol=1e-5)
    order = np.argsort(-probs, axis=-1)[..., :3]
    assert record.extras["top_ids"].shape == (rows, t, 3)
    np.testing.assert_allclose(record.extras["top_probs"], np.take_along_axis(probs, order, -1), atol=1e-5)
    np.testing.assert_allclose(record.weights[-1], record.extras["top_probs"][-1, :, 0], atol=1e-6)
    assert record.meta["position"] == t - 2 and record.meta["lens"] == LENS_CHOICE
    assert len(record.meta["position_top_tokens"]) == rows and len(record.meta["position_top_tokens"][0]) == 3
    assert record.extras["top_tokens"].shape == (rows, t, 3)
    size = lens_record_size(LENS, LENS.read({"text": str(reference["text_0"]), "model_dir": str(runner.lm.folder)}))
    assert size >= record.weights.nbytes + record.extras["top_probs"].nbytes


@pytest.mark.parametrize("options, words", [({"top_k": 0}, "top_k"), ({"top_k": MAX_TOP_K + 1}, "top_k"),
                                            ({"top_k": "many"}, "top_k"), ({"position": 99}, "position"),
                                            ({"position": "1.5"}, "position"), ({"text": " "}, "type some text")])
def test_bad_options_get_one_line(options, words):
    # The registry reads the options (their ranges), the builder what depends on the text (a position past it).
    raw = {"text": TEXT, "model_dir": str(FIXTURES / "gpt2"), **options}
    with pytest.raises(InputError, match=words) as error:
        LENS.build(raw)
    assert "\n" not in str(error.value)


def test_the_lens_figures_show_the_record(case):
    from viz.i18n_text import gettext_for
    from viz.lm_lens import lens_grid, lens_position_bars

    runner, reference, ids, _, _ = case
    record = LENS.build({"text": str(reference["text_0"]), "model_dir": str(runner.lm.folder), "top_k": 2})
    fig = lens_grid(record)
    heat = fig.data[0]
    np.testing.assert_allclose(np.asarray(heat.z, np.float64), record.weights, atol=1e-7)
    assert heat.text[-1][0] == record.extras["top_tokens"][-1, 0, 0][:10]  # the last layer's top token in its cell
    assert "final answer" in heat.customdata[0][0] and fig.layout.yaxis.ticktext[0] == "embedding"
    bars = lens_position_bars(record)
    np.testing.assert_allclose(bars.data[0].y, record.weights[:, -1], atol=1e-7)
    zh = lens_grid(record, gettext=gettext_for("zh"))
    assert zh.layout.xaxis.title.text != fig.layout.xaxis.title.text
