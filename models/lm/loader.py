"""Loads a decoder LM from a Hugging Face folder strictly, and saves a GPT-2 trained here in that format.

A folder is what Hugging Face leaves: config.json, model.safetensors (or shards listed in
model.safetensors.index.json) and tokenizer.json; models/model_folders.py finds and reads its files.
``load_folder`` reads the config first (validated, nothing allocated), then the safetensors headers:
every tensor named in the per-architecture table (``tensor_table``, after Hugging Face's
modeling_gpt2.py, modeling_llama.py and its relatives, modeling_gpt_neox.py) must be there with its
shape and nothing else may be, before any data is read; float16/bfloat16 become float32 (fused tensors
are cut, Gemma's norm weights get their 1 added). ``save_gpt2_folder`` writes what
transformers' GPT2LMHeadModel and PreTrainedTokenizerFast load.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from models.model_folders import (  # noqa: F401 - re-exported: the loader is where folders are opened
    MAX_BYTES_ENV,
    MODEL_ROOT_ENV,
    NOT_AVAILABLE,
    TensorFiles,
    max_model_bytes,
    model_root,
    read_config_json,
    resolve_model_dir,
)
from models.record import InputError

# ----------------------------------------------------------------------------- the decoder LM's tensor table


@dataclass(frozen=True)
class TensorEntry:
    """One stored tensor: its Hugging Face name, stored shape, and the parameters it fills.

    A fused tensor (GPT-2's c_attn, Phi-3's qkv_proj and gate_up_proj) fills several parameters, cut along
    its last axis into `sizes` (default: equal parts); `heads` > 0: the fused axis is laid out per head, each
    head's parts side by side (GPT-NeoX's query_key_value: [h0 q, h0 k, h0 v, h1 q, ...]). transpose: stored
    (out, in) as PyTorch's Linear, kernels here are (in, out). offset: added on loading (Gemma's RMSNorm scales by
    1 + the stored weight).
    """

    name: str
    shape: tuple[int, ...]
    targets: tuple[tuple, ...]
    transpose: bool = False
    sizes: tuple[int, ...] = ()
    heads: int = 0
    offset: float = 0.0

    def split(self, value: np.ndarray) -> list[np.ndarray]:
        """Returns the parts of a stored value (already transposed) that fill the targets, in order."""
        n = len(self.targets)
        if self.heads:
            per_head = value.reshape(*value.shape[:-1], self.heads, n, -1)
            return [per_head[..., i, :].reshape(*value.shape[:-1], -1) for i in range(n)]
        cuts = np.cumsum(self.sizes)[:-1].tolist() if self.sizes else n
        return np.split(value, cuts, axis=-1)

    def join(self, parts: list[np.ndarray]) -> np.ndarray:
        """Returns the stored value (before transposing back) of the targets' parts: split's inverse."""
        if self.heads:
            lead = parts[0].shape[:-1]
            stacked = np.stack([p.reshape(*lead, self.heads, -1) for p in parts], axis=-2)
            return stacked.reshape(*lead, -1)
        return np.concatenate(parts, axis=-1)


def tensor_table(cfg) -> list[TensorEntry]:
    """Returns the table of every tensor a folder of this config must hold (models/lm/config.py LMConfig)."""
    d, f, v, hd = cfg.hidden_size, cfg.intermediate_size, cfg.vocab_size, cfg.head_dim
    qd, kvd = cfg.num_heads * hd, cfg.num_kv_heads * hd
    rows: list[TensorEntry] = []
    offset = 1.0 if cfg.arch.norm_offset else 0.0

    def add(name, shape, *targets, transpose=False, **how):
        rows.append(TensorEntry(name, tuple(shape), tuple(targets), transpose, **how))

    def norm(name, width, target, bias):
        add(f"{name}.weight", (width,), (*target, "scale"), offset=offset)
        if bias:
            add(f"{name}.bias", (width,), (*target, "bias"))

    def linear(name, fan_in, fan_out, target, bias, *parts, **how):
        targets = tuple((*target, part) for part in parts) if parts else (target,)
        add(f"{name}.weight", (fan_out, fan_in), *((*t, "kernel") for t in targets), transpose=True, **how)
        if bias:
            add(f"{name}.bias", (fan_out,), *((*t, "bias") for t in targets), **how)

    if cfg.model_type == "gpt2":  # Hugging Face modeling_gpt2.py: Conv1D weights are stored (in, out)
        add("transformer.wte.weight", (v, d), ("embed",))
        add("transformer.wpe.weight", (cfg.max_positions, d), ("positions",))
        for i in range(cfg.num_layers):
            h, p = f"transformer.h.{i}", ("layers", i)
            norm(f"{h}.ln_1", d, (*p, "attn_norm"), True)
            add(f"{h}.attn.c_attn.weight", (d, 3 * d), *((*p, n, "kernel") for n in "qkv"))
            add(f"{h}.attn.c_attn.bias", (3 * d,), *((*p, n, "bias") for n in "qkv"))
            add(f"{h}.attn.c_proj.weight", (d, d), (*p, "o", "kernel"))
            add(f"{h}.attn.c_proj.bias", (d,), (*p, "o", "bias"))
            norm(f"{h}.ln_2", d, (*p, "mlp_norm"), True)
            add(f"{h}.mlp.c_fc.weight", (d, f), (*p, "fc", "kernel"))
            add(f"{h}.mlp.c_fc.bias", (f,), (*p, "fc", "bias"))
            add(f"{h}.mlp.c_proj.weight", (f, d), (*p, "proj", "kernel"))
            add(f"{h}.mlp.c_proj.bias", (d,), (*p, "proj", "bias"))
        norm("transformer.ln_f", d, ("final_norm",), True)
    elif cfg.model_type == "gpt_neox":  # modeling_gpt_neox.py
        add("gpt_neox.embed_in.weight", (v, d), ("embed",))
        for i in range(cfg.num_layers):
            h, p = f"gpt_neox.layers.{i}", ("layers", i)
            norm(f"{h}.input_layernorm", d, (*p, "attn_norm"), True)
            linear(f"{h}.attention.query_key_value", d, 3 * d, p, cfg.qkv_bias, "q", "k", "v", heads=cfg.num_heads)
            linear(f"{h}.attention.dense", d, d, (*p, "o"), cfg.o_bias)
            norm(f"{h}.post_attention_layernorm", d, (*p, "mlp_norm"), True)
            linear(f"{h}.mlp.dense_h_to_4h", d, f, (*p, "fc"), cfg.mlp_bias)
            linear(f"{h}.mlp.dense_4h_to_h", f, d, (*p, "proj"), cfg.mlp_bias)
        norm("gpt_neox.final_layer_norm", d, ("final_norm",), True)
    else:  # modeling_llama.py and its relatives (Phi-3 fuses, Gemma and OLMo 2 add and move norms)
        norms = cfg.arch.norms
        add("model.embed_tokens.weight", (v, d), ("embed",))
        for i in range(cfg.num_layers):
            h, p = f"model.layers.{i}", ("layers", i)
            if norms != "post":
                norm(f"{h}.input_layernorm", d, (*p, "attn_norm"), False)
            if cfg.model_type == "phi3":
                linear(f"{h}.self_attn.qkv_proj", d, qd + 2 * kvd, p, cfg.qkv_bias, "q", "k", "v",
                       sizes=(qd, kvd, kvd))
            else:
                for name, width in (("q", qd), ("k", kvd), ("v", kvd)):
                    linear(f"{h}.self_attn.{name}_proj", d, width, (*p, name), cfg.qkv_bias)
            linear(f"{h}.self_attn.o_proj", qd, d, (*p, "o"), cfg.o_bias)
            if cfg.qk_norm:
                whole = cfg.qk_norm == "all"
                norm(f"{h}.self_attn.q_norm", qd if whole else hd, (*p, "q_norm"), False)
                norm(f"{h}.self_attn.k_norm", kvd if whole else hd, (*p, "k_norm"), False)
            if norms == "pre":
                norm(f"{h}.post_attention_layernorm", d, (*p, "mlp_norm"), False)
            else:
                norm(f"{h}.post_attention_layernorm", d, (*p, "post_attn_norm"), False)
                norm(f"{h}.post_feedforward_layernorm", d, (*p, "post_mlp_norm"), False)
                if norms == "sandwich":
                    norm(f"{h}.pre_feedforward_layernorm", d, (*p, "mlp_norm"), False)
            if cfg.model_type == "phi3":
                linear(f"{h}.mlp.gate_up_proj", d, 2 * f, p, cfg.mlp_bias, "gate", "up")
            else:
                linear(f"{h}.mlp.gate_proj", d, f, (*p, "gate"), cfg.mlp_bias)
                linear(f"{h}.mlp.up_proj", d, f, (*p, "up"), cfg.mlp_bias)
            linear(f"{h}.mlp.down_proj", f, d, (*p, "down"), cfg.mlp_bias)
        norm("model.norm", d, ("final_norm",), False)
    if not cfg.tie_word_embeddings:
        linear("lm_head", d, v, ("lm_head",), False)
    return rows


# Stored names that are buffers, not parameters: the causal mask of older GPT-2 and GPT-NeoX files and RoPE's
# inverse frequencies of older Llama and GPT-NeoX files (computed here from the config).
_BUFFERS = re.compile(
    r"^(transformer\.)?h\.\d+\.attn\.(masked_)?bias$"
    r"|^(model\.|gpt_neox\.)?layers\.\d+\.(self_attn|attention)\.rotary_emb\.inv_freq$"
    r"|^(gpt_neox\.)?layers\.\d+\.attention\.(masked_)?bias$"
)
# Older names of the same tensors: GPT-NeoX (Pythia) folders call the LM head embed_out.
_ALIASES = {"embed_out.weight": "lm_head.weight"}


def _canonical(name: str, known: set[str]) -> str:
    # A base model saved without its head has no "transformer." / "model." / "gpt_neox." prefix.
    name = _ALIASES.get(name, name)
    if name in known:
        return name
    for prefix in ("transformer.", "model.", "gpt_neox."):
        if prefix + name in known:
            return prefix + name
    return name


def _listed(names: list[str], limit: int = 4) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def map_tensors(cfg, files: TensorFiles) -> dict[tuple, np.ndarray]:
    """Returns {nnx path: float32 array} for every parameter of DecoderLM(cfg), read from the files.

    Strict: names and shapes are checked from the headers before any data is read; a missing,
    extra or misshapen tensor raises InputError naming it.
    """
    table = tensor_table(cfg)
    by_name = {entry.name: entry for entry in table}
    stored: dict[str, str] = {}
    extra = []
    for name in files.shapes:
        canonical = _canonical(name, set(by_name))
        if canonical in by_name:
            stored[canonical] = name
        elif _BUFFERS.match(name) or (canonical == "lm_head.weight" and cfg.tie_word_embeddings):
            continue  # a buffer, or a copy of the tied embeddings that Hugging Face also ignores
        else:
            extra.append(name)
    missing = [entry.name for entry in table if entry.name not in stored]
    where = files.folder.name
    if missing:
        raise InputError(f"{where}: missing tensor {_listed(missing)} (config.json asks for it)")
    if extra:
        raise InputError(f"{where}: unexpected tensor {_listed(sorted(extra))} (not part of a {cfg.model_type} of this config)")
    wrong = [
        f"{entry.name} has shape {files.shapes[stored[entry.name]]}, config.json implies {entry.shape}"
        for entry in table if files.shapes[stored[entry.name]] != entry.shape
    ]
    if wrong:
        raise InputError(f"{where}: tensor {wrong[0]}" + (f" (and {len(wrong) - 1} more)" if len(wrong) > 1 else ""))
    arrays = files.read([stored[entry.name] for entry in table])
    params = {}
    for entry in table:
        value = arrays.pop(stored[entry.name])
        value = value.T if entry.transpose else value
        if entry.offset:
            value = value + np.float32(entry.offset)
        for target, part in zip(entry.targets, entry.split(value)):
            params[target] = np.ascontiguousarray(part)
    return params


def hf_tensors(cfg, params: dict[tuple, np.ndarray]) -> dict[str, np.ndarray]:
    """Returns {Hugging Face name: float32 array} of {nnx path: array}, the inverse of map_tensors."""
    out = {}
    for entry in tensor_table(cfg):
        value = entry.join([np.asarray(params[t], np.float32) for t in entry.targets]) - np.float32(entry.offset)
        out[entry.name] = np.ascontiguousarray(value.T if entry.transpose else value)
    return out


# ----------------------------------------------------------------------------- loading and saving


@dataclass(frozen=True, eq=False)
class LoadedLM:
    """A decoder LM read from a folder: its config, split module (graphdef, state) and tokenizer."""

    folder: Path
    config: Any  # LMConfig
    graphdef: Any
    state: Any
    tokenizer: Any  # tokenizers.Tokenizer, padding and truncation off

    @property
    def name(self) -> str:
        return self.folder.name


@functools.lru_cache(maxsize=8)
def skeleton(cfg):
    """Returns (graphdef, nnx paths) of DecoderLM(cfg), traced without allocating weights."""
    from flax import nnx

    from models.lm.model import DecoderLM

    graphdef, state = nnx.split(nnx.eval_shape(lambda: DecoderLM(cfg, rngs=nnx.Rngs(0))))
    return graphdef, tuple(tuple(path) for path, _ in nnx.to_flat_state(state))


def state_of(cfg, params: dict[tuple, Any], *, consume: bool = False):
    """Returns (graphdef, nnx.State) of DecoderLM(cfg) holding these parameters ({nnx path: array}).

    consume: empty `params` while converting, so that a large model is never held twice.
    """
    import jax.numpy as jnp
    from flax import nnx

    graphdef, paths = skeleton(cfg)
    take = params.pop if consume else params.__getitem__
    return graphdef, nnx.from_flat_state([(path, nnx.Param(jnp.asarray(take(path)))) for path in paths])


def load_tokenizer(folder: str | Path):
    """Returns the folder's tokenizer.json as a tokenizers.Tokenizer, padding and truncation off
    (texts are cut here, with a notice); its own post-processor decides special tokens."""
    from tokenizers import Tokenizer

    file = Path(folder) / "tokenizer.json"
    if not file.is_file():
        raise InputError(f"{Path(folder).name} has no tokenizer.json (the fast tokenizer file Hugging Face saves)")
    try:
        tokenizer = Tokenizer.from_file(str(file))
    except Exception as error:  # the Rust library raises plain Exception for any malformed file
        raise InputError(f"{file} is not a tokenizer.json tokenizers can read ({str(error).splitlines()[0][:200]})") from None
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def load_folder(path: str | Path, *, max_bytes: int | None = None) -> LoadedLM:
    """Returns the decoder LM of a Hugging Face-format folder, loaded strictly.

    Order: config.json (validated, nothing allocated), the safetensors headers (names, shapes,
    size against max_bytes of float32 weights; None: no bound), tokenizer.json, then the data.
    Raises InputError with one line for anything wrong with the folder.
    """
    from models.lm.config import LMConfig

    folder = Path(path).expanduser()
    cfg = LMConfig.from_hf(read_config_json(folder))
    files = TensorFiles(folder)
    files.check_size(max_bytes)
    tokenizer = load_tokenizer(folder)
    if tokenizer.get_vocab_size(with_added_tokens=True) > cfg.vocab_size:
        raise InputError(
            f"{folder.name}: tokenizer.json has {tokenizer.get_vocab_size(with_added_tokens=True)} tokens but the "
            f"model only {cfg.vocab_size} embeddings; they do not belong together"
        )
    graphdef, state = state_of(cfg, map_tensors(cfg, files), consume=True)
    return LoadedLM(folder.resolve(), cfg, graphdef, state, tokenizer)


def save_gpt2_folder(path: str | Path, cfg, state, tokenizer, tokenizer_config: dict | None = None) -> Path:
    """Writes a GPT-2 as Hugging Face saves one: config.json, model.safetensors, tokenizer.json
    (and tokenizer_config.json naming the fast tokenizer), so that transformers loads it.

    state: the nnx.State (or {nnx path: array}) of DecoderLM(cfg); tokenizer: a tokenizers.Tokenizer;
    tokenizer_config: tokenizer_config.json's content (default: the fast tokenizer class and the
    length limit). Returns the folder.
    """
    from safetensors.numpy import save_file

    if cfg.model_type != "gpt2":
        raise ValueError("save_gpt2_folder writes GPT-2 configs only")
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    if isinstance(state, dict):
        params = state
    else:
        from flax import nnx

        params = {tuple(p): np.asarray(v[...] if hasattr(v, "__getitem__") else v) for p, v in nnx.to_flat_state(state)}
    save_file(hf_tensors(cfg, params), str(folder / "model.safetensors"), metadata={"format": "pt"})
    (folder / "config.json").write_text(json.dumps(cfg.to_gpt2_hf(), indent=2) + "\n", encoding="utf-8")
    tokenizer.save(str(folder / "tokenizer.json"))
    if tokenizer_config is None:
        tokenizer_config = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": cfg.max_positions}
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2) + "\n", encoding="utf-8")
    return folder
