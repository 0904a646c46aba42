"""Every view of one model on one text agrees with the others: the maps of lm and of lm-generate, the logit
lens's last row and the logits, knocking out no heads and the plain forward, the neuron view's softmax and
the map's row. On the GPT trained here and on a Qwen2 folder whose sliding window covers only some layers
(layer_types full, sliding, sliding), and on a Gemma 3 folder with the same layer types (a RoPE base of their own
on the local layers) and Gemma 2's soft-capping of scores and logits: a view that applied a model's rule
differently would disagree here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from flax import nnx
from safetensors.numpy import save_file

from models.lm.config import LMConfig
from models.lm.generate import generate, generation_record
from models.lm.loader import hf_tensors
from models.lm.model import DecoderLM, run
from models.lm.records import shared_runner
from models.lm.sinks import first_token_share, sink_record
from models.registry import get_mechanism

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "lm"
TEXT = "The cat sat on the mat. The cat sat on the"
WINDOW = 6
WINDOWED = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "vocab_size": 320, "hidden_size": 48,
    "intermediate_size": 64, "num_hidden_layers": 3, "num_attention_heads": 6, "num_key_value_heads": 2,
    "max_position_embeddings": 256, "rms_norm_eps": 1e-6, "rope_theta": 1e6, "tie_word_embeddings": True,
    "hidden_act": "silu", "use_sliding_window": True, "sliding_window": WINDOW, "max_window_layers": 1,
}


# Gemma 3 with what Gemma 2 adds: soft-capped scores (so the neuron view's softmax must cap them too) and logits,
# query_pre_attn_scalar, sandwich norms, √d embeddings, and layers 1 and 2 local (window and RoPE base of their own).
GEMMA = {
    "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "vocab_size": 320, "hidden_size": 32,
    "intermediate_size": 48, "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2,
    "head_dim": 16, "query_pre_attn_scalar": 24, "sliding_window": WINDOW, "max_position_embeddings": 256,
    "layer_types": ["full_attention", "sliding_attention", "sliding_attention"], "rope_theta": 1e6,
    "rope_local_base_freq": 100.0, "attn_logit_softcapping": 3.0, "final_logit_softcapping": 4.0,
    "tie_word_embeddings": True, "rms_norm_eps": 1e-6,
}
# name -> (config.json, the fixture that lends its tokenizer)
FOLDERS = {"windowed": (WINDOWED, "qwen2"), "gemma": (GEMMA, "gemma2")}


def windowed_folder(folder: Path, config: dict = WINDOWED, tokenizer_from: str = "qwen2") -> Path:
    """Writes a random model of this config (larger weights than the init, so that maps are sharp) with a fixture's
    tokenizer, as Hugging Face saves one."""
    cfg = LMConfig.from_hf(config)
    _, state = nnx.split(DecoderLM(cfg, rngs=nnx.Rngs(3)))
    params = {tuple(p): np.asarray(v[...]) * (4.0 if v[...].ndim == 2 else 1.0) for p, v in nnx.to_flat_state(state)}
    folder.mkdir(parents=True)
    save_file(hf_tensors(cfg, params), str(folder / "model.safetensors"), metadata={"format": "pt"})
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    shutil.copy(FIXTURES / tokenizer_from / "tokenizer.json", folder / "tokenizer.json")
    return folder


@pytest.fixture(scope="module", params=["trained", "windowed", "gemma"])
def model_dir(request, tmp_path_factory):
    if request.param == "trained":
        return None
    config, tokenizer_from = FOLDERS[request.param]
    return str(windowed_folder(tmp_path_factory.mktemp("views") / request.param, config, tokenizer_from))


@pytest.fixture(scope="module")
def plain(model_dir):
    """Returns (runner, the lm record of TEXT, logits [T, V] of the plain forward) of one model."""
    runner = shared_runner(model_dir)
    record = runner.attention(TEXT)
    logits, _ = run(runner.lm.graphdef, runner.lm.state, record.extras["input_ids"][None], attention=False)
    return runner, record, logits[0].astype(np.float64)


@pytest.fixture(scope="module")
def generated(model_dir):
    """Returns the lm-generate record of 6 tokens after TEXT: a second witness (the KV-cached decode loop)."""
    return generation_record(shared_runner(model_dir), TEXT, max_new=6)


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_the_windowed_folder_has_a_window_on_some_layers_only(plain, model_dir):
    runner, record, _ = plain
    if model_dir is None:
        assert runner.config.sliding_window is None
        return
    assert runner.config.sliding_layers == (1, 2) and runner.config.sliding_window == WINDOW
    if runner.config.model_type == "gemma3_text":  # what the views must all apply the same way
        cfg = runner.config
        assert cfg.attn_softcap and cfg.final_softcap and cfg.local_rope_theta == 100.0 and cfg.arch.embed_scale
    t = record.weights.shape[-1]
    assert t > 2 * WINDOW
    q, k = np.indices((t, t))
    far = q - k >= WINDOW
    assert np.all(record.weights[1:][..., far] == 0)
    assert np.all(record.weights[0][..., far & (k <= q)] > 0)  # layer 0 reads the whole prefix


def test_the_maps_of_lm_equal_the_steps_of_lm_generate(plain, generated, model_dir):
    runner, record, logits = plain
    t = record.weights.shape[-1]
    assert generated.meta["n_prompt"] == t
    # the first written token's probabilities are the plain forward's at the prompt's last position
    np.testing.assert_allclose(generated.extras["top_probs"][0], -np.sort(-_softmax(logits[-1]))[:5], atol=1e-5)
    np.testing.assert_allclose(generated.weights[:, :, :t, :t], record.weights, atol=1e-5)
    # the last step's maps: every row of the generated text, as one plain forward reads it
    _, maps = run(runner.lm.graphdef, runner.lm.state, generated.extras["ids"][None])
    np.testing.assert_allclose(generated.weights, maps[:, 0], atol=1e-5)
    greedy = generate(runner.lm, record.extras["input_ids"], max_new=6)
    assert greedy.ids.tolist() == generated.extras["ids"].tolist()


def test_the_lenss_last_row_equals_the_logits(plain, generated, model_dir):
    runner, record, logits = plain
    lens = get_mechanism("lm-logit-lens").build({"text": TEXT, "model_dir": model_dir, "top_k": 5})
    probs = _softmax(logits)
    assert lens.extras["answer_ids"].tolist() == logits.argmax(-1).tolist()
    np.testing.assert_allclose(lens.weights[-1], probs.max(-1), atol=1e-5)
    np.testing.assert_allclose(lens.extras["top_probs"][-1], -np.sort(-probs, -1)[:, :5], atol=1e-5)
    np.testing.assert_allclose(lens.extras["top_probs"][-1, -1], generated.extras["top_probs"][0], atol=1e-5)


def test_knocking_out_no_heads_is_the_plain_forward(plain, generated, model_dir):
    runner, record, logits = plain
    ids = record.extras["input_ids"]
    probs = _softmax(logits[-1])
    log_probs = np.log(_softmax(logits))
    loss = -log_probs[np.arange(len(ids) - 1), ids[1:]].mean()
    assert record.meta["loss_nats"] == pytest.approx(loss, abs=1e-5)
    for options in ({"heads": "0.0"}, {"sweep": "yes"}):
        knocked = get_mechanism("lm-knockout").build({"text": TEXT, "model_dir": model_dir, **options})
        assert knocked.meta["answer_id"] == probs.argmax()
        assert knocked.meta["plain_prob"] == pytest.approx(probs.max(), abs=1e-5)
        assert knocked.meta["plain_prob"] == pytest.approx(generated.extras["top_probs"][0, 0], abs=1e-5)
        assert knocked.meta["plain_loss"] == pytest.approx(loss, abs=1e-5)


def test_the_neuron_views_softmax_equals_the_maps_row(plain, generated, model_dir):
    runner, record, _ = plain
    cfg = runner.config
    t = record.weights.shape[-1]
    for layer in range(cfg.num_layers):
        for head in range(cfg.num_heads):
            for query in (0, WINDOW, t - 1):
                neuron = get_mechanism("lm-neuron").build({"text": TEXT, "model_dir": model_dir, "layer": layer,
                                                           "head": head, "position": query})
                np.testing.assert_allclose(neuron.weights, record.weights[layer, head, query], rtol=1e-5, atol=1e-6)
                np.testing.assert_allclose(neuron.weights, generated.weights[layer, head, query, :t], atol=1e-5)
                assert np.all(neuron.weights[~neuron.extras["visible"]] == 0)


def test_the_sinks_view_reads_the_maps_of_lm(plain, model_dir):
    _, record, _ = plain
    sinks = sink_record(get_mechanism("lm").build({"text": TEXT, "model_dir": model_dir}))
    np.testing.assert_allclose(sinks.weights, first_token_share(record.weights), atol=1e-6)
