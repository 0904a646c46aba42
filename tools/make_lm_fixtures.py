"""Writes tests/fixtures/lm/<name>/: tiny random decoder LMs as Hugging Face saves them, with HF's outputs.

The parity tests (tests/models/lm/test_parity.py) load each folder with models/lm/loader.py and
compare our forward against these arrays without torch. Run it in the benchmark venv:

    python3 -m venv .bench-venv
    .bench-venv/bin/pip install torch==2.13.0 transformers safetensors tokenizers numpy
    .bench-venv/bin/python tools/make_lm_fixtures.py [CASE ...]   # default: every case

Each folder holds what save_pretrained leaves (config.json, model.safetensors or shards with
model.safetensors.index.json, tokenizer.json, tokenizer_config.json) and reference.npz with,
per text i: text_i, ids_i (int32 [T], from AutoTokenizer), attention_i (float32 [L, H, T, T],
eager with output_attentions=True) and logits_i (float32 [T, V]). The configurations cover
grouped-query attention with several query heads per key/value head, large rope_theta, each
RoPE scaling kind we compute, biases on and off, tied and untied embeddings, Qwen3's q/k norms
and a head width other than hidden / heads, a sliding window shorter than the longer text,
bfloat16 weights, sharded weights and a config.json in transformers 4.x form; Gemma 2's soft-capping,
query_pre_attn_scalar and sandwich norms, Gemma 3's local RoPE and q/k norms, Phi-3's fused projections,
GPT-NeoX's partial rotary, per-head fused query_key_value and parallel residual (Pythia's own names), and
OLMo 2's post-norms and whole-projection q/k norms. Weights are drawn
larger than HF's initialisation so that the attention maps are far from uniform.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "lm"

TRAINING_TEXT = (
    "Attention lets a model decide, for every token it reads, which earlier tokens matter most. "
    "A decoder reads left to right: each position sees itself and what came before, never what comes after. "
    "The quick brown fox jumps over the lazy dog; the lazy dog sleeps in the sun. "
    "Heads that copy, heads that look one step back, and heads that rest on the first token all appear. "
)
TEXTS = (
    "The quick brown fox sees the lazy dog.",
    "Café déjà vu: naïve Zoë 😺 met Søren — 我爱 — and the decoder reads each token, left to right, 12,345 times!",
)

# name -> (model_type, config kwargs, options)
CASES: dict[str, tuple[str, dict, dict]] = {
    "gpt2": ("gpt2", dict(n_embd=32, n_layer=2, n_head=4, n_positions=128), {}),
    "gpt2_untied_scaled": (
        "gpt2", dict(n_embd=24, n_layer=3, n_head=3, n_positions=96, tie_word_embeddings=False,
                     scale_attn_by_inverse_layer_idx=True, activation_function="gelu"), {},
    ),
    "llama": (
        "llama", dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=8,
                      num_key_value_heads=2, attention_bias=True, mlp_bias=True, tie_word_embeddings=False,
                      max_position_embeddings=256,
                      rope_parameters=dict(rope_type="llama3", rope_theta=500000.0, factor=8.0, low_freq_factor=1.0,
                                           high_freq_factor=4.0, original_max_position_embeddings=16)),
        {"bos": True, "shard": True},
    ),
    "mistral": (
        "mistral", dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                        num_key_value_heads=1, head_dim=8, sliding_window=16, tie_word_embeddings=True,
                        max_position_embeddings=256, rope_parameters=dict(rope_type="default", rope_theta=1e6)),
        {"bos": True},
    ),
    "qwen2": (
        "qwen2", dict(hidden_size=48, intermediate_size=64, num_hidden_layers=2, num_attention_heads=6,
                      num_key_value_heads=2, tie_word_embeddings=True, max_position_embeddings=256,
                      rope_parameters=dict(rope_type="linear", rope_theta=1e6, factor=2.0)),
        {"bfloat16": True, "v4_config": True},
    ),
    "qwen3": (
        "qwen3", dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, head_dim=16, attention_bias=False, tie_word_embeddings=False,
                      max_position_embeddings=128,
                      rope_parameters=dict(rope_type="yarn", rope_theta=1e6, factor=4.0,
                                           original_max_position_embeddings=32)),
        {},
    ),
    # Gemma 2: soft-capping of scores and logits (caps small enough to bite), query_pre_attn_scalar, sandwich norms,
    # √d embeddings, local and global layers (0 and 2 slide, the window shorter than the longer text), heads × d ≠
    # hidden.
    "gemma2": (
        "gemma2", dict(hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4,
                       num_key_value_heads=2, head_dim=16, query_pre_attn_scalar=24, sliding_window=8,
                       attn_logit_softcapping=4.0, final_logit_softcapping=3.0, max_position_embeddings=256,
                       rope_parameters=dict(rope_type="default", rope_theta=10000.0)),
        {"bos": True},
    ),
    # Gemma 3 (text): per-head (1 + w) q/k norms, a RoPE of its own on the local layers (base 10 there, linear
    # scaling on the global one), written as transformers 4.x did (rope_theta, rope_local_base_freq, rope_scaling).
    "gemma3": (
        "gemma3_text", dict(hidden_size=32, intermediate_size=64, num_hidden_layers=3, num_attention_heads=4,
                            num_key_value_heads=1, head_dim=8, query_pre_attn_scalar=8, sliding_window=6,
                            layer_types=["sliding_attention", "sliding_attention", "full_attention"],
                            tie_word_embeddings=False, max_position_embeddings=256,
                            rope_parameters={"sliding_attention": dict(rope_type="default", rope_theta=10.0),
                                             "full_attention": dict(rope_type="linear", rope_theta=1e6, factor=4.0)}),
        {"bos": True, "gemma3_v4_config": True},
    ),
    # Phi-3: fused qkv_proj (grouped: q wider than k and v) and gate_up_proj, RoPE on half of each head, a window.
    "phi3": (
        "phi3", dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=2, sliding_window=10, max_position_embeddings=256, pad_token_id=0,
                     rope_parameters=dict(rope_type="default", rope_theta=1e4, partial_rotary_factor=0.5)),
        {"bos": True},
    ),
    # Pythia: parallel residual, RoPE on a quarter of each head, query_key_value laid out per head, LayerNorm
    # biases; config.json with rotary_pct / rotary_emb_base and the head stored as embed_out, as Pythia's folders are.
    "pythia": (
        "gpt_neox", dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                         use_parallel_residual=True, max_position_embeddings=256,
                         rope_parameters=dict(rope_type="default", rope_theta=10000.0, partial_rotary_factor=0.25)),
        {"neox_v4_config": True, "rename": {"lm_head.weight": "embed_out.weight"}},
    ),
    # GPT-NeoX without the parallel residual and without attention biases, half of each head turned, tied.
    "gpt_neox_sequential": (
        "gpt_neox", dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                         use_parallel_residual=False, attention_bias=False, tie_word_embeddings=True,
                         hidden_act="gelu_new", max_position_embeddings=256,
                         rope_parameters=dict(rope_type="default", rope_theta=500.0, partial_rotary_factor=0.5)),
        {},
    ),
    # OLMo 2: norms after attention and after the MLP only, q/k RMSNorm over the whole projection, GQA.
    "olmo2": (
        "olmo2", dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, tie_word_embeddings=False, max_position_embeddings=256,
                      rope_parameters=dict(rope_type="default", rope_theta=5e5)),
        {},
    ),
}


def train_tokenizer(bos: bool):
    """Returns a byte-level BPE (vocabulary 320) trained on TRAINING_TEXT; with bos, its post-processor
    puts <s> first, as Llama-family tokenizers do."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    specials = ["<s>", "</s>"] if bos else ["<|endoftext|>"]
    trainer = trainers.BpeTrainer(vocab_size=320, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator([TRAINING_TEXT] * 4, trainer)
    if bos:
        tokenizer.post_processor = processors.TemplateProcessing(
            single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", tokenizer.token_to_id("<s>"))]
        )
    else:
        tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    return tokenizer, specials


def randomize(model, seed: int) -> None:
    """Draws every parameter larger than HF's init: matrices ~ N(0, 1.5² / fan_in), embeddings N(0, 1),
    norm weights 1 + N(0, 0.3²), biases N(0, 0.3²)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, param in model.named_parameters():
            noise = torch.randn(param.shape, generator=generator)
            if param.ndim == 1:
                param.copy_(1 + 0.3 * noise if ("norm" in name or ".ln_" in name) else 0.3 * noise)
            elif "wte" in name or "wpe" in name or "embed_tokens" in name or "embed_in" in name:
                param.copy_(noise)
            else:
                fan_in = param.shape[0] if "transformer.h." in name else param.shape[1]  # GPT-2 Conv1D is (in, out)
                param.copy_(1.5 * noise / fan_in**0.5)


def to_v4_config(folder: Path) -> None:
    """Rewrites config.json with rope_theta and rope_scaling at the top level, as transformers 4.x saved it."""
    path = folder / "config.json"
    data = json.loads(path.read_text())
    rope = data.pop("rope_parameters")
    data["rope_theta"] = rope.pop("rope_theta")
    if rope.get("rope_type", "default") != "default":
        data["rope_scaling"] = {"type": rope.pop("rope_type"), **rope}
    path.write_text(json.dumps(data, indent=2) + "\n")


def to_gemma3_v4_config(folder: Path) -> None:
    """Rewrites a Gemma 3 config.json in transformers 4.x form: rope_theta and rope_scaling (the global layers),
    rope_local_base_freq (the local ones)."""
    path = folder / "config.json"
    data = json.loads(path.read_text())
    rope = data.pop("rope_parameters")
    full, local = dict(rope["full_attention"]), rope["sliding_attention"]
    data["rope_theta"] = full.pop("rope_theta")
    data["rope_local_base_freq"] = local["rope_theta"]
    if full.get("rope_type", "default") != "default":
        data["rope_scaling"] = full
    path.write_text(json.dumps(data, indent=2) + "\n")


def to_neox_v4_config(folder: Path) -> None:
    """Rewrites a GPT-NeoX config.json as Pythia's folders hold it: rotary_pct and rotary_emb_base at the top level."""
    path = folder / "config.json"
    data = json.loads(path.read_text())
    rope = data.pop("rope_parameters")
    data["rotary_emb_base"] = rope["rope_theta"]
    data["rotary_pct"] = rope["partial_rotary_factor"]
    path.write_text(json.dumps(data, indent=2) + "\n")


def rename_tensors(folder: Path, names: dict[str, str]) -> None:
    """Renames stored tensors (older checkpoints' names), keeping the file's metadata."""
    from safetensors import safe_open
    from safetensors.numpy import save_file

    file = folder / "model.safetensors"
    with safe_open(str(file), "np") as stored:
        tensors = {names.get(k, k): stored.get_tensor(k) for k in stored.keys()}
        metadata = stored.metadata()
    save_file(tensors, str(file), metadata=metadata)


def make_case(name: str, model_type: str, kwargs: dict, options: dict, seed: int) -> dict[str, np.ndarray]:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, PreTrainedTokenizerFast

    folder = OUT / name
    shutil.rmtree(folder, ignore_errors=True)
    tokenizer, specials = train_tokenizer(options.get("bos", False))
    wrapped = PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token=specials[0], eos_token=specials[-1])
    config = AutoConfig.for_model(model_type, vocab_size=tokenizer.get_vocab_size(), **kwargs)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, attn_implementation="eager").eval()
    randomize(model, seed)
    if options.get("bfloat16"):
        model = model.to(torch.bfloat16)
    model.save_pretrained(folder, safe_serialization=True, max_shard_size="40KB" if options.get("shard") else "1GB")
    wrapped.save_pretrained(folder)
    (folder / "generation_config.json").unlink(missing_ok=True)
    if options.get("v4_config"):
        to_v4_config(folder)
    if options.get("gemma3_v4_config"):
        to_gemma3_v4_config(folder)
    if options.get("neox_v4_config"):
        to_neox_v4_config(folder)
    if options.get("rename"):
        rename_tensors(folder, options["rename"])
    # The reference reads the folder back, as a user's transformers would: weights upcast to float32.
    model = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32).eval()
    hf_tokenizer = AutoTokenizer.from_pretrained(folder)
    arrays = {}
    for i, text in enumerate(TEXTS):
        ids = hf_tokenizer(text)["input_ids"]
        with torch.no_grad():
            out = model(torch.tensor([ids]), output_attentions=True)
        arrays[f"text_{i}"] = np.asarray(text)
        arrays[f"ids_{i}"] = np.asarray(ids, dtype=np.int32)
        arrays[f"attention_{i}"] = torch.stack(out.attentions)[:, 0].numpy().astype(np.float32)
        arrays[f"logits_{i}"] = out.logits[0].numpy().astype(np.float32)
    np.savez_compressed(folder / "reference.npz", **arrays)
    size = sum(p.stat().st_size for p in folder.iterdir())
    print(f"{name:20s} T={[len(arrays[f'ids_{i}']) for i in range(len(TEXTS))]} files={sorted(p.name for p in folder.iterdir())} {size / 1e3:.0f} kB")
    return arrays


def main() -> int:
    import torch

    torch.set_num_threads(2)
    OUT.mkdir(parents=True, exist_ok=True)
    chosen = sys.argv[1:] or list(CASES)  # names of cases to write again (default: all)
    unknown = sorted(set(chosen) - set(CASES))
    if unknown:
        print(f"unknown case {unknown}; known: {', '.join(CASES)}")
        return 2
    for seed, (name, (model_type, kwargs, options)) in enumerate(CASES.items()):
        if name in chosen:
            make_case(name, model_type, kwargs, options, seed)
    total = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"wrote {OUT.relative_to(ROOT)} ({total / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
