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
    for model_type, qkv, o, qk_norm in (("llama", False, False, False), ("mistral", False, False, False),
                                        ("qwen2", True, False, False), ("qwen3", False, False, True)):
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


def test_the_fixture_configs_read(tmp_path):
    for folder in FIXTURES.iterdir():
        cfg = LMConfig.from_hf(json.loads((folder / "config.json").read_text()))
        assert cfg.model_type in ARCHITECTURES and hash(cfg) == hash(LMConfig.from_hf(json.loads((folder / "config.json").read_text())))


BAD = [
    ({"model_type": "bert"}, "model_type 'bert' is not supported; supported: gpt2, llama, mistral, qwen2, qwen3"),
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
         "rms_norm_eps", "layer_norm_epsilon", "vocab_size", "sliding_window", "use_sliding_window", "layer_types"]


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
