"""Reads a translation folder's safetensors into the forward's parameter tree, through models/model_folders.py.

The tree is the same for every architecture (models/translation/forward.py reads it): linear maps stored
(in, out), so x @ w, except the LM head, kept (V, D) as stored so that tied embeddings are one array; a missing
bias or norm is an absent key. Hugging Face's names differ per family:

- Marian, BART, mBART: ``model.{encoder,decoder}.layers.i.{self_attn,encoder_attn}.{q,k,v,out}_proj``,
  ``*_layer_norm``, ``fc1``/``fc2``, ``layernorm_embedding``, ``layer_norm`` (mBART's final norms),
  ``embed_positions`` (BART's learned table; Marian's sinusoids are computed, never read), ``final_logits_bias``;
- T5: ``{encoder,decoder}.block.i.layer.j.{SelfAttention,EncDecAttention}.{q,k,v,o}``, ``layer_norm``,
  ``DenseReluDense.{wi | wi_0, wi_1, wo}``, the first block's ``relative_attention_bias``, ``final_layer_norm``.

Embeddings are tied where the folder has no separate tensor (``shared`` for both stacks and the LM head).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax.numpy as jnp
import numpy as np

from models.model_folders import TensorFiles
from models.record import InputError
from models.text import N_, Notice
from models.translation.config import Arch


def load_params(folder: str | Path, arch: Arch, files: TensorFiles | None = None) -> dict[str, Any]:
    """Returns the parameter tree of a folder (float32 jax arrays); InputError naming a missing tensor."""
    files = files or TensorFiles(folder)
    names = _t5_names(arch, files) if arch.model_type == "t5" else _bart_names(arch, files)
    wanted = sorted({name for name, _ in _leaves(names)})
    missing = [name for name in wanted if name not in files.shapes]
    if missing:
        raise InputError(
            Notice(
                N_("{folder} lacks the tensor {name} a {model_type} model needs"),
                folder=Path(folder).name,
                name=missing[0],
                model_type=arch.model_type,
            )
        )
    params = _build(names, files)
    params["logits_bias"] = params.get("logits_bias", jnp.zeros((arch.vocab_size,), jnp.float32)).reshape(-1)
    if params["dec_embed"].shape != (arch.vocab_size, arch.width):
        raise InputError(
            Notice(
                N_("{folder}: the embeddings are {shape}, not vocab_size × d_model of config.json"),
                folder=Path(folder).name,
                shape=str(tuple(params["dec_embed"].shape)),
            )
        )
    return params


# A leaf spec is (tensor name, "linear" (transposed to (in, out)) | "plain").


def _leaves(tree: Any):
    if isinstance(tree, tuple) and len(tree) == 2 and isinstance(tree[0], str):
        yield tree
    elif isinstance(tree, dict):
        for value in tree.values():
            yield from _leaves(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from _leaves(value)


def _build(tree: Any, files: TensorFiles, made: dict | None = None) -> Any:
    # Reads and converts one tensor at a time, so that the folder is never held twice as float32; made: the
    # leaves built so far, so that a tied tensor (shared embeddings, the LM head) is one array, not a copy per use.
    made = {} if made is None else made
    if isinstance(tree, tuple):
        if tree not in made:
            value = files.read([tree[0]])[tree[0]]
            made[tree] = jnp.asarray(np.ascontiguousarray(value.T) if tree[1] == "linear" else value)
            del value
        return made[tree]
    if isinstance(tree, dict):
        return {key: _build(value, files, made) for key, value in tree.items()}
    return [_build(value, files, made) for value in tree]


def _first(files: TensorFiles, *names: str) -> str:
    return next((name for name in names if name in files.shapes), names[0])


def _bart_names(arch: Arch, files: TensorFiles) -> dict[str, Any]:
    p = "model." if any(name.startswith("model.") for name in files.shapes) else ""
    has: Callable[[str], bool] = lambda name: name in files.shapes  # noqa: E731

    def linear(name: str) -> dict[str, Any]:
        return {"w": (f"{name}.weight", "linear"), **({"b": (f"{name}.bias", "plain")} if has(f"{name}.bias") else {})}

    def norm(name: str) -> dict[str, Any]:
        return {"w": (f"{name}.weight", "plain"), "b": (f"{name}.bias", "plain")}

    def attention(name: str) -> dict[str, Any]:
        return {key: linear(f"{name}.{key}_proj") for key in ("q", "k", "v")} | {"o": linear(f"{name}.out_proj")}

    def layer(stack: str, i: int) -> dict[str, Any]:
        at = f"{p}{stack}.layers.{i}"
        out = {
            "self": attention(f"{at}.self_attn"),
            "norm_self": norm(f"{at}.self_attn_layer_norm"),
            "ffn": {"in": linear(f"{at}.fc1"), "out": linear(f"{at}.fc2")},
            "norm_ffn": norm(f"{at}.final_layer_norm"),
        }
        if stack == "decoder":
            out |= {"cross": attention(f"{at}.encoder_attn"), "norm_cross": norm(f"{at}.encoder_attn_layer_norm")}
        return out

    shared = f"{p}shared.weight"
    names: dict[str, Any] = {
        "enc_embed": (_first(files, f"{p}encoder.embed_tokens.weight", shared), "plain"),
        "dec_embed": (_first(files, f"{p}decoder.embed_tokens.weight", shared), "plain"),
        "lm_head": (_first(files, "lm_head.weight", f"{p}decoder.embed_tokens.weight", shared), "plain"),
        "encoder": [layer("encoder", i) for i in range(arch.encoder_layers)],
        "decoder": [layer("decoder", i) for i in range(arch.decoder_layers)],
    }
    if has("final_logits_bias"):
        names["logits_bias"] = ("final_logits_bias", "plain")
    for stack in ("encoder", "decoder"):
        short = stack[:3]
        if arch.positions == "learned":
            names[f"{short}_pos"] = (f"{p}{stack}.embed_positions.weight", "plain")
        if arch.embed_norm:
            names[f"{short}_embed_norm"] = norm(f"{p}{stack}.layernorm_embedding")
        if arch.final_norm:
            names[f"{short}_final"] = norm(f"{p}{stack}.layer_norm")
    return names


def _t5_names(arch: Arch, files: TensorFiles) -> dict[str, Any]:
    def attention(name: str) -> dict[str, Any]:
        return {key: {"w": (f"{name}.{key}.weight", "linear")} for key in ("q", "k", "v", "o")}

    def norm(name: str) -> dict[str, Any]:
        return {"w": (f"{name}.layer_norm.weight", "plain")}

    def ffn(name: str) -> dict[str, Any]:
        if arch.gated:
            return {
                "in": {"w": (f"{name}.DenseReluDense.wi_0.weight", "linear")},
                "gate": {"w": (f"{name}.DenseReluDense.wi_1.weight", "linear")},
                "out": {"w": (f"{name}.DenseReluDense.wo.weight", "linear")},
            }
        return {
            "in": {"w": (f"{name}.DenseReluDense.wi.weight", "linear")},
            "out": {"w": (f"{name}.DenseReluDense.wo.weight", "linear")},
        }

    def block(stack: str, i: int) -> dict[str, Any]:
        at = f"{stack}.block.{i}.layer"
        out = {"self": attention(f"{at}.0.SelfAttention"), "norm_self": norm(f"{at}.0")}
        if stack == "decoder":
            out |= {"cross": attention(f"{at}.1.EncDecAttention"), "norm_cross": norm(f"{at}.1")}
        last = f"{at}.{2 if stack == 'decoder' else 1}"
        return out | {"ffn": ffn(last), "norm_ffn": norm(last)}

    embed = _first(files, "shared.weight", "encoder.embed_tokens.weight")
    return {
        "enc_embed": (_first(files, "encoder.embed_tokens.weight", embed), "plain"),
        "dec_embed": (_first(files, "decoder.embed_tokens.weight", embed), "plain"),
        "lm_head": (_first(files, "lm_head.weight", embed), "plain"),
        "enc_rel": ("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", "plain"),
        "dec_rel": ("decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", "plain"),
        "enc_final": {"w": ("encoder.final_layer_norm.weight", "plain")},
        "dec_final": {"w": ("decoder.final_layer_norm.weight", "plain")},
        "encoder": [block("encoder", i) for i in range(arch.encoder_layers)],
        "decoder": [block("decoder", i) for i in range(arch.decoder_layers)],
    }
