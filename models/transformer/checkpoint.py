"""Strict loading of a BERT-family encoder from a Hugging Face-format folder.

The folder holds config.json (model_type "bert"), model.safetensors and tokenizer.json; it is found,
bounded and read by models/model_folders.py, the one reader of local folders.
Every tensor of the file is mapped onto one parameter of models.transformer.model.BertModel and every
parameter must come from the file: unknown or missing tensors raise CheckpointError naming
them, and every shape is checked. Linear weights are stored (out, in) by PyTorch and are
transposed to nnx's (in, out) kernels.

Ignored on purpose, and only these:
- ``embeddings.position_ids``: a buffer (0..511), not a parameter; positions are 0..T-1 here.
- ``pooler.*``: the [CLS] pooler is not part of the attention or hidden states we show.
A ``bert.`` prefix (checkpoints saved from BertFor... heads) is stripped; the heads'
own tensors (e.g. ``cls.*``) are then unknown and raise.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np

from models.model_folders import (  # noqa: F401 - model_root and resolve_model_dir are read from here too
    MODEL_ROOT_ENV,
    NOT_AVAILABLE,
    model_root,
    read_config_json,
    read_tensors,
    resolve_model_dir,
)
from models.record import InputError
from models.transformer.config import ACTIVATIONS, BertConfig

IGNORED_EXACT = frozenset({"embeddings.position_ids"})
IGNORED_PREFIXES = ("pooler.",)
STRIPPED_PREFIX = "bert."
BERT_MODEL_TYPES = frozenset({"bert"})
# nnx leaf name -> the name PyTorch gives the same tensor
_LEAF_NAMES = {"kernel": "weight", "scale": "weight", "embedding": "weight", "bias": "bias"}


class CheckpointError(InputError):
    """A model folder whose files do not match a BERT encoder; the message names what is wrong."""


def read_config(model_dir: str | Path) -> BertConfig:
    """Returns the BertConfig of a folder; raises InputError if it is not a BERT-family checkpoint."""
    folder = Path(model_dir)
    data = read_config_json(folder)
    config_file = folder / "config.json"
    model_type = data.get("model_type")
    if model_type not in BERT_MODEL_TYPES:
        raise InputError(
            f"{folder} holds a {model_type!r} model, not a BERT-family encoder (config.json model_type must be 'bert')"
        )
    position_type = data.get("position_embedding_type", "absolute")
    if position_type != "absolute":
        raise InputError(f"{folder}: position_embedding_type {position_type!r} is not supported (only 'absolute')")
    if data.get("hidden_act", "gelu") not in ACTIVATIONS:
        raise InputError(
            f"{folder}: hidden_act {data.get('hidden_act')!r} is not supported; known: {', '.join(ACTIVATIONS)}"
        )
    try:
        return BertConfig.from_dict(data)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError) as error:
        raise InputError(f"{config_file.name}: {str(error).splitlines()[0]}") from None


def torch_name(path: tuple) -> str:
    """Returns the Hugging Face tensor name of an nnx parameter path.

    ('encoder', 'layer', 0, 'attention', 'self', 'query', 'kernel') -> 'encoder.layer.0.attention.self.query.weight'
    """
    *parents, leaf = path
    return ".".join([*(str(p) for p in parents), _LEAF_NAMES[leaf]])


@functools.lru_cache(maxsize=8)
def _skeleton(cfg: BertConfig):
    """Returns (graphdef, ((nnx path, shape), ...)) of BertModel(cfg), traced once per config
    without allocating weights (tracing the random initialisers is the slow part)."""
    from flax import nnx

    from models.transformer.model import BertModel

    abstract = nnx.eval_shape(lambda: BertModel(cfg, rngs=nnx.Rngs(0)))
    graphdef, state = nnx.split(abstract)
    return graphdef, tuple((tuple(path), tuple(leaf.shape)) for path, leaf in nnx.to_flat_state(state))


def _dense(prefix: tuple, fan_in: int, fan_out: int) -> dict[tuple, tuple[int, ...]]:
    return {(*prefix, "kernel"): (fan_in, fan_out), (*prefix, "bias"): (fan_out,)}


def _norm(prefix: tuple, width: int) -> dict[tuple, tuple[int, ...]]:
    return {(*prefix, "LayerNorm", "scale"): (width,), (*prefix, "LayerNorm", "bias"): (width,)}


def expected_shapes(cfg: BertConfig) -> dict[tuple, tuple[int, ...]]:
    """Returns {nnx path: shape} for every parameter of BertModel(cfg), from the config alone (no
    Flax; tests/models/transformer/test_checkpoint.py checks it against the module's own tree)."""
    d, f = cfg.hidden_size, cfg.intermediate_size
    shapes = {
        ("embeddings", "word_embeddings", "embedding"): (cfg.vocab_size, d),
        ("embeddings", "position_embeddings", "embedding"): (cfg.max_position_embeddings, d),
        ("embeddings", "token_type_embeddings", "embedding"): (cfg.type_vocab_size, d),
        **_norm(("embeddings",), d),
    }
    for i in range(cfg.num_hidden_layers):
        layer = ("encoder", "layer", i)
        for name in ("query", "key", "value"):
            shapes.update(_dense((*layer, "attention", "self", name), d, d))
        shapes.update(_dense((*layer, "attention", "output", "dense"), d, d))
        shapes.update(_norm((*layer, "attention", "output"), d))
        shapes.update(_dense((*layer, "intermediate", "dense"), d, f))
        shapes.update(_dense((*layer, "output", "dense"), f, d))
        shapes.update(_norm((*layer, "output"), d))
    return shapes


def dotted(path: tuple) -> str:
    """Returns the dotted name of an nnx parameter path ("encoder.layer.0.attention.self.query.kernel")."""
    return ".".join(str(p) for p in path)


def map_tensors(cfg: BertConfig, tensors: dict[str, np.ndarray]) -> dict[tuple, np.ndarray]:
    """Returns {nnx path: float32 array} for every parameter, from a Hugging Face state dict.

    Raises CheckpointError naming unknown tensors, missing tensors and wrong shapes.
    """
    tensors = {name.removeprefix(STRIPPED_PREFIX): value for name, value in tensors.items()}
    shapes = expected_shapes(cfg)
    by_name = {torch_name(path): path for path in shapes}
    unknown = sorted(
        name
        for name in tensors
        if name not in by_name and name not in IGNORED_EXACT and not name.startswith(IGNORED_PREFIXES)
    )
    missing = sorted(name for name in by_name if name not in tensors)
    problems = []
    if unknown:
        problems.append(f"unknown tensors: {', '.join(unknown)}")
    if missing:
        problems.append(f"missing tensors: {', '.join(missing)}")
    if problems:
        raise CheckpointError("checkpoint does not match the BERT config; " + "; ".join(problems))
    mapped, wrong = {}, []
    for name, path in by_name.items():
        value = np.asarray(tensors[name])
        if path[-1] == "kernel" and value.ndim == 2:
            value = value.T  # PyTorch Linear stores (out, in)
        if tuple(value.shape) != shapes[path]:
            wrong.append(f"{name} {tuple(np.shape(tensors[name]))} (expected {_stored_shape(path, shapes[path])})")
            continue
        if not np.issubdtype(value.dtype, np.floating):
            wrong.append(f"{name} has dtype {value.dtype} (expected floating point)")
            continue
        mapped[path] = np.ascontiguousarray(value, dtype=np.float32)
    if wrong:
        raise CheckpointError("checkpoint tensors have wrong shapes or types: " + "; ".join(wrong))
    return mapped


def _stored_shape(path: tuple, shape: tuple[int, ...]) -> tuple[int, ...]:
    return shape[::-1] if path[-1] == "kernel" else shape


def load_tensors(model_dir: str | Path) -> tuple[BertConfig, dict[str, np.ndarray]]:
    """Returns (config, {dotted nnx path: float32 array}) of a Hugging Face-format folder, checked
    strictly like load_bert but without building the module (no Flax)."""
    cfg = read_config(model_dir)
    return cfg, {dotted(path): value for path, value in map_tensors(cfg, read_tensors(model_dir)).items()}


def model_from_tensors(cfg: BertConfig, tensors: dict[str, Any]):
    """Returns BertModel(cfg) holding these parameters ({dotted path: array}, arrays or tracers)."""
    from flax import nnx

    graphdef, paths = _skeleton(cfg)
    state = nnx.from_flat_state([(path, nnx.Param(tensors[dotted(path)])) for path, _ in paths])
    return nnx.merge(graphdef, state)


def load_bert(model_dir: str | Path):
    """Returns a BertModel with every parameter loaded from a Hugging Face-format folder.

    Raises InputError (CheckpointError for tensor mismatches) with a one-line message.
    """
    import jax.numpy as jnp

    cfg, tensors = load_tensors(model_dir)
    return model_from_tensors(cfg, {name: jnp.asarray(value) for name, value in tensors.items()})
