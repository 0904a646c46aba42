"""Parity with Hugging Face transformers (eager attention, output_attentions=True) on tiny random models.

tests/fixtures/lm/<name>/ holds folders as save_pretrained leaves them and HF's outputs
(tools/make_lm_fixtures.py, run in the torch venv): each architecture, GQA, RoPE scaling kinds,
biases, tied/untied heads, Qwen3's q/k norms, a sliding window, bfloat16 and sharded weights; Gemma 2's
soft-capping and sandwich norms, Gemma 3's local RoPE, Phi-3's fused projections, GPT-NeoX's partial
rotary and parallel residual (with Pythia's names), OLMo 2's post-norms and whole-projection q/k norms.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

from models.lm.loader import load_folder as _load_folder
from models.lm.model import run
from tests.models.parity_helpers import fixture_names, reference_case

FIXTURES, NAMES = fixture_names("lm")
TOLERANCE = 1e-4
load_folder = functools.lru_cache(maxsize=None)(_load_folder)  # each fixture read once


case = reference_case("lm", load_folder)


def test_every_architecture_has_a_fixture():
    types = {load_folder(FIXTURES / name).config.model_type for name in NAMES}
    assert types == {"gpt2", "llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text", "phi3", "gpt_neox", "olmo2"}


def test_token_ids_attention_and_logits_equal_hugging_face(case):
    lm, ref = case
    for i in range(2):
        text = str(ref[f"text_{i}"])
        ids = lm.tokenizer.encode(text).ids
        assert ids == ref[f"ids_{i}"].tolist()
        logits, attention = run(lm.graphdef, lm.state, np.asarray([ids]))
        layers, heads = lm.config.num_layers, lm.config.num_heads
        assert attention.dtype == np.float32 and attention.shape == (layers, 1, heads, len(ids), len(ids))
        np.testing.assert_allclose(attention[:, 0], ref[f"attention_{i}"], atol=TOLERANCE, rtol=0)
        np.testing.assert_allclose(logits[0], ref[f"logits_{i}"], atol=TOLERANCE, rtol=0)


def test_the_fixtures_exercise_what_they_claim():
    # Each would pass unnoticed if the fixture did not depend on it: RoPE scaling, the window, GQA.
    for name, kind in (("llama", "llama3"), ("qwen2", "linear"), ("qwen3", "yarn")):
        lm = load_folder(FIXTURES / name)
        ref = np.load(FIXTURES / name / "reference.npz")
        assert lm.config.rope_type == kind
        plain = dataclasses.replace(lm.config, rope_type="default", rope_scaling=())
        graphdef = _with_config(lm, plain)
        _, attention = run(graphdef, lm.state, ref["ids_1"][None])
        assert np.abs(attention[:, 0] - ref["attention_1"]).max() > 1e-3
    mistral = load_folder(FIXTURES / "mistral")
    window = mistral.config.sliding_window
    attention = np.load(FIXTURES / "mistral" / "reference.npz")["attention_1"]
    assert attention.shape[-1] > window and np.all(attention[..., window:, 0] == 0)
    assert all(load_folder(FIXTURES / n).config.queries_per_kv >= 3 for n in ("llama", "mistral", "qwen2"))
    assert load_folder(FIXTURES / "qwen3").config.num_heads * 16 != load_folder(FIXTURES / "qwen3").config.hidden_size


# (fixture, what the fixture's config reads, the same config without it): each must move the maps or the logits.
WITHOUT = [
    ("gemma2", "attention soft-capping", {"attn_softcap": None}),
    ("gemma2", "logit soft-capping", {"final_softcap": None}),
    ("gemma2", "query_pre_attn_scalar", {"query_pre_attn_scalar": None}),
    ("gemma2", "sliding layers", {"sliding_window": None, "sliding_layers": ()}),
    ("gemma3", "the local layers' RoPE", {"local_rope_theta": None}),
    ("gemma3", "linear RoPE scaling on the global layer", {"rope_type": "default", "rope_scaling": ()}),
    ("phi3", "partial rotary", {"rotary_dim": None}),
    ("pythia", "partial rotary", {"rotary_dim": None}),
    ("pythia", "the parallel residual", {"parallel_residual": False}),
    ("gpt_neox_sequential", "the sequential residual", {"parallel_residual": True}),
]


@pytest.mark.parametrize("name, what, changes", WITHOUT, ids=[f"{n}: {w}" for n, w, _ in WITHOUT])
def test_the_new_families_fixtures_depend_on_what_they_exercise(name, what, changes):
    lm = load_folder(FIXTURES / name)
    ref = np.load(FIXTURES / name / "reference.npz")
    changed = dataclasses.replace(lm.config, **changes)
    logits, attention = run(_with_config(lm, changed), lm.state, ref["ids_1"][None])
    moved = max(np.abs(attention[:, 0] - ref["attention_1"]).max(), np.abs(logits[0] - ref["logits_1"]).max())
    assert moved > 1e-3, what


def test_pythias_own_names_and_config_read():
    # Pythia's folders: rotary_pct / rotary_emb_base at the top level, the head stored as embed_out.
    import json

    from safetensors import safe_open

    data = json.loads((FIXTURES / "pythia" / "config.json").read_text())
    assert "rotary_pct" in data and "rope_parameters" not in data
    with safe_open(str(FIXTURES / "pythia" / "model.safetensors"), "np") as stored:
        assert "embed_out.weight" in stored.keys() and "lm_head.weight" not in stored.keys()
    cfg = load_folder(FIXTURES / "pythia").config
    assert cfg.rope_dim == cfg.head_dim // 4 and cfg.parallel_residual


def _with_config(lm, cfg):
    # The same parameter tree under another (shape-compatible) config.
    from models.lm.loader import skeleton

    return skeleton(cfg)[0]
