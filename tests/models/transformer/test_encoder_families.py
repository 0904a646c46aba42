"""What differs between the encoder families, each piece against a numpy oracle, and the folders refused.

RoPE, the sliding window, RoBERTa's positions and DistilBERT's sinusoidal table are recomputed here from their
definitions; the loader's name maps are checked against the module tree and the fixtures' files
(tests/fixtures/encoders/, written by tools/make_encoder_fixtures.py); a config option the forward does not
implement is refused in one line naming it.
"""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.numpy import load_file

from models.record import InputError
from models.transformer import model as m
from models.transformer.checkpoint import CheckpointError, expected_shapes, map_tensors, read_config, sinusoidal_table
from models.transformer.config import FULL, SLIDING, BertConfig
from models.transformer.records import load_runner

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "encoders"
FAMILIES = ("roberta", "xlm_roberta", "distilbert", "electra", "modernbert")


def _config_json(family: str) -> dict:
    return json.loads((FIXTURES / family / "config.json").read_text())


def _copy(family: str, tmp_path: Path) -> Path:
    folder = tmp_path / family
    shutil.copytree(FIXTURES / family, folder)
    return folder


# ----------------------------------------------------------------------------- the maths, against oracles


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([2, 4, 8]), st.floats(100.0, 1e6), st.integers(0, 2**31 - 1))
def test_rope_rotates_each_pair_of_halves_by_position_times_frequency(half, theta, seed):
    length = 12  # three shapes in all: one compile each
    rng = np.random.default_rng(seed)
    d = 2 * half
    x = rng.standard_normal((1, 1, length, d)).astype(np.float32)
    cos, sin = m.rotary_tables(length, d, theta)
    ours = np.asarray(m.rotate(x, cos, sin))
    # oracle: (x_i, x_{i+d/2}) as one complex number, times e^{i·pos·θ^(−2i/d)}
    freq = theta ** (-2.0 * np.arange(half) / d)
    z = (x[..., :half] + 1j * x[..., half:]) * np.exp(1j * np.arange(length)[:, None] * freq)
    np.testing.assert_allclose(ours, np.concatenate([z.real, z.imag], -1), atol=2e-5, rtol=1e-4)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 20), st.integers(0, 20), st.integers(0, 2**31 - 1))
def test_rope_scores_depend_only_on_the_offset(shift_q, shift_k, seed):
    # q·k after RoPE at positions (a, b) equals that at (a + s, b + s): the relative-position property.
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, 8)).astype(np.float32)
    cos, sin = m.rotary_tables(64, 8, 10000.0)

    def score(a, b):
        qa = np.asarray(m.rotate(q[None, None, None], cos[a], sin[a]))[0, 0, 0]
        kb = np.asarray(m.rotate(k[None, None, None], cos[b], sin[b]))[0, 0, 0]
        return float(qa @ kb)

    assert score(shift_q, shift_k) == pytest.approx(score(shift_q + 20, shift_k + 20), abs=1e-3)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.booleans(), min_size=10, max_size=10), st.integers(0, 5))
def test_window_bias_hides_padding_and_keys_beyond_the_window(mask, window):
    key_mask = np.asarray([mask])
    bias = np.asarray(m.window_bias(key_mask, window))[0, 0]
    t = len(mask)
    for q in range(t):
        for k in range(t):
            visible = mask[k] and abs(q - k) <= window
            assert (bias[q, k] == 0) == visible


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=10, max_size=10), st.integers(0, 9))
def test_roberta_positions_count_non_padding_tokens_from_padding_index_plus_one(ids, pad):
    cfg = BertConfig(vocab_size=10, hidden_size=8, num_attention_heads=2, positions="roberta", pad_token_id=pad)
    ours = np.asarray(m._positions(cfg, np.asarray([ids])))[0]
    expected, count = [], 0
    for token in ids:  # transformers' create_position_ids_from_input_ids, one token at a time
        count += token != pad
        expected.append(pad + count if token != pad else pad)
    np.testing.assert_array_equal(ours, expected)


def test_sinusoidal_table_is_transformers_formula():
    n, dim = 7, 6
    table = np.zeros((n, dim))
    for pos in range(n):
        for j in range(dim):
            angle = pos / np.power(10000, 2 * (j // 2) / dim)
            table[pos, j] = np.sin(angle) if j % 2 == 0 else np.cos(angle)
    np.testing.assert_allclose(sinusoidal_table(n, dim), table, atol=1e-6)


def test_geglu_is_act_of_the_first_half_times_the_second():
    from models.transformer.checkpoint import load_bert

    model = load_bert(FIXTURES / "modernbert")
    cfg, layer = model.config, model.encoder.layer[0]
    x = np.random.default_rng(0).standard_normal((1, 3, cfg.hidden_size)).astype(np.float32)
    w_in, w_out = np.asarray(layer.intermediate.dense.kernel[...]), np.asarray(layer.output.dense.kernel[...])
    h = x @ w_in
    f = cfg.intermediate_size
    from scipy.special import erf

    gelu = 0.5 * h[..., :f] * (1 + erf(h[..., :f] / np.sqrt(2)))
    np.testing.assert_allclose(np.asarray(m._mlp(layer, cfg, x)), (gelu * h[..., f:]) @ w_out, atol=1e-5)


# ----------------------------------------------------------------------------- configs and checkpoints


@pytest.mark.parametrize("family", FAMILIES)
def test_shapes_from_the_config_are_the_modules_own_and_the_files(family):
    from models.transformer.checkpoint import _skeleton

    cfg = read_config(FIXTURES / family)
    assert expected_shapes(cfg) == dict(_skeleton(cfg)[1])
    mapped = map_tensors(cfg, load_file(str(FIXTURES / family / "model.safetensors")))
    assert set(mapped) == set(expected_shapes(cfg))


def test_each_family_is_described_from_its_config():
    roberta, distil, electra, modern = (
        read_config(FIXTURES / f) for f in ("roberta", "distilbert", "electra", "modernbert")
    )
    assert (roberta.positions, roberta.position_offset, roberta.max_tokens) == ("roberta", 2, 80)
    assert (distil.type_vocab_size, distil.hidden_size, distil.sinusoidal_positions) == (0, 32, True)
    assert (electra.embedding_size, electra.embedding_width, electra.hidden_size) == (16, 16, 32)
    assert modern.pre_norm and modern.gated_mlp and not modern.attention_bias and not modern.norm_bias
    assert modern.layer_types == (FULL, SLIDING, FULL, SLIDING) and modern.window == 4
    assert (modern.rope_theta, modern.local_rope_theta) == (160000.0, 10000.0)


def test_a_modernbert_config_from_transformers_4_reads_the_same(tmp_path):
    # transformers 4.x wrote global/local_rope_theta and global_attn_every_n_layers, no layer_types.
    data = _config_json("modernbert")
    old = {k: v for k, v in data.items() if k not in ("layer_types", "rope_parameters")}
    old.update(global_rope_theta=160000.0, local_rope_theta=10000.0, global_attn_every_n_layers=2)
    (tmp_path / "config.json").write_text(json.dumps(old))
    assert read_config(tmp_path) == read_config(FIXTURES / "modernbert")


@pytest.mark.parametrize(
    "family, change, named",
    [
        ("modernbert", {"rope_parameters": {"full_attention": {"rope_type": "yarn", "rope_theta": 1.0}}}, "yarn"),
        ("modernbert", {"rope_scaling": {"rope_type": "linear", "factor": 2.0}}, "rope_scaling"),
        ("modernbert", {"layer_types": ["full_attention", "chunked_attention"] * 2}, "chunked_attention"),
        ("modernbert", {"hidden_activation": "silu"}, "hidden_activation 'silu'"),
        ("roberta", {"position_embedding_type": "relative_key_query"}, "position_embedding_type"),
        ("roberta", {"is_decoder": True}, "is_decoder"),
        ("distilbert", {"activation": "swish"}, "activation 'swish'"),
        ("electra", {"model_type": "deberta-v2"}, "'deberta-v2' model"),
    ],
)
def test_an_option_the_forward_does_not_implement_is_refused_in_one_line_naming_it(tmp_path, family, change, named):
    (tmp_path / "config.json").write_text(json.dumps({**_config_json(family), **change}))
    with pytest.raises(InputError) as error:
        read_config(tmp_path)
    assert named in str(error.value) and "\n" not in str(error.value)


def test_tensors_are_named_in_the_familys_own_spelling(tmp_path):
    folder = _copy("distilbert", tmp_path)
    tensors = load_file(str(folder / "model.safetensors"))
    tensors.pop("distilbert.transformer.layer.1.attention.q_lin.weight")
    tensors["cls.predictions.bias"] = np.zeros(3, np.float32)  # BERT's head is not DistilBERT's
    with pytest.raises(CheckpointError) as error:
        map_tensors(read_config(folder), tensors)
    assert "unknown tensors: cls.predictions.bias" in str(error.value)
    assert "missing tensors: transformer.layer.1.attention.q_lin.weight" in str(error.value)
    modern = load_file(str(FIXTURES / "modernbert" / "model.safetensors"))
    modern["model.layers.2.attn.Wqkv.weight"] = modern["model.layers.2.attn.Wqkv.weight"][:-3]
    with pytest.raises(CheckpointError, match=r"layers\.2\.attn\.Wqkv\.weight \(93, 32\) \(expected \(96, 32\)\)"):
        map_tensors(read_config(FIXTURES / "modernbert"), modern)


def test_modernbert_fused_qkv_is_split_into_query_key_value():
    cfg = read_config(FIXTURES / "modernbert")
    stored = load_file(str(FIXTURES / "modernbert" / "model.safetensors"))["model.layers.1.attn.Wqkv.weight"]
    mapped = map_tensors(cfg, load_file(str(FIXTURES / "modernbert" / "model.safetensors")))
    layer = ("encoder", "layer", 1, "attention", "self")
    for part, name in enumerate(("query", "key", "value")):
        np.testing.assert_array_equal(mapped[(*layer, name, "kernel")], stored[32 * part : 32 * (part + 1)].T)


def test_a_distilbert_folder_without_its_sinusoidal_table_gets_it(tmp_path):
    folder = _copy("distilbert", tmp_path)
    tensors = load_file(str(folder / "model.safetensors"))
    tensors.pop("distilbert.embeddings.position_embeddings.weight")
    mapped = map_tensors(read_config(folder), tensors)
    np.testing.assert_array_equal(mapped[("embeddings", "position_embeddings", "embedding")], sinusoidal_table(80, 32))
    data = {**_config_json("distilbert"), "sinusoidal_pos_embds": False}  # learned positions must be stored
    (folder / "config.json").write_text(json.dumps(data))
    with pytest.raises(CheckpointError, match="missing tensors: embeddings.position_embeddings.weight"):
        map_tensors(read_config(folder), tensors)


def test_an_xlm_r_folder_with_only_sentencepiece_bpe_model_tokenizes_as_transformers():
    # xlm_roberta_spm holds a Unigram sentencepiece model (nmt_nfkc, as XLM-R's) and AutoTokenizer's ids.
    from models.transformer.tokenization import load_tokenizer

    folder = FIXTURES / "xlm_roberta_spm"
    with np.load(folder / "reference.npz") as data:
        reference = {key: data[key] for key in data.files}
    tokenizer = load_tokenizer(folder, 80, "xlm-roberta")
    assert tokenizer.vocab_size == int(reference["vocab_size"])
    for name in [key.split("/")[0] for key in reference if key.endswith("/input_ids")]:
        pair = str(reference[f"{name}/text_pair"]) if f"{name}/text_pair" in reference else None
        encoding = tokenizer.encode(str(reference[f"{name}/text"]), pair)
        np.testing.assert_array_equal(encoding.input_ids, reference[f"{name}/input_ids"], err_msg=name)


def test_the_sentencepiece_reader_reads_pieces_scores_and_the_model_type():
    from models.transformer.sentencepiece import UNIGRAM, read_model

    pieces, model_type, charsmap = read_model((FIXTURES / "xlm_roberta_spm" / "sentencepiece.bpe.model").read_bytes())
    assert model_type == UNIGRAM and len(charsmap) > 1000  # nmt_nfkc's precompiled map
    assert [p for p, _ in pieces[:3]] == ["<unk>", "<s>", "</s>"] and len(pieces) == 120
    assert all(score <= 0 for _, score in pieces[3:]) and pieces[3][1] != pieces[-1][1]
    # a hand-written ModelProto: one piece ("▁a", -1.5), trainer_spec.model_type = BPE (2)
    piece = "▁a".encode()
    body = b"\x0a" + bytes([len(piece)]) + piece + b"\x15" + np.float32(-1.5).tobytes()
    handmade = b"\x0a" + bytes([len(body)]) + body + b"\x12\x02\x18\x02"
    assert read_model(handmade) == ([("▁a", -1.5)], 2, b"")


def test_xlm_r_weights_run_with_the_sentencepiece_tokenizer(tmp_path):
    folder = _copy("xlm_roberta", tmp_path)
    (folder / "tokenizer.json").unlink()
    shutil.copy(FIXTURES / "xlm_roberta_spm" / "sentencepiece.bpe.model", folder)
    record = load_runner(folder).attention("我爱自然语言处理。", "The cat sat on the mat.")
    assert record.query_labels[:3] == ("<s>", "▁", "我") and record.query_labels.count("</s>") == 3
    np.testing.assert_allclose(record.weights.sum(-1), 1.0, atol=1e-5)


@pytest.mark.parametrize(
    "family, model, named",
    [
        ("xlm_roberta", b"\x00", "not a readable sentencepiece model"),
        ("xlm_roberta", b"\x12\x02\x18\x02", "only a Unigram sentencepiece model"),
        ("roberta", b"\x00", "read here for XLM-R only"),
    ],
)
def test_a_sentencepiece_model_that_cannot_be_read_is_refused_in_one_line(tmp_path, family, model, named):
    folder = _copy(family, tmp_path)
    (folder / "tokenizer.json").unlink()
    (folder / "sentencepiece.bpe.model").write_bytes(model)
    with pytest.raises(InputError) as error:
        load_runner(folder)
    assert named in str(error.value) and "\n" not in str(error.value)


# ----------------------------------------------------------------------------- views


def test_the_neuron_view_of_a_sliding_layer_is_its_map_row():
    from models.transformer.neuron import neuron_parts

    runner = load_runner(FIXTURES / "modernbert")
    text = "Attention lets a model decide, for every word it reads, which other words matter most"
    record = runner.attention(text)
    for layer in (0, 1):  # full, then sliding
        parts = neuron_parts(runner, text, layer=layer, head=2, query=9)
        np.testing.assert_allclose(parts.weights, record.weights[layer, 2, 9], atol=2e-6)
        assert (parts.weights == 0).any() == (layer == 1)


def test_the_residual_capture_and_final_norm_of_a_pre_norm_model():
    import jax.numpy as jnp

    from models.capture import Capture

    runner = load_runner(FIXTURES / "modernbert")
    encoding = runner.encode("the cat sat on the mat")
    out = runner.forward(runner.padded([encoding], 1), Capture(logits=False, residual=True), final=True)
    residual, final = np.asarray(out["residual"]), np.asarray(out["final"])
    assert residual.shape[0] == 5  # 4 layers + 1
    last = jnp.asarray(residual[-1])
    scale = runner.params["final_norm.scale"]
    mean, var = last.mean(-1, keepdims=True), last.var(-1, keepdims=True)
    np.testing.assert_allclose(final, np.asarray((last - mean) / np.sqrt(var + 1e-5) * scale), atol=1e-5)


def _numpy_norm(x, scale, eps):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + eps) * scale


def test_a_pre_norm_layer_is_its_numpy_oracle_given_the_heads_output():
    # ModernBERT's layer: x + Wo·heads(attn_norm(x)), then + GeGLU(mlp_norm(·)); no biases, norms without bias.
    from scipy.special import erf

    from models.capture import Capture

    runner = load_runner(FIXTURES / "modernbert")
    encoding = runner.encode("Attention lets a model decide which other words matter most")
    out = runner.forward(runner.padded([encoding], 1), Capture(logits=False, heads=True, residual=True))
    residual = np.asarray(out["residual"], np.float64)[:, 0]  # [L + 1, T, D]
    p = {name: np.asarray(value, np.float64) for name, value in runner.params.items()}
    f = runner.config.intermediate_size
    for layer in range(4):
        x, heads = residual[layer], np.asarray(out["heads"][layer], np.float64)[0]  # [T, D], [H, T, d]
        at = f"encoder.layer.{layer}."
        merged = heads.transpose(1, 0, 2).reshape(len(x), -1)
        x = x + merged @ p[at + "attention.output.dense.kernel"]
        h = _numpy_norm(x, p[at + "mlp_norm.scale"], 1e-5) @ p[at + "intermediate.dense.kernel"]
        gelu = 0.5 * h[:, :f] * (1 + erf(h[:, :f] / np.sqrt(2)))
        expected = x + (gelu * h[:, f:]) @ p[at + "output.dense.kernel"]
        np.testing.assert_allclose(residual[layer + 1], expected, atol=2e-5)
