"""Strict loading of a BERT-family encoder from a Hugging Face-format folder.

The folder holds config.json (model_type bert, roberta, xlm-roberta, distilbert, electra or modernbert),
model.safetensors and tokenizer.json; it is found, bounded and read by models/model_folders.py, the one reader
of local folders. Every tensor of the file is mapped onto one parameter of models.transformer.model.BertModel
and every parameter must come from the file: unknown or missing tensors raise CheckpointError naming them (in
the family's own spelling), and every shape is checked. Linear weights are stored (out, in) by PyTorch and are
transposed to nnx's (in, out) kernels. The module tree keeps BERT's names; each family's names are mapped onto
them (``hf_name``): DistilBERT's q_lin … ffn.lin2, ModernBERT's fused Wqkv (split in three), Wi, Wo and norms.

Ignored on purpose, and only these:
- ``embeddings.position_ids`` and ``embeddings.token_type_ids``: buffers, not parameters.
- ``pooler.*``: the [CLS] pooler is not part of the attention or hidden states we show.
- the pre-training head a family's downloaded folders carry (IGNORED_HEADS: RoBERTa's ``lm_head.*``,
  DistilBERT's ``vocab_*``, ELECTRA's ``discriminator_predictions.*`` (or its generator's), ModernBERT's ``head.*`` and
  ``decoder.*``); BERT's ``cls.*`` stays unknown, as before.
The family's prefix (``bert.``, ``roberta.``, ``distilbert.``, ``electra.``, ``model.``: checkpoints saved
from …For… heads) is stripped; other heads' tensors are then unknown and raise.
A DistilBERT folder with sinusoidal positions and no stored table gets transformers' sinusoidal table.
"""

from __future__ import annotations

import functools
import re
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
from models.transformer.config import BertConfig, UnsupportedOption

IGNORED_EXACT = frozenset({"embeddings.position_ids", "embeddings.token_type_ids"})
IGNORED_PREFIXES = ("pooler.",)
STRIPPED_PREFIX = "bert."
BERT_MODEL_TYPES = frozenset({"bert", "roberta", "xlm-roberta", "distilbert", "electra", "modernbert"})
# model_type -> the prefix of names saved from its …For… classes
PREFIXES = {
    "bert": "bert.",
    "roberta": "roberta.",
    "xlm-roberta": "roberta.",
    "distilbert": "distilbert.",
    "electra": "electra.",
    "modernbert": "model.",
}
IGNORED_HEADS = {
    "roberta": ("lm_head.",),
    "xlm-roberta": ("lm_head.",),
    "distilbert": ("vocab_transform.", "vocab_layer_norm.", "vocab_projector."),
    "electra": ("discriminator_predictions.", "generator_predictions.", "generator_lm_head."),
    "modernbert": ("head.", "decoder."),
}
# nnx leaf name -> the name PyTorch gives the same tensor
_LEAF_NAMES = {"kernel": "weight", "scale": "weight", "embedding": "weight", "bias": "bias"}
# BERT's names (as torch_name spells them) -> a family's, as (pattern, replacement) applied in order
_RENAMES = {
    "distilbert": (
        (r"^encoder\.layer\.", "transformer.layer."),
        (r"attention\.self\.(q|k|v)\w*\.", r"attention.\1_lin."),
        (r"attention\.output\.dense\.", "attention.out_lin."),
        (r"attention\.output\.LayerNorm\.", "sa_layer_norm."),
        (r"intermediate\.dense\.", "ffn.lin1."),
        (r"output\.dense\.", "ffn.lin2."),
        (r"output\.LayerNorm\.", "output_layer_norm."),
    ),
    "modernbert": (
        (r"^embeddings\.word_embeddings\.", "embeddings.tok_embeddings."),
        (r"^embeddings\.LayerNorm\.", "embeddings.norm."),
        (r"^encoder\.layer\.", "layers."),
        (r"attention\.self\.(query|key|value)\.", "attn.Wqkv."),
        (r"attention\.output\.dense\.", "attn.Wo."),
        (r"intermediate\.dense\.", "mlp.Wi."),
        (r"output\.dense\.", "mlp.Wo."),
    ),
}
_FUSED_PART = {"query": 0, "key": 1, "value": 2}  # ModernBERT's Wqkv rows: q, then k, then v


class CheckpointError(InputError):
    """A model folder whose files do not match a BERT-family encoder; the message names what is wrong."""


def read_config(model_dir: str | Path) -> BertConfig:
    """Returns the BertConfig of a folder; raises InputError if it is not a supported encoder, naming the
    model_type or the config option the forward does not implement."""
    folder = Path(model_dir)
    data = read_config_json(folder)
    config_file = folder / "config.json"
    model_type = data.get("model_type")
    if model_type not in BERT_MODEL_TYPES:
        raise InputError(
            f"{folder} holds a {model_type!r} model, not a BERT-family encoder (config.json model_type must be one "
            f"of {', '.join(sorted(BERT_MODEL_TYPES))})"
        )
    try:
        return BertConfig.from_hf(data)
    except UnsupportedOption as error:
        raise InputError(f"{folder}: {str(error).splitlines()[0]}") from None
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


def _dense(prefix: tuple, fan_in: int, fan_out: int, bias: bool = True) -> dict[tuple, tuple[int, ...]]:
    return {(*prefix, "kernel"): (fan_in, fan_out), **({(*prefix, "bias"): (fan_out,)} if bias else {})}


def _norm(prefix: tuple, width: int, bias: bool = True, name: str = "LayerNorm") -> dict[tuple, tuple[int, ...]]:
    return {(*prefix, name, "scale"): (width,), **({(*prefix, name, "bias"): (width,)} if bias else {})}


def expected_shapes(cfg: BertConfig) -> dict[tuple, tuple[int, ...]]:
    """Returns {nnx path: shape} for every parameter of BertModel(cfg), from the config alone (no
    Flax; tests/models/transformer/test_checkpoint.py checks it against the module's own tree)."""
    d, f, e, nb = cfg.hidden_size, cfg.intermediate_size, cfg.embedding_width, cfg.norm_bias
    shapes = {("embeddings", "word_embeddings", "embedding"): (cfg.vocab_size, e)}
    if cfg.positions != "rope":
        shapes[("embeddings", "position_embeddings", "embedding")] = (cfg.max_position_embeddings, e)
    if cfg.type_vocab_size:
        shapes[("embeddings", "token_type_embeddings", "embedding")] = (cfg.type_vocab_size, e)
    shapes.update(_norm(("embeddings",), e, nb))
    if cfg.embedding_size:
        shapes.update(_dense(("embeddings_project",), e, d))
    for i in range(cfg.num_hidden_layers):
        layer = ("encoder", "layer", i)
        if cfg.pre_norm:
            shapes.update(_norm(layer, d, nb, "attn_norm") if i else {})
            shapes.update(_norm(layer, d, nb, "mlp_norm"))
        for name in ("query", "key", "value"):
            shapes.update(_dense((*layer, "attention", "self", name), d, d, cfg.attention_bias))
        shapes.update(_dense((*layer, "attention", "output", "dense"), d, d, cfg.attention_bias))
        shapes.update(_dense((*layer, "intermediate", "dense"), d, f * (2 if cfg.gated_mlp else 1), cfg.mlp_bias))
        shapes.update(_dense((*layer, "output", "dense"), f, d, cfg.mlp_bias))
        if not cfg.pre_norm:
            shapes.update(_norm((*layer, "attention", "output"), d, nb))
            shapes.update(_norm((*layer, "output"), d, nb))
    if cfg.pre_norm:
        shapes.update(_norm((), d, nb, "final_norm"))
    return shapes


def dotted(path: tuple) -> str:
    """Returns the dotted name of an nnx parameter path ("encoder.layer.0.attention.self.query.kernel")."""
    return ".".join(str(p) for p in path)


def hf_name(cfg: BertConfig, path: tuple) -> tuple[str, int | None]:
    """Returns (the family's tensor name, which third of a fused q/k/v tensor or None) of an nnx parameter path.

    ('encoder', 'layer', 0, 'attention', 'self', 'query', 'kernel') -> 'encoder.layer.0.attention.self.query.weight'
    for BERT, 'transformer.layer.0.attention.q_lin.weight' for DistilBERT, ('layers.0.attn.Wqkv.weight', 0)
    for ModernBERT.
    """
    name = torch_name(path)
    part = _FUSED_PART.get(path[-2]) if cfg.model_type == "modernbert" and "self" in path else None
    for pattern, replacement in _RENAMES.get(cfg.model_type, ()):
        name = re.sub(pattern, replacement, name)
    return name, part


def sinusoidal_table(positions: int, width: int) -> np.ndarray:
    """Returns float32 [positions, width]: DistilBERT's fixed table, sin on even and cos on odd columns of
    pos / 10000^(2⌊j/2⌋/width) (transformers' create_sinusoidal_embeddings)."""
    j = np.arange(width)
    angles = np.arange(positions)[:, None] / np.power(10000, 2 * (j // 2) / width)[None, :]
    return np.where(j % 2 == 0, np.sin(angles), np.cos(angles)).astype(np.float32)


def map_tensors(cfg: BertConfig, tensors: dict[str, np.ndarray]) -> dict[tuple, np.ndarray]:
    """Returns {nnx path: float32 array} for every parameter, from a Hugging Face state dict.

    Raises CheckpointError naming unknown tensors, missing tensors and wrong shapes.
    """
    prefix = PREFIXES.get(cfg.model_type, STRIPPED_PREFIX)
    tensors = {name.removeprefix(prefix): value for name, value in tensors.items()}
    shapes = expected_shapes(cfg)
    sources = {path: hf_name(cfg, path) for path in shapes}
    if cfg.sinusoidal_positions and "embeddings.position_embeddings.weight" not in tensors:
        tensors["embeddings.position_embeddings.weight"] = sinusoidal_table(
            cfg.max_position_embeddings, cfg.hidden_size
        )
    ignored = IGNORED_PREFIXES + IGNORED_HEADS.get(cfg.model_type, ())
    known = {name for name, _ in sources.values()}
    unknown = sorted(
        name for name in tensors if name not in known and name not in IGNORED_EXACT and not name.startswith(ignored)
    )
    missing = sorted({name for name, _ in sources.values() if name not in tensors})
    problems = []
    if unknown:
        problems.append(f"unknown tensors: {', '.join(unknown)}")
    if missing:
        problems.append(f"missing tensors: {', '.join(missing)}")
    if problems:
        family = "BERT" if cfg.model_type == "bert" else cfg.model_type
        raise CheckpointError(f"checkpoint does not match the {family} config; " + "; ".join(problems))
    mapped, wrong = {}, []
    for path, (name, part) in sources.items():
        stored = np.asarray(tensors[name])
        value = stored
        if part is not None and value.ndim >= 1 and value.shape[0] % 3 == 0:
            third = value.shape[0] // 3
            value = value[part * third : (part + 1) * third]
        if path[-1] == "kernel" and value.ndim == 2:
            value = value.T  # PyTorch Linear stores (out, in)
        if tuple(value.shape) != shapes[path]:
            wrong.append(f"{name} {tuple(stored.shape)} (expected {_stored_shape(path, shapes[path], part)})")
            continue
        if not np.issubdtype(value.dtype, np.floating):
            wrong.append(f"{name} has dtype {value.dtype} (expected floating point)")
            continue
        mapped[path] = np.ascontiguousarray(value, dtype=np.float32)
    if wrong:
        raise CheckpointError("checkpoint tensors have wrong shapes or types: " + "; ".join(dict.fromkeys(wrong)))
    return mapped


def _stored_shape(path: tuple, shape: tuple[int, ...], part: int | None = None) -> tuple[int, ...]:
    stored = shape[::-1] if path[-1] == "kernel" else shape
    return stored if part is None else (3 * stored[0], *stored[1:])


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
