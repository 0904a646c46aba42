"""Writes tests/fixtures/lm/<name>/: tiny random decoder LMs as Hugging Face saves them, with HF's outputs.

The parity tests (tests/models/lm/test_parity.py) load each folder with models/lm/loader.py and
compare our forward against these arrays without torch. Run it in the benchmark venv:

    python3 -m venv .bench-venv
    .bench-venv/bin/pip install torch==2.13.0 transformers safetensors tokenizers numpy
    .bench-venv/bin/python tools/make_lm_fixtures.py

Each folder holds what save_pretrained leaves (config.json, model.safetensors or shards with
model.safetensors.index.json, tokenizer.json, tokenizer_config.json) and reference.npz with,
per text i: text_i, ids_i (int32 [T], from AutoTokenizer), attention_i (float32 [L, H, T, T],
eager with output_attentions=True) and logits_i (float32 [T, V]). The configurations cover
grouped-query attention with several query heads per key/value head, large rope_theta, each
RoPE scaling kind we compute, biases on and off, tied and untied embeddings, Qwen3's q/k norms
and a head width other than hidden / heads, a sliding window shorter than the longer text,
bfloat16 weights, sharded weights and a config.json in transformers 4.x form. Weights are drawn
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
            elif "wte" in name or "wpe" in name or "embed_tokens" in name:
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
    for seed, (name, (model_type, kwargs, options)) in enumerate(CASES.items()):
        make_case(name, model_type, kwargs, options, seed)
    total = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"wrote {OUT.relative_to(ROOT)} ({total / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
