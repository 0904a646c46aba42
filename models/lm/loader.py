"""The one reader of local model folders: where they may lie, how large they may be, and their tensors.

A folder is what Hugging Face leaves: config.json, model.safetensors (or shards listed in
model.safetensors.index.json) and tokenizer.json. This module

- decides which folders a browser user may open (``model_root``, ``resolve_model_dir``: inside
  ATTENTION_LAB_MODEL_ROOT, at most ATTENTION_LAB_MAX_MODEL_BYTES of float32 weights);
- reads safetensors lazily (``TensorFiles``: names, shapes and dtypes from the headers first,
  data only when every name and shape has been checked), never pickles;
- loads a decoder LM strictly (``load_folder``): every tensor named in the per-architecture table
  (``tensor_table``) must be there with its shape, nothing else may be; float16/bfloat16 become float32;
- writes a GPT-2 trained here in Hugging Face's format (``save_gpt2_folder``).

The BERT loader (models/transformer/checkpoint.py) reads its folders through the same functions.
Every problem a folder can have is one InputError line naming it.
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from models.record import InputError

MODEL_ROOT_ENV = "ATTENTION_LAB_MODEL_ROOT"
MAX_BYTES_ENV = "ATTENTION_LAB_MAX_MODEL_BYTES"
DEFAULT_MAX_BYTES = 2_000_000_000
NOT_AVAILABLE = "that model folder is not available here; the folders you may use are the ones the operator put under the model root"
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
_FLOAT_DTYPES = {"F16": 2, "BF16": 2, "F32": 4, "F64": 8}

# ----------------------------------------------------------------------------- where folders may lie


def model_root() -> Path | None:
    """Returns the operator-set folder that user-chosen model folders must lie in, or None (no
    user-chosen folders: pages hide the box)."""
    value = os.environ.get(MODEL_ROOT_ENV, "").strip()
    return Path(value).expanduser().resolve() if value else None


def max_model_bytes() -> int:
    """Returns the operator's bound on a browser-chosen model's float32 weights (default 2 GB)."""
    value = os.environ.get(MAX_BYTES_ENV, "").strip().replace("_", "")
    if not value:
        return DEFAULT_MAX_BYTES
    if not value.isdigit():
        raise InputError(f"{MAX_BYTES_ENV}={value!r} is not a whole number of bytes; ask the operator to fix it")
    return int(value)


def resolve_model_dir(text: str, root: Path | None, *, max_bytes: int | None = None) -> Path:
    """Returns the resolved folder a browser user asked for, inside `root`; InputError otherwise.

    Relative names are taken inside the root; symlinks are followed before the check, so one
    that leaves the root is refused. Every refusal of a folder that is not usable is the same
    sentence, whether the path exists or not, so the box cannot probe the server's files. A usable
    folder whose weights exceed max_bytes (default: max_model_bytes()) as float32 is refused by size.
    """
    if root is None or not text or "\x00" in text or len(text) > 1024:
        raise InputError(NOT_AVAILABLE)
    try:
        candidate = Path(text).expanduser()
        candidate = (candidate if candidate.is_absolute() else root / candidate).resolve()
        inside = candidate.is_relative_to(root) and candidate != root
        usable = inside and (candidate / "config.json").is_file()
    except (OSError, RuntimeError, ValueError):
        usable = False
    if not usable:
        raise InputError(NOT_AVAILABLE)
    TensorFiles(candidate).check_size(max_model_bytes() if max_bytes is None else max_bytes)
    return candidate


# ----------------------------------------------------------------------------- reading a folder


def read_config_json(folder: str | Path) -> dict[str, Any]:
    """Returns the parsed config.json of a folder; InputError if the folder or the file is not usable."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"model folder not found: {folder}")
    config_file = folder / "config.json"
    if not config_file.is_file():
        raise InputError(f"{folder} has no config.json: not a Hugging Face model folder")
    try:
        data = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"{config_file} is not valid JSON ({str(error).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise InputError(f"{config_file} is not a JSON object")
    return data


def weight_files(folder: str | Path) -> list[Path]:
    """Returns the safetensors files of a folder: model.safetensors, or the shards its index lists.

    A folder with only pickled PyTorch weights is refused (unpickling can run code).
    """
    folder = Path(folder)
    single, index = folder / "model.safetensors", folder / "model.safetensors.index.json"
    if single.is_file():
        return [single]
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
            names = sorted(set(weight_map.values()))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, AttributeError):
            raise InputError(f"{index} is not a safetensors index (a JSON object with a weight_map)") from None
        shards = []
        for name in names:
            shard = (folder / str(name)).resolve()
            if not shard.is_relative_to(folder.resolve()) or not shard.is_file():
                raise InputError(f"{index.name} lists {name!r}, which is not a file in {folder}")
            shards.append(shard)
        if not shards:
            raise InputError(f"{index} lists no files")
        return shards
    pickles = sorted(p.name for p in folder.iterdir() if p.suffix in PICKLE_SUFFIXES)
    if pickles:
        raise InputError(
            f"{folder} holds only pickled PyTorch weights ({', '.join(pickles[:3])}); pickles are refused because "
            "loading one can run code: save the model with safetensors (save_pretrained(safe_serialization=True))"
        )
    raise InputError(f"{folder} has no model.safetensors (nor model.safetensors.index.json)")


class TensorFiles:
    """The tensors of a folder's safetensors files, read lazily: headers now, data on request."""

    def __init__(self, folder: str | Path):
        from safetensors import SafetensorError, safe_open

        self.folder = Path(folder)
        self.files = weight_files(self.folder)
        self.where: dict[str, Path] = {}
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.dtypes: dict[str, str] = {}
        for file in self.files:
            try:
                with safe_open(str(file), framework="numpy") as handle:
                    for name in handle.keys():
                        view = handle.get_slice(name)
                        if name in self.where:
                            raise InputError(f"tensor {name} is stored twice ({self.where[name].name} and {file.name})")
                        self.where[name], self.shapes[name] = file, tuple(view.get_shape())
                        self.dtypes[name] = view.get_dtype()
            except (SafetensorError, OSError, ValueError) as error:
                if isinstance(error, InputError):
                    raise
                raise InputError(f"{file} is not a readable safetensors file ({str(error).splitlines()[0]})") from None

    def float32_bytes(self) -> int:
        """Returns how many bytes the tensors take once upcast to float32."""
        return sum(4 * int(np.prod(shape, dtype=np.int64)) for shape in self.shapes.values())

    def check_size(self, max_bytes: int | None) -> None:
        """Raises InputError if the weights as float32 exceed max_bytes (None: no bound)."""
        needed = self.float32_bytes()
        if max_bytes is not None and needed > max_bytes:
            raise InputError(
                f"{self.folder.name}: the weights take {needed / 1e9:.2f} GB as float32, more than the "
                f"{max_bytes / 1e9:.2f} GB this server allows ({MAX_BYTES_ENV}); choose a smaller model"
            )

    def read(self, names: list[str]) -> dict[str, np.ndarray]:
        """Returns {name: float32 array} of these tensors; InputError for a tensor that is not floating point."""
        from safetensors import SafetensorError, safe_open

        wrong = [f"{n} ({self.dtypes[n]})" for n in names if self.dtypes[n] not in _FLOAT_DTYPES]
        if wrong:
            raise InputError(f"tensors that are not floating point: {', '.join(wrong[:5])}")
        out = {}
        for file in self.files:
            wanted = [n for n in names if self.where[n] == file]
            if not wanted:
                continue
            try:
                with safe_open(str(file), framework="numpy") as handle:
                    for name in wanted:
                        out[name] = np.asarray(handle.get_tensor(name), dtype=np.float32)
            except (SafetensorError, OSError, ValueError) as error:
                raise InputError(f"{file} is not a readable safetensors file ({str(error).splitlines()[0]})") from None
        return out


def read_tensors(folder: str | Path, max_bytes: int | None = None) -> dict[str, np.ndarray]:
    """Returns every tensor of a folder's safetensors files as float32 (for the BERT loader)."""
    files = TensorFiles(folder)
    files.check_size(max_bytes)
    return files.read(list(files.shapes))


# ----------------------------------------------------------------------------- the decoder LM's tensor table


@dataclass(frozen=True)
class TensorEntry:
    """One stored tensor: its Hugging Face name, stored shape, and the parameters it fills.

    A fused tensor (GPT-2's c_attn) fills several parameters, split evenly along its last axis;
    transpose: stored (out, in) as PyTorch's Linear, kernels here are (in, out).
    """

    name: str
    shape: tuple[int, ...]
    targets: tuple[tuple, ...]
    transpose: bool = False


def tensor_table(cfg) -> list[TensorEntry]:
    """Returns the table of every tensor a folder of this config must hold (models/lm/config.py LMConfig)."""
    d, f, v, hd = cfg.hidden_size, cfg.intermediate_size, cfg.vocab_size, cfg.head_dim
    qd, kvd = cfg.num_heads * hd, cfg.num_kv_heads * hd
    rows: list[TensorEntry] = []

    def add(name, shape, *targets, transpose=False):
        rows.append(TensorEntry(name, tuple(shape), tuple(targets), transpose))

    def norm(name, width, target, bias):
        add(f"{name}.weight", (width,), (*target, "scale"))
        if bias:
            add(f"{name}.bias", (width,), (*target, "bias"))

    def linear(name, fan_in, fan_out, target, bias):
        add(f"{name}.weight", (fan_out, fan_in), (*target, "kernel"), transpose=True)
        if bias:
            add(f"{name}.bias", (fan_out,), (*target, "bias"))

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
    else:  # modeling_llama.py and its relatives
        add("model.embed_tokens.weight", (v, d), ("embed",))
        for i in range(cfg.num_layers):
            h, p = f"model.layers.{i}", ("layers", i)
            norm(f"{h}.input_layernorm", d, (*p, "attn_norm"), False)
            for name, width in (("q", qd), ("k", kvd), ("v", kvd)):
                linear(f"{h}.self_attn.{name}_proj", d, width, (*p, name), cfg.qkv_bias)
            linear(f"{h}.self_attn.o_proj", qd, d, (*p, "o"), cfg.o_bias)
            if cfg.qk_norm:
                norm(f"{h}.self_attn.q_norm", hd, (*p, "q_norm"), False)
                norm(f"{h}.self_attn.k_norm", hd, (*p, "k_norm"), False)
            norm(f"{h}.post_attention_layernorm", d, (*p, "mlp_norm"), False)
            linear(f"{h}.mlp.gate_proj", d, f, (*p, "gate"), cfg.mlp_bias)
            linear(f"{h}.mlp.up_proj", d, f, (*p, "up"), cfg.mlp_bias)
            linear(f"{h}.mlp.down_proj", f, d, (*p, "down"), cfg.mlp_bias)
        norm("model.norm", d, ("final_norm",), False)
    if not cfg.tie_word_embeddings:
        linear("lm_head", d, v, ("lm_head",), False)
    return rows


# Stored names that are buffers, not parameters: the causal mask of older GPT-2 files and RoPE's
# inverse frequencies of older Llama files (computed here from the config).
_BUFFERS = re.compile(r"^(transformer\.)?h\.\d+\.attn\.(masked_)?bias$|^(model\.)?layers\.\d+\.self_attn\.rotary_emb\.inv_freq$")


def _canonical(name: str, known: set[str]) -> str:
    # A base model saved without its head has no "transformer." / "model." prefix.
    if name in known:
        return name
    for prefix in ("transformer.", "model."):
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
        for target, part in zip(entry.targets, np.split(value, len(entry.targets), axis=-1)):
            params[target] = np.ascontiguousarray(part)
    return params


def hf_tensors(cfg, params: dict[tuple, np.ndarray]) -> dict[str, np.ndarray]:
    """Returns {Hugging Face name: float32 array} of {nnx path: array}, the inverse of map_tensors."""
    out = {}
    for entry in tensor_table(cfg):
        value = np.concatenate([np.asarray(params[t], np.float32) for t in entry.targets], axis=-1)
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


def state_of(cfg, params: dict[tuple, Any]):
    """Returns (graphdef, nnx.State) of DecoderLM(cfg) holding these parameters ({nnx path: array})."""
    import jax.numpy as jnp
    from flax import nnx

    graphdef, paths = skeleton(cfg)
    return graphdef, nnx.from_flat_state([(path, nnx.Param(jnp.asarray(params[path]))) for path in paths])


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
    graphdef, state = state_of(cfg, map_tensors(cfg, files))
    return LoadedLM(folder.resolve(), cfg, graphdef, state, tokenizer)


def save_gpt2_folder(path: str | Path, cfg, state, tokenizer) -> Path:
    """Writes a GPT-2 as Hugging Face saves one: config.json, model.safetensors, tokenizer.json
    (and tokenizer_config.json naming the fast tokenizer), so that transformers loads it.

    state: the nnx.State (or {nnx path: array}) of DecoderLM(cfg); tokenizer: a tokenizers.Tokenizer.
    Returns the folder.
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
    tokenizer_config = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": cfg.max_positions}
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2) + "\n", encoding="utf-8")
    return folder
