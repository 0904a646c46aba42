"""The folder loader: strict tensors, one line for every bad folder, the model root and size bound, saving GPT-2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.numpy import load_file, save_file

from models.lm.config import LMConfig, gpt2_config
from models.lm.loader import (
    NOT_AVAILABLE,
    TensorEntry,
    TensorFiles,
    hf_tensors,
    load_folder,
    map_tensors,
    resolve_model_dir,
    save_gpt2_folder,
    skeleton,
    tensor_table,
)
from models.record import InputError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "lm"


def _copy(name: str, tmp_path: Path) -> Path:
    folder = tmp_path / name
    shutil.copytree(FIXTURES / name, folder)
    return folder


def _rewrite(folder: Path, change) -> None:
    tensors = load_file(str(folder / "model.safetensors"))
    change(tensors)
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})


def _error(folder, **kwargs) -> str:
    with pytest.raises(InputError) as info:
        load_folder(folder, **kwargs)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_the_table_fills_every_parameter_of_the_module():
    for folder in FIXTURES.iterdir():
        cfg = LMConfig.from_hf(json.loads((folder / "config.json").read_text()))
        targets = [t for entry in tensor_table(cfg) for t in entry.targets]
        assert sorted(targets, key=str) == sorted(skeleton(cfg)[1], key=str) and len(set(targets)) == len(targets)


def test_a_missing_tensor_is_named(tmp_path):
    folder = _copy("gpt2", tmp_path)
    _rewrite(folder, lambda t: t.pop("transformer.h.1.mlp.c_fc.bias"))
    assert _error(folder) == "gpt2: missing tensor transformer.h.1.mlp.c_fc.bias (config.json asks for it)"


def test_an_extra_tensor_is_named(tmp_path):
    folder = _copy("qwen2", tmp_path)
    _rewrite(folder, lambda t: t.update({"model.layers.0.self_attn.o_proj.bias": np.zeros(48, np.float32)}))
    assert _error(folder) == (
        "qwen2: unexpected tensor model.layers.0.self_attn.o_proj.bias (not part of a qwen2 of this config)"
    )


def test_a_misshapen_tensor_is_named(tmp_path):
    folder = _copy("qwen3", tmp_path)
    _rewrite(folder, lambda t: t.update({"model.layers.1.self_attn.k_norm.weight": np.ones(8, np.float32)}))
    assert _error(folder) == "qwen3: tensor model.layers.1.self_attn.k_norm.weight has shape (8,), config.json implies (16,)"


def test_a_tensor_that_is_not_floating_point_is_named(tmp_path):
    folder = _copy("gpt2", tmp_path)
    _rewrite(folder, lambda t: t.update({"transformer.ln_f.bias": np.zeros(32, np.int32)}))
    assert "transformers.ln_f" not in _error(folder) and "transformer.ln_f.bias (I32)" in _error(folder)


def test_a_bad_config_value_is_one_line_before_any_tensor_is_read(tmp_path):
    folder = _copy("llama", tmp_path)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "num_key_value_heads": 3}))
    for shard in folder.glob("*.safetensors"):
        shard.write_bytes(b"not read")  # the config is refused first
    assert _error(folder) == "num_key_value_heads 3 does not divide num_attention_heads 8"
    (folder / "config.json").write_text("{not json")
    assert "config.json is not valid JSON" in _error(folder)


def test_a_pickle_only_folder_is_refused(tmp_path):
    folder = _copy("gpt2", tmp_path)
    (folder / "model.safetensors").rename(folder / "pytorch_model.bin")
    assert _error(folder) == (
        "gpt2 holds only pickled PyTorch weights (pytorch_model.bin); pickles are refused because loading one can "
        "run code: save the model with safetensors (save_pretrained(safe_serialization=True))"
    ).replace("gpt2 holds", f"{folder} holds")
    (folder / "pytorch_model.bin").unlink()
    assert _error(folder) == f"{folder} has no model.safetensors (nor model.safetensors.index.json)"


def test_a_model_larger_than_the_bound_is_refused_before_loading(tmp_path):
    folder = FIXTURES / "mistral"
    needed = TensorFiles(folder).float32_bytes()
    assert load_folder(folder, max_bytes=needed).config.model_type == "mistral"
    assert _error(folder, max_bytes=needed - 1) == (
        f"mistral: the weights take {needed / 1e3:.0f} kB as float32, more than the {(needed - 1) / 1e3:.0f} kB "
        "this server allows (ATTENTION_LAB_MAX_MODEL_BYTES); choose a smaller model"
    )


def test_bfloat16_weights_count_as_float32_and_are_upcast():
    files = TensorFiles(FIXTURES / "qwen2")
    assert set(files.dtypes.values()) == {"BF16"}
    arrays = files.read(["model.norm.weight"])
    assert arrays["model.norm.weight"].dtype == np.float32


def test_shards_are_read_and_a_missing_shard_is_one_line(tmp_path):
    folder = _copy("llama", tmp_path)
    assert len(TensorFiles(folder).files) > 1
    next(folder.glob("model-00002-*.safetensors")).unlink()
    assert "model.safetensors.index.json lists 'model-00002-of-" in _error(folder)


def test_a_missing_tokenizer_is_one_line(tmp_path):
    folder = _copy("gpt2", tmp_path)
    (folder / "tokenizer.json").unlink()
    assert _error(folder) == "gpt2 has no tokenizer.json (the fast tokenizer file Hugging Face saves)"
    (folder / "tokenizer.json").write_text("{}")
    assert "is not a tokenizer.json tokenizers can read" in _error(folder)


def test_gpt2_files_without_the_transformer_prefix_and_with_mask_buffers_load(tmp_path):
    # OpenAI's GPT-2 files on the hub name tensors h.0.attn.c_attn.weight and keep the causal mask h.N.attn.bias.
    folder = _copy("gpt2", tmp_path)
    reference = load_folder(FIXTURES / "gpt2")

    def strip(tensors):
        for name in list(tensors):
            tensors[name.removeprefix("transformer.")] = tensors.pop(name)
        tensors["h.0.attn.bias"] = np.tril(np.ones((1, 1, 128, 128), np.float32))

    _rewrite(folder, strip)
    loaded = load_folder(folder)
    np.testing.assert_array_equal(loaded.state["layers"][0]["q"]["kernel"][...], reference.state["layers"][0]["q"]["kernel"][...])


def test_save_gpt2_folder_round_trips(tmp_path):
    from flax import nnx

    from models.lm.model import DecoderLM

    cfg = gpt2_config(vocab_size=320, n_embd=16, n_layer=2, n_head=2, n_positions=32, tie_word_embeddings=False)
    graphdef, state = nnx.split(DecoderLM(cfg, rngs=nnx.Rngs(3)))
    tokenizer = load_folder(FIXTURES / "gpt2").tokenizer
    folder = save_gpt2_folder(tmp_path / "saved", cfg, state, tokenizer)
    assert {p.name for p in folder.iterdir()} == {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"}
    loaded = load_folder(folder)
    assert loaded.config == cfg
    saved = {tuple(p): np.asarray(v[...]) for p, v in nnx.to_flat_state(state)}
    for path, value in nnx.to_flat_state(loaded.state):
        np.testing.assert_array_equal(np.asarray(value[...]), saved[tuple(path)])
    assert map_tensors(cfg, TensorFiles(folder)).keys() == saved.keys()


def test_a_browser_chosen_folder_must_lie_inside_the_root_and_fit_the_bound(tmp_path, monkeypatch):
    root = tmp_path / "root"
    root.mkdir()
    shutil.copytree(FIXTURES / "gpt2", root / "gpt2")
    (root / "escape").symlink_to(FIXTURES / "gpt2")
    assert resolve_model_dir("gpt2", root) == (root / "gpt2").resolve()
    for asked in ("escape", str(FIXTURES / "gpt2"), "../root/..", "", "missing", "gpt2/../.."):
        with pytest.raises(InputError) as info:
            resolve_model_dir(asked, root)
        assert str(info.value) == NOT_AVAILABLE
    monkeypatch.setenv("ATTENTION_LAB_MAX_MODEL_BYTES", "1000")
    with pytest.raises(InputError, match=r"^gpt2: the weights take \d+ kB as float32, more than the 1 kB this"):
        resolve_model_dir("gpt2", root)
    monkeypatch.setenv("ATTENTION_LAB_MAX_MODEL_BYTES", "lots")
    with pytest.raises(InputError, match="ATTENTION_LAB_MAX_MODEL_BYTES='lots' is not a whole number of bytes"):
        resolve_model_dir("gpt2", root)


# ----------------------------------------------------------------------------- fused tensors of the newer families


@settings(max_examples=40, deadline=None)
@given(heads=st.integers(1, 5), head_dim=st.integers(1, 6), fan_in=st.integers(1, 7), seed=st.integers(0, 2**16))
def test_gpt_neox_query_key_value_is_cut_per_head_as_transformers_reads_it(heads, head_dim, fan_in, seed):
    # modeling_gpt_neox.py: qkv = x @ W.T, viewed [..., H, 3·d], chunked into q, k, v along the last axis.
    rng = np.random.default_rng(seed)
    width = 3 * heads * head_dim
    stored, bias, x = rng.normal(size=(width, fan_in)), rng.normal(size=width), rng.normal(size=(2, fan_in))
    hf = (x @ stored.T + bias).reshape(2, heads, 3, head_dim)
    targets = (("q",), ("k",), ("v",))
    weight = TensorEntry("w", stored.shape, targets, transpose=True, heads=heads)
    kernels, biases = weight.split(stored.T), TensorEntry("b", bias.shape, targets, heads=heads).split(bias)
    for i in range(3):
        np.testing.assert_allclose((x @ kernels[i] + biases[i]).reshape(2, heads, head_dim), hf[:, :, i], atol=1e-12)
    np.testing.assert_array_equal(weight.join(kernels), stored.T)


def test_phi3s_fused_projections_are_cut_where_transformers_cuts_them():
    # modeling_phi3.py: q = qkv[:H·d], k = the next K·d, v = the rest; gate, up = gate_up.chunk(2).
    rng = np.random.default_rng(0)
    qd, kvd, d = 12, 4, 5
    stored = rng.normal(size=(qd + 2 * kvd, d))
    entry = TensorEntry("qkv", stored.shape, (("q",), ("k",), ("v",)), transpose=True, sizes=(qd, kvd, kvd))
    q, k, v = entry.split(stored.T)
    np.testing.assert_array_equal(q, stored[:qd].T)
    np.testing.assert_array_equal(k, stored[qd:qd + kvd].T)
    np.testing.assert_array_equal(v, stored[qd + kvd:].T)
    np.testing.assert_array_equal(entry.join([q, k, v]), stored.T)


NEW_FAMILIES = ["gemma2", "gemma3", "phi3", "pythia", "gpt_neox_sequential", "olmo2"]


@pytest.mark.parametrize("name", NEW_FAMILIES)
def test_what_hf_tensors_writes_loads_back_the_same(name, tmp_path):
    # map_tensors and hf_tensors are inverses for every layout: fused, per head, with Gemma's (1 + w) norms.
    from flax import nnx

    from models.lm.model import DecoderLM

    cfg = LMConfig.from_hf(json.loads((FIXTURES / name / "config.json").read_text()))
    _, state = nnx.split(DecoderLM(cfg, rngs=nnx.Rngs(1)))
    params = {tuple(p): np.asarray(v[...]) + 0.1 for p, v in nnx.to_flat_state(state)}
    folder = tmp_path / name
    folder.mkdir()
    save_file(hf_tensors(cfg, params), str(folder / "model.safetensors"), metadata={"format": "pt"})
    loaded = map_tensors(cfg, TensorFiles(folder))
    assert set(loaded) == set(params)
    assert sum(v.size for v in params.values()) == cfg.parameter_count()  # the size bound counts what is loaded
    for path, value in params.items():
        np.testing.assert_allclose(loaded[path], value, atol=1e-6, err_msg=str(path))


def test_older_pythia_buffers_are_skipped_and_an_unknown_tensor_is_named(tmp_path):
    folder = _copy("pythia", tmp_path)
    _rewrite(folder, lambda t: t.update({
        "gpt_neox.layers.0.attention.bias": np.ones((1, 1, 4, 4), bool),
        "gpt_neox.layers.0.attention.masked_bias": np.asarray(-1e9, np.float32),
        "gpt_neox.layers.1.attention.rotary_emb.inv_freq": np.ones(2, np.float32)}))
    assert load_folder(folder).config.model_type == "gpt_neox"
    _rewrite(folder, lambda t: t.update({"gpt_neox.layers.0.attention.dense.scale": np.ones(2, np.float32)}))
    assert "unexpected tensor gpt_neox.layers.0.attention.dense.scale" in _error(folder)
