"""A tiny random BERT in Hugging Face format, written by the tests, and a numpy oracle for it.

make_tiny_bert(folder) writes config.json, model.safetensors (PyTorch names, Linear weights
stored (out, in)) and a WordPiece tokenizer.json built with the `tokenizers` library.
numpy_bert_attention() recomputes BERT's attention from those tensors with plain numpy, so
the loader's mapping and transposes are checked against an independent implementation.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

WORDS = (
    "the cat dog sat on mat a rug hello world , . ! ? ; : ' \" ( ) - & < > / = "
    "b x i y z img src onerror alert 1 2 3 cafe ##s ##ing ##ed 我 好"
).split()
SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
TINY_CONFIG = {
    "architectures": ["BertModel"],
    "model_type": "bert",
    "vocab_size": 64,
    "hidden_size": 24,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 40,
    "max_position_embeddings": 64,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
    "hidden_act": "gelu",
    "pad_token_id": 0,
    "position_embedding_type": "absolute",
}


def tiny_tensors(cfg: dict, seed: int = 0) -> dict[str, np.ndarray]:
    """Returns a random HF-named state dict for cfg (with position_ids and a pooler, as HF saves)."""
    rng = np.random.default_rng(seed)
    d, f = cfg["hidden_size"], cfg["intermediate_size"]

    def normal(*shape, scale=0.4):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    t = {
        "embeddings.word_embeddings.weight": normal(cfg["vocab_size"], d),
        "embeddings.position_embeddings.weight": normal(cfg["max_position_embeddings"], d),
        "embeddings.token_type_embeddings.weight": normal(cfg["type_vocab_size"], d),
        "embeddings.LayerNorm.weight": 1 + normal(d, scale=0.1),
        "embeddings.LayerNorm.bias": normal(d, scale=0.1),
        "embeddings.position_ids": np.arange(cfg["max_position_embeddings"], dtype=np.int64)[None],
        "pooler.dense.weight": normal(d, d),
        "pooler.dense.bias": normal(d),
    }
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        for name in ("query", "key", "value"):
            t[p + f"attention.self.{name}.weight"] = normal(d, d)
            t[p + f"attention.self.{name}.bias"] = normal(d, scale=0.1)
        t[p + "attention.output.dense.weight"] = normal(d, d)
        t[p + "attention.output.dense.bias"] = normal(d, scale=0.1)
        t[p + "attention.output.LayerNorm.weight"] = 1 + normal(d, scale=0.1)
        t[p + "attention.output.LayerNorm.bias"] = normal(d, scale=0.1)
        t[p + "intermediate.dense.weight"] = normal(f, d)  # (out, in)
        t[p + "intermediate.dense.bias"] = normal(f, scale=0.1)
        t[p + "output.dense.weight"] = normal(d, f)
        t[p + "output.dense.bias"] = normal(d, scale=0.1)
        t[p + "output.LayerNorm.weight"] = 1 + normal(d, scale=0.1)
        t[p + "output.LayerNorm.bias"] = normal(d, scale=0.1)
    return t


def write_tokenizer(path: Path, vocab_size: int, max_length: int = 128) -> None:
    """Writes a lower-casing BERT WordPiece tokenizer.json that pads and truncates at max_length,
    like the shipped MiniLM file (the app must turn both off)."""
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece

    vocab = {token: i for i, token in enumerate([*SPECIALS, *WORDS])}
    assert len(vocab) <= vocab_size
    tokenizer = Tokenizer(WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True, handle_chinese_chars=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tokenizer.decoder = decoders.WordPiece()
    tokenizer.enable_padding(length=max_length, pad_id=0, pad_token="[PAD]")
    tokenizer.enable_truncation(max_length)
    tokenizer.save(str(path))


def make_tiny_bert(folder: Path, seed: int = 0, **overrides) -> Path:
    """Writes a tiny random BERT folder (config.json, model.safetensors, tokenizer.json); returns it."""
    from safetensors.numpy import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    cfg = {**TINY_CONFIG, **overrides}
    (folder / "config.json").write_text(json.dumps(cfg, indent=2))
    save_file(tiny_tensors(cfg, seed), str(folder / "model.safetensors"))
    write_tokenizer(folder / "tokenizer.json", cfg["vocab_size"])
    return folder


def _layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def _gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def numpy_bert_attention(t: dict[str, np.ndarray], cfg: dict, ids, types) -> tuple[np.ndarray, np.ndarray]:
    """Returns (attention [L, H, T, T], last hidden [T, D]) in float64 numpy, from HF-named tensors."""
    t = {k: v.astype(np.float64) for k, v in t.items() if v.dtype.kind == "f"}
    ids, types = np.asarray(ids), np.asarray(types)
    n, heads, eps = len(ids), cfg["num_attention_heads"], cfg["layer_norm_eps"]
    x = (
        t["embeddings.word_embeddings.weight"][ids]
        + t["embeddings.position_embeddings.weight"][:n]
        + t["embeddings.token_type_embeddings.weight"][types]
    )
    x = _layer_norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"], eps)
    maps = []
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."

        def linear(h, name, p=p):
            return h @ t[p + name + ".weight"].T + t[p + name + ".bias"]

        def heads_of(h):
            return h.reshape(n, heads, -1).transpose(1, 0, 2)  # [H, T, d]

        q, k, v = (heads_of(linear(x, f"attention.self.{name}")) for name in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        maps.append(probs)
        context = (probs @ v).transpose(1, 0, 2).reshape(n, -1)
        x = _layer_norm(
            linear(context, "attention.output.dense") + x,
            t[p + "attention.output.LayerNorm.weight"],
            t[p + "attention.output.LayerNorm.bias"],
            eps,
        )
        hidden = _gelu(linear(x, "intermediate.dense"))
        x = _layer_norm(
            linear(hidden, "output.dense") + x, t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"], eps
        )
    return np.stack(maps), x
