"""LMConfig.from_hf: every architecture's names, both rope forms, and one line for every bad value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.lm.config import ARCHITECTURES, LMConfig, gpt2_config
from models.record import InputError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "lm"
LLAMA = {"model_type": "llama", "vocab_size": 100, "hidden_size": 32, "intermediate_size": 64,
         "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2}


def test_gpt2_names_and_defaults():
    cfg = gpt2_config(vocab_size=500, n_embd=48, n_layer=3, n_head=6, n_positions=64)
    assert (cfg.hidden_size, cfg.num_layers, cfg.num_heads, cfg.num_kv_heads, cfg.head_dim) == (48, 3, 6, 6, 8)
    assert cfg.intermediate_size == 4 * 48 and cfg.activation == "gelu_new" and cfg.tie_word_embeddings
    assert cfg.qkv_bias and cfg.o_bias and cfg.mlp_bias and cfg.norm_eps == 1e-5
    assert LMConfig.from_hf(cfg.to_gpt2_hf()) == cfg  # the config save_gpt2_folder writes reads back the same


def test_llama_family_flags_come_from_the_architecture_table():
    for model_type, qkv, o, qk_norm in (("llama", False, False, ""), ("mistral", False, False, ""),
                                        ("qwen2", True, False, ""), ("qwen3", False, False, "head")):
        cfg = LMConfig.from_hf({**LLAMA, "model_type": model_type})
        assert (cfg.qkv_bias, cfg.o_bias, cfg.qk_norm) == (qkv, o, qk_norm), model_type
        assert cfg.queries_per_kv == 4 and not cfg.tie_word_embeddings
        assert cfg.head_dim == (128 if model_type == "qwen3" else 4)  # Qwen3's config defaults head_dim to 128
    assert LMConfig.from_hf({**LLAMA, "attention_bias": True}).o_bias
    assert LMConfig.from_hf({**LLAMA, "model_type": "qwen3", "head_dim": 16}).head_dim == 16  # heads × d ≠ hidden


def test_the_v4_and_v5_rope_forms_read_the_same():
    v4 = LMConfig.from_hf({**LLAMA, "rope_theta": 5e5, "rope_scaling": {"type": "linear", "factor": 2.0}})
    v5 = LMConfig.from_hf({**LLAMA, "rope_parameters": {"rope_type": "linear", "rope_theta": 5e5, "factor": 2.0}})
    assert v4 == v5 and v4.rope_type == "linear" and v4.rope_value("factor") == 2.0
    yarn = LMConfig.from_hf({**LLAMA, "max_position_embeddings": 4096,
                             "rope_parameters": {"rope_type": "yarn", "rope_theta": 1e6, "factor": 4.0}})
    assert yarn.rope_value("original_max_position_embeddings") == 4096  # as transformers fills it in


def test_sliding_windows_as_transformers_reads_them():
    assert LMConfig.from_hf({**LLAMA, "model_type": "mistral", "sliding_window": 16}).sliding_layers == (0, 1)
    assert LMConfig.from_hf({**LLAMA, "model_type": "mistral", "sliding_window": None}).sliding_window is None
    qwen = {**LLAMA, "model_type": "qwen2", "sliding_window": 8, "max_window_layers": 1}
    assert LMConfig.from_hf(qwen).sliding_window is None  # use_sliding_window is off by default
    on = LMConfig.from_hf({**qwen, "use_sliding_window": True})
    assert on.sliding_window == 8 and on.sliding_layers == (1,)
    assert LMConfig.from_hf({**LLAMA, "sliding_window": 8}).sliding_window is None  # llama never slides


GEMMA = {**LLAMA, "num_key_value_heads": 4, "head_dim": 16}


def test_gemma_names_and_defaults():
    two = LMConfig.from_hf({**GEMMA, "model_type": "gemma2", "num_hidden_layers": 4})
    assert (two.attn_softcap, two.final_softcap, two.query_pre_attn_scalar) == (50.0, 30.0, 256)  # HF's defaults
    assert two.sliding_window == 4096 and two.sliding_layers == (0, 2) and two.tie_word_embeddings
    assert two.activation == "gelu_pytorch_tanh" and two.arch.norms == "sandwich" and two.local_rope_theta is None
    three = LMConfig.from_hf({**GEMMA, "model_type": "gemma3_text", "num_hidden_layers": 7})
    assert three.sliding_layers == (0, 1, 2, 3, 4, 6) and three.attn_softcap is None and three.final_softcap is None
    assert (three.rope_theta, three.local_rope_theta, three.qk_norm) == (1e6, 1e4, "head")
    assert LMConfig.from_hf({**GEMMA, "model_type": "gemma3_text", "sliding_window_pattern": 2}).sliding_layers == (0,)


def test_gemma3s_rope_forms_read_the_same():
    v4 = LMConfig.from_hf({**GEMMA, "model_type": "gemma3_text", "rope_theta": 5e5, "rope_local_base_freq": 100.0,
                           "rope_scaling": {"rope_type": "linear", "factor": 8.0}})
    v5 = LMConfig.from_hf({**GEMMA, "model_type": "gemma3_text", "rope_parameters": {
        "full_attention": {"rope_type": "linear", "rope_theta": 5e5, "factor": 8.0},
        "sliding_attention": {"rope_type": "default", "rope_theta": 100.0}}})
    assert v4 == v5 and (v4.rope_type, v4.rope_value("factor"), v4.local_rope_theta) == ("linear", 8.0, 100.0)
    assert v4.local_rope_type == "default" and v4.rope_value("factor", local=True) is None


def test_gpt_neox_and_phi3_and_olmo2_names():
    neox = LMConfig.from_hf({**LLAMA, "model_type": "gpt_neox", "num_attention_heads": 4, "rotary_emb_base": 500.0,
                             "layer_norm_eps": 1e-6})
    assert neox.rope_dim == neox.head_dim // 4 and neox.rope_theta == 500.0  # rotary_pct defaults to 0.25
    assert neox.num_kv_heads == neox.num_heads and neox.parallel_residual and neox.qkv_bias and neox.norm_eps == 1e-6
    v5 = LMConfig.from_hf({**LLAMA, "model_type": "gpt_neox", "use_parallel_residual": False, "rope_parameters": {
        "rope_type": "default", "rope_theta": 500.0, "partial_rotary_factor": 0.5}})
    assert v5.rope_dim == v5.head_dim // 2 and not v5.parallel_residual
    phi = LMConfig.from_hf({**LLAMA, "model_type": "phi3", "sliding_window": 7, "partial_rotary_factor": 0.5})
    assert phi.sliding_layers == (0, 1) and phi.rope_dim == phi.head_dim // 2
    olmo = LMConfig.from_hf({**LLAMA, "model_type": "olmo2"})
    assert olmo.qk_norm == "all" and olmo.arch.norms == "post" and olmo.sliding_window is None


# config.json as published folders hold them (transformers 4.x form; the shapes of the named models).
PYTHIA_70M = {"architectures": ["GPTNeoXForCausalLM"], "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "gelu",
              "hidden_size": 512, "intermediate_size": 2048, "layer_norm_eps": 1e-05, "max_position_embeddings": 2048,
              "model_type": "gpt_neox", "num_attention_heads": 8, "num_hidden_layers": 6, "rotary_emb_base": 10000,
              "rotary_pct": 0.25, "tie_word_embeddings": False, "torch_dtype": "float16", "use_cache": True,
              "use_parallel_residual": True, "vocab_size": 50304}
GEMMA3_1B = {"architectures": ["Gemma3ForCausalLM"], "attn_logit_softcapping": None, "bos_token_id": 2,
             "eos_token_id": [1, 106], "final_logit_softcapping": None, "head_dim": 256,
             "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 1152, "intermediate_size": 6912,
             "max_position_embeddings": 32768, "model_type": "gemma3_text", "num_attention_heads": 4,
             "num_hidden_layers": 26, "num_key_value_heads": 1, "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06,
             "rope_local_base_freq": 10000, "rope_scaling": None, "rope_theta": 1000000, "sliding_window": 512,
             "sliding_window_pattern": 6, "vocab_size": 262144}
PHI3_MINI = {"architectures": ["Phi3ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1, "embd_pdrop": 0.0,
             "eos_token_id": 32000, "hidden_act": "silu", "hidden_size": 3072, "intermediate_size": 8192,
             "max_position_embeddings": 4096, "model_type": "phi3", "num_attention_heads": 32, "num_hidden_layers": 32,
             "num_key_value_heads": 32, "original_max_position_embeddings": 4096, "resid_pdrop": 0.0,
             "rms_norm_eps": 1e-05, "rope_scaling": None, "rope_theta": 10000.0, "sliding_window": 2047,
             "tie_word_embeddings": False, "vocab_size": 32064}


def test_published_configs_read_as_transformers_reads_them():
    pythia = LMConfig.from_hf(PYTHIA_70M)
    assert (pythia.head_dim, pythia.rope_dim, pythia.parallel_residual, pythia.activation) == (64, 16, True, "gelu")
    gemma = LMConfig.from_hf(GEMMA3_1B)
    assert gemma.sliding_layers == tuple(i for i in range(26) if (i + 1) % 6) and gemma.sliding_window == 512
    assert (gemma.rope_theta, gemma.local_rope_theta, gemma.eos_token_id) == (1000000, 10000, 1)
    phi = LMConfig.from_hf(PHI3_MINI)
    assert phi.sliding_window == 2047 and phi.sliding_layers == tuple(range(32)) and phi.rope_dim == 96
    long = {**PHI3_MINI, "rope_scaling": {"type": "longrope", "long_factor": [1.0] * 48, "short_factor": [1.0] * 48}}
    with pytest.raises(InputError, match="rope_scaling type 'longrope' is not supported"):
        LMConfig.from_hf(long)


def test_the_fixture_configs_read(tmp_path):
    for folder in FIXTURES.iterdir():
        cfg = LMConfig.from_hf(json.loads((folder / "config.json").read_text()))
        assert cfg.model_type in ARCHITECTURES and hash(cfg) == hash(LMConfig.from_hf(json.loads((folder / "config.json").read_text())))


BAD = [
    ({"model_type": "bert"}, "model_type 'bert' is not supported; supported: gpt2, llama, mistral, qwen2, qwen3, "
                             "gemma2, gemma3_text, phi3, gpt_neox, olmo2"),
    ({"model_type": None}, "model_type None is not supported"),
    ({"model_type": "gpt2", "n_head": 0}, "n_head 0 is not a whole number"),
    ({"model_type": "gpt2", "n_embd": 30, "n_head": 4}, "n_embd 30 is not divisible by n_head 4"),
    ({"model_type": "gpt2", "n_layer": "two"}, "n_layer 'two' is not a whole number"),
    ({"model_type": "gpt2", "n_positions": 10**9}, "n_positions"),
    ({"model_type": "gpt2", "layer_norm_epsilon": 0}, "layer_norm_epsilon 0 is not a number between 0 and 1"),
    ({"model_type": "gpt2", "activation_function": "mish"}, "activation 'mish' is not supported"),
    ({**LLAMA, "num_attention_heads": 0}, "num_attention_heads 0 is not a whole number"),
    ({**LLAMA, "num_attention_heads": 5}, "hidden_size 32 is not divisible by num_attention_heads 5"),
    ({**LLAMA, "num_key_value_heads": 3}, "num_key_value_heads 3 does not divide num_attention_heads 8"),
    ({**LLAMA, "num_key_value_heads": 0}, "num_key_value_heads 0 is not a whole number"),
    ({**LLAMA, "head_dim": 0}, "head_dim 0 is not a whole number"),
    ({**LLAMA, "head_dim": 7}, "head_dim 7 is odd"),
    ({**LLAMA, "vocab_size": -1}, "vocab_size -1"),
    ({**LLAMA, "intermediate_size": 1.5}, "intermediate_size 1.5"),
    ({**LLAMA, "rms_norm_eps": -1e-6}, "rms_norm_eps"),
    ({**LLAMA, "rope_theta": 0}, "rope_theta 0 is not a positive number"),
    ({**LLAMA, "rope_theta": "big"}, "rope_theta 'big' is not a positive number"),
    ({**LLAMA, "rope_scaling": {"type": "dynamic", "factor": 2.0}},
     "rope_scaling type 'dynamic' is not supported; supported: default, linear, llama3, yarn"),
    ({**LLAMA, "rope_scaling": {"type": "linear"}}, "rope_scaling of type 'linear' needs 'factor'"),
    ({**LLAMA, "rope_scaling": {"type": "linear", "factor": 0}}, "rope_scaling factor 0 is not a positive number"),
    ({**LLAMA, "rope_scaling": [1, 2]}, "rope_scaling is not a JSON object"),
    ({**LLAMA, "partial_rotary_factor": 0.5}, "partial_rotary_factor 0.5 is not supported"),
    ({**LLAMA, "tie_word_embeddings": "yes"}, "tie_word_embeddings 'yes' is not true or false"),
    ({**LLAMA, "model_type": "qwen2", "use_sliding_window": True, "sliding_window": 4, "layer_types": ["x"]},
     "layer_types"),
    # A name that changes the computation, on a model_type that does not read it: refused, never ignored.
    ({**LLAMA, "attn_logit_softcapping": 50.0},
     "attn_logit_softcapping 50.0 is not read by a llama model here; it is not supported"),
    ({**LLAMA, "model_type": "qwen2", "final_logit_softcapping": 30.0},
     "final_logit_softcapping 30.0 is not read by a qwen2 model here"),
    ({**LLAMA, "model_type": "mistral", "query_pre_attn_scalar": 256},
     "query_pre_attn_scalar 256 is not read by a mistral model here"),
    ({**LLAMA, "model_type": "gemma2", "rope_local_base_freq": 10000.0},
     "rope_local_base_freq 10000.0 is not read by a gemma2 model here"),
    ({**LLAMA, "model_type": "phi3", "use_parallel_residual": True},
     "use_parallel_residual True is not read by a phi3 model here"),
    ({**LLAMA, "model_type": "olmo2", "clip_qkv": 8.0}, "clip_qkv 8.0 is not read by a olmo2 model here"),
    ({**LLAMA, "model_type": "gemma3_text", "use_bidirectional_attention": True},
     "use_bidirectional_attention True is not read by a gemma3_text model here"),
    ({**LLAMA, "model_type": "gemma2", "attn_logit_softcapping": 0},
     "attn_logit_softcapping 0 is not a positive number"),
    ({**LLAMA, "model_type": "gemma2", "sliding_window": None}, "sliding_window None is not a whole number"),
    ({**LLAMA, "model_type": "phi3", "rope_scaling": {"type": "longrope", "short_factor": [1.0], "long_factor": [1.0]}},
     "rope_scaling type 'longrope' is not supported; supported: default, linear, llama3, yarn"),
    ({**LLAMA, "model_type": "gpt_neox", "rotary_pct": 1.5},
     "partial_rotary_factor 1.5 is not a number between 0 and 1"),
    ({**LLAMA, "model_type": "gpt_neox"}, "partial rotary turns 1 dimensions of each head; RoPE needs an even number"),
    ({**LLAMA, "model_type": "gpt_neox", "rope_scaling": {"type": "dynamic", "factor": 2.0}},
     "rope_scaling type 'dynamic' is not supported"),
    ({**LLAMA, "model_type": "gemma3_text", "rope_parameters": {"sliding_attention": {"rope_type": "dynamic"}}},
     "rope_scaling type 'dynamic' is not supported"),
    ({**LLAMA, "model_type": "gemma3_text", "rope_parameters": {"full_attention": {"rope_type": "linear"}}},
     "rope_scaling of type 'linear' needs 'factor'"),
]


@pytest.mark.parametrize("data, message", BAD, ids=[m[:40] for _, m in BAD])
def test_a_bad_value_is_one_line_naming_it(data, message):
    with pytest.raises(InputError) as info:
        LMConfig.from_hf(data)
    assert str(info.value).startswith(message) or message in str(info.value)
    assert "\n" not in str(info.value)


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**7), st.floats(allow_nan=True), st.text(max_size=5),
                   st.lists(st.integers(0, 3), max_size=2), st.dictionaries(st.sampled_from(["type", "factor"]),
                                                                            st.integers(-1, 3), max_size=2))
NAMES = ["n_embd", "n_head", "n_layer", "n_positions", "n_inner", "hidden_size", "num_attention_heads",
         "num_key_value_heads", "head_dim", "num_hidden_layers", "intermediate_size", "rope_theta", "rope_scaling",
         "rms_norm_eps", "layer_norm_epsilon", "vocab_size", "sliding_window", "use_sliding_window", "layer_types",
         "attn_logit_softcapping", "query_pre_attn_scalar", "rotary_pct", "rope_local_base_freq", "rope_parameters",
         "partial_rotary_factor", "use_parallel_residual", "sliding_window_pattern"]


@settings(max_examples=300, deadline=None)
@given(model_type=st.sampled_from(sorted(ARCHITECTURES)), changes=st.dictionaries(st.sampled_from(NAMES), VALUES, max_size=4))
def test_any_config_gives_a_config_or_one_line(model_type, changes):
    # Never a ZeroDivisionError, KeyError or TypeError: either a config or InputError.
    base = LLAMA if model_type != "gpt2" else {"n_embd": 32, "n_head": 4, "n_layer": 2}
    try:
        cfg = LMConfig.from_hf({**base, "model_type": model_type, **changes})
    except InputError as error:
        assert "\n" not in str(error)
    else:
        assert cfg.num_heads % cfg.num_kv_heads == 0 and cfg.head_dim > 0 and cfg.parameter_count() > 0
