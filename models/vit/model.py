"""A vision transformer (ViT, DeiT, DINO, DINOv2 with or without registers): the nnx modules, the strict loader
of a Hugging Face folder, position embeddings moved to the image's patch grid, and the one forward ``encoder``.

Every view (the maps, CLS maps, rollout, one patch's attention, token norms) is a call of ``encoder`` with a
``Capture`` of what to hand back and ``Interventions`` of what to change (models/capture.py), as the decoder
and BERT forwards do. The rules of each kind (a distillation token, registers, layer scale, SwiGLU, how position
embeddings are interpolated) are data in the VitConfig, applied here once.

Shapes: B batch, C channels, P patches (rows × cols), S special tokens with a position ([CLS], [DIST]), R
registers, T = S + R + P tokens, D hidden, H heads, d head width, L layers.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models.capture import CAPTURED, PLAIN, Capture, Interventions, heads_output, keep_values, sow_attention
from models.model_folders import SharedRunners, TensorFiles
from models.record import InputError
from models.vit.config import Preprocess, VitConfig, preprocess_config, read_vit_config

# ----------------------------------------------------------------------------- modules (parameters only)


class Dense(nnx.Module):
    """kernel [in, out] (Hugging Face stores [out, in]) and an optional bias [out]."""

    def __init__(self, fan_in: int, fan_out: int, *, bias: bool = True):
        self.kernel = nnx.Param(jnp.zeros((fan_in, fan_out), jnp.float32))
        self.bias = nnx.Param(jnp.zeros((fan_out,), jnp.float32)) if bias else None


class Norm(nnx.Module):
    def __init__(self, width: int):
        self.scale = nnx.Param(jnp.ones((width,), jnp.float32))
        self.bias = nnx.Param(jnp.zeros((width,), jnp.float32))


class VitLayer(nnx.Module):
    def __init__(self, cfg: VitConfig):
        width, inner = cfg.hidden_size, cfg.intermediate_size
        self.norm1, self.norm2 = Norm(width), Norm(width)
        self.query, self.key, self.value = (Dense(width, width, bias=cfg.qkv_bias) for _ in range(3))
        self.out = Dense(width, width)
        self.fc1 = Dense(width, 2 * inner if cfg.swiglu else inner)  # SwiGLU: [gate | up]
        self.fc2 = Dense(inner, width)
        self.scale1 = nnx.Param(jnp.ones((width,), jnp.float32)) if cfg.layer_scale else None
        self.scale2 = nnx.Param(jnp.ones((width,), jnp.float32)) if cfg.layer_scale else None


class VisionTransformer(nnx.Module):
    def __init__(self, cfg: VitConfig):
        self.config = cfg
        width, patch = cfg.hidden_size, cfg.patch_size
        self.patch = Dense(cfg.num_channels * patch * patch, width)
        self.special = nnx.Param(jnp.zeros((cfg.special, width), jnp.float32))  # [CLS] (and DeiT's [DIST])
        self.registers = nnx.Param(jnp.zeros((cfg.registers, width), jnp.float32)) if cfg.registers else None
        self.positions = nnx.Param(jnp.zeros((cfg.special + cfg.grid**2, width), jnp.float32))
        self.layers = nnx.List([VitLayer(cfg) for _ in range(cfg.num_layers)])
        self.norm = Norm(width)


# ----------------------------------------------------------------------------- position embeddings on another grid


def _cubic(x: np.ndarray, a: float) -> np.ndarray:
    # Keys' cubic convolution kernel, as torch writes it (cubic_convolution1 for |x| < 1, 2 for 1 <= |x| < 2).
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def bicubic_matrix(size_in: int, size_out: int, *, antialias: bool = False) -> np.ndarray:
    """Returns float64 [size_out, size_in]: torch's 1-D bicubic resampling with align_corners=False as a matrix.

    antialias False: a = -0.75, the source point scale·(i + ½) − ½ and its 4 neighbours, indices clamped to the
    edge (torch upsample_bicubic2d). antialias True: a = -0.5, the kernel stretched by the scale when shrinking,
    cut at the edges and renormalised (torch _upsample_bicubic2d_aa, Pillow's rule).
    """
    scale = size_in / size_out
    matrix = np.zeros((size_out, size_in))
    for i in range(size_out):
        if antialias:
            center, support = scale * (i + 0.5), 2.0 * max(scale, 1.0)
            inverse = 1.0 / scale if scale >= 1.0 else 1.0
            low = max(int(center - support + 0.5), 0)
            high = min(int(center + support + 0.5), size_in)
            taps = np.arange(low, high)
            weights = _cubic((taps - center + 0.5) * inverse, -0.5)
            matrix[i, taps] = weights / weights.sum() if weights.sum() != 0 else weights
        else:
            source = scale * (i + 0.5) - 0.5
            index = math.floor(source)
            t = source - index
            for offset, weight in zip(range(-1, 3), _cubic(np.array([t + 1, t, 1 - t, 2 - t]), -0.75)):
                matrix[i, min(max(index + offset, 0), size_in - 1)] += weight
    return matrix


def grid_positions(cfg: VitConfig, table, rows: int, cols: int):
    """Returns [S + rows·cols, D]: the position table [S + grid², D] with its patch part resampled to rows × cols
    (unchanged on the trained square grid). The matrices are numpy constants of the static grid shape."""
    special, patches = table[: cfg.special], table[cfg.special :]
    if (rows, cols) == (cfg.grid, cfg.grid):
        return table
    antialias = cfg.interpolation == "bicubic_aa"
    down = jnp.asarray(bicubic_matrix(cfg.grid, rows, antialias=antialias), jnp.float32)  # [rows, grid]
    across = jnp.asarray(bicubic_matrix(cfg.grid, cols, antialias=antialias), jnp.float32)  # [cols, grid]
    square = patches.reshape(cfg.grid, cfg.grid, -1)
    moved = jnp.einsum("ra,abd,cb->rcd", down, square, across, precision=jax.lax.Precision.HIGHEST)
    return jnp.concatenate([special, moved.reshape(rows * cols, -1)], axis=0)


# ----------------------------------------------------------------------------- the one forward


def _dense(layer: Dense, x):
    y = jnp.matmul(x, layer.kernel[...])
    return y if layer.bias is None else y + layer.bias[...]


def _norm(norm: Norm, x, eps: float):
    mean = x.mean(-1, keepdims=True)
    var = jnp.square(x - mean).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * norm.scale[...] + norm.bias[...]


def _activate(name: str, x):
    if name == "gelu":
        return jax.nn.gelu(x, approximate=False)
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        return jax.nn.gelu(x, approximate=True)
    if name == "quick_gelu":
        return x * jax.nn.sigmoid(1.702 * x)
    return jax.nn.relu(x) if name == "relu" else jax.nn.silu(x)


def embed(model: VisionTransformer, pixels):
    """Returns x [B, T, D]: [CLS] ([DIST]) and the patches with their positions, then DINOv2's registers after
    [CLS]. pixels float32 [B, C, H, W]; a remainder of fewer than patch_size pixels is dropped, as the conv does."""
    cfg = model.config
    batch, channels, height, width = pixels.shape
    p = cfg.patch_size
    rows, cols = height // p, width // p
    patches = pixels[:, :, : rows * p, : cols * p].reshape(batch, channels, rows, p, cols, p)
    patches = patches.transpose(0, 2, 4, 1, 3, 5).reshape(batch, rows * cols, channels * p * p)
    x = _dense(model.patch, patches)
    special = jnp.broadcast_to(model.special[...][None], (batch, cfg.special, cfg.hidden_size))
    x = jnp.concatenate([special, x], axis=1) + grid_positions(cfg, model.positions[...], rows, cols)[None]
    if cfg.registers:
        registers = jnp.broadcast_to(model.registers[...][None], (batch, cfg.registers, cfg.hidden_size))
        x = jnp.concatenate([x[:, :1], registers, x[:, 1:]], axis=1)
    return x


def _attention(layer: VitLayer, cfg: VitConfig, index: int, h, change: Interventions, capture: Capture, sown):
    batch, tokens, _ = h.shape

    def heads(x):  # [B, T, D] -> [B, H, T, d]
        return x.reshape(batch, tokens, cfg.num_heads, cfg.head_dim).transpose(0, 2, 1, 3)

    q, k, v = heads(_dense(layer.query, h)), heads(_dense(layer.key, h)), heads(_dense(layer.value, h))
    v = keep_values(v, change, index)
    scores = jnp.matmul(q, jnp.swapaxes(k, -1, -2)) * (cfg.head_dim**-0.5)  # [B, H, T, T]
    probs, context = heads_output(jax.nn.softmax(scores, axis=-1), v, change, index)
    sow_attention(capture, sown, index, probs, q, k, v, scores, context)
    return _dense(layer.out, context.transpose(0, 2, 1, 3).reshape(batch, tokens, cfg.hidden_size))


def encoder(
    model: VisionTransformer, pixels, *, capture: Capture = PLAIN, interventions: Interventions | None = None
) -> dict[str, Any]:
    """Returns the forward's outputs: "final" (after the last norm [B, T, D]), the CAPTURED names capture asks
    for (tuples over its layers) and "residual" ([L + 1, B, T, D]: the stream entering each block and after the
    last, before the final norm). pixels float32 [B, C, H, W]. capture.logits is ignored (no head is read)."""
    cfg = model.config
    change = interventions if interventions is not None else Interventions()
    sown: dict[str, list] = {name: [] for name in CAPTURED}
    x = embed(model, pixels)
    rows = [x]
    for index, layer in enumerate(model.layers):
        out = _attention(layer, cfg, index, _norm(layer.norm1, x, cfg.norm_eps), change, capture, sown)
        x = x + (out * layer.scale1[...] if cfg.layer_scale else out)
        h = _dense(layer.fc1, _norm(layer.norm2, x, cfg.norm_eps))
        if cfg.swiglu:
            gate, up = jnp.split(h, 2, axis=-1)
            h = jax.nn.silu(gate) * up
        else:
            h = _activate(cfg.activation, h)
        out = _dense(layer.fc2, h)
        x = x + (out * layer.scale2[...] if cfg.layer_scale else out)
        rows.append(x)
    result: dict[str, Any] = {"final": _norm(model.norm, x, cfg.norm_eps)}
    result.update({name: tuple(sown[name]) for name in CAPTURED if getattr(capture, name)})
    if capture.residual:
        result["residual"] = jnp.stack(rows)
    return result


@functools.partial(jax.jit, static_argnames=("graphdef", "capture"))
def captured(state, pixels, interventions: Interventions | None = None, *, graphdef, capture: Capture):
    """Returns encoder's dict of nnx.merge(graphdef, state): jitted once per (graphdef, capture, pixel shape)."""
    return encoder(nnx.merge(graphdef, state), pixels, capture=capture, interventions=interventions)


# ----------------------------------------------------------------------------- the strict loader

PREFIXES = ("vit.", "deit.", "dinov2.", "dinov2_with_registers.")
# Tensors of a folder that the attention views do not read: heads, the pooler, DINOv2's mask token.
UNUSED = ("pooler.", "classifier.", "cls_classifier.", "distillation_classifier.", "embeddings.mask_token")


def _layer_names(cfg: VitConfig, i: int) -> dict[str, tuple]:
    # HF name (under encoder.layer.i.) -> nnx path under layers.i; a Dense's weight is transposed on loading.
    dinov2 = cfg.model_type.startswith("dinov2")
    names = {
        "attention.attention.query": ("query",),
        "attention.attention.key": ("key",),
        "attention.attention.value": ("value",),
        "attention.output.dense": ("out",),
        ("norm1" if dinov2 else "layernorm_before"): ("norm1",),
        ("norm2" if dinov2 else "layernorm_after"): ("norm2",),
    }
    if cfg.swiglu:
        names.update({"mlp.weights_in": ("fc1",), "mlp.weights_out": ("fc2",)})
    elif dinov2:
        names.update({"mlp.fc1": ("fc1",), "mlp.fc2": ("fc2",)})
    else:
        names.update({"intermediate.dense": ("fc1",), "output.dense": ("fc2",)})
    return {f"encoder.layer.{i}.{hf}": ("layers", i, *path) for hf, path in names.items()}


def _parameters(cfg: VitConfig, tensors: dict[str, np.ndarray]) -> dict[tuple, np.ndarray]:
    """Returns {nnx path: array} from the folder's tensors (prefix removed); InputError naming what is missing."""
    out: dict[tuple, np.ndarray] = {}

    def take(name: str) -> np.ndarray:
        if name not in tensors:
            raise InputError(f"the folder's weights have no {name}, which a {cfg.model_type} model needs")
        return tensors.pop(name)

    for i in range(cfg.num_layers):
        for hf, path in _layer_names(cfg, i).items():
            is_norm = path[-1].startswith("norm")
            out[(*path, "scale" if is_norm else "kernel")] = take(f"{hf}.weight") if is_norm else take(f"{hf}.weight").T
            if not (path[-1] in ("query", "key", "value") and not cfg.qkv_bias):
                out[(*path, "bias")] = take(f"{hf}.bias")
        if cfg.layer_scale:
            out[("layers", i, "scale1")] = take(f"encoder.layer.{i}.layer_scale1.lambda1")
            out[("layers", i, "scale2")] = take(f"encoder.layer.{i}.layer_scale2.lambda1")
    conv = take("embeddings.patch_embeddings.projection.weight")  # [D, C, p, p]
    out[("patch", "kernel")] = conv.reshape(conv.shape[0], -1).T
    out[("patch", "bias")] = take("embeddings.patch_embeddings.projection.bias")
    special = [take("embeddings.cls_token").reshape(1, -1)]
    if cfg.special == 2:
        special.append(take("embeddings.distillation_token").reshape(1, -1))
    out[("special",)] = np.concatenate(special)
    if cfg.registers:
        out[("registers",)] = take("embeddings.register_tokens").reshape(cfg.registers, -1)
    out[("positions",)] = take("embeddings.position_embeddings").reshape(-1, cfg.hidden_size)
    out[("norm", "scale")], out[("norm", "bias")] = take("layernorm.weight"), take("layernorm.bias")
    unknown = sorted(name for name in tensors if not name.startswith(UNUSED))
    if unknown:
        raise InputError(
            f"the folder's weights hold tensors a {cfg.model_type} model does not have: "
            f"{', '.join(unknown[:4])}{' …' if len(unknown) > 4 else ''}"
        )
    return out


def _strip_prefix(names: list[str]) -> dict[str, str]:
    # {stored name: name without the task model's prefix (vit., deit., dinov2., …)}
    prefix = next((p for p in PREFIXES if any(n.startswith(p + "embeddings.") for n in names)), "")
    return {name: name.removeprefix(prefix) for name in names}


@dataclass(frozen=True, eq=False)
class LoadedVit:
    """A vision transformer read from a folder: its configs and split module (graphdef, state)."""

    folder: Path
    config: VitConfig
    preprocess: Preprocess
    graphdef: Any
    state: Any
    weight_bytes: int

    @property
    def name(self) -> str:
        return self.folder.name


@functools.lru_cache(maxsize=8)
def skeleton(cfg: VitConfig):
    """Returns (graphdef, nnx paths with shapes) of VisionTransformer(cfg), traced without allocating weights."""
    graphdef, state = nnx.split(nnx.eval_shape(lambda: VisionTransformer(cfg)))
    return graphdef, tuple((tuple(path), tuple(leaf.shape)) for path, leaf in nnx.to_flat_state(state))


def load_folder(folder: str | Path, *, max_bytes: int | None = None) -> LoadedVit:
    """Returns the LoadedVit of a Hugging Face folder (config.json, safetensors, preprocessor_config.json); every
    tensor mapped and its shape checked, InputError in one line for anything else."""
    folder = Path(folder)
    cfg = read_vit_config(folder)
    steps = preprocess_config(folder)
    files = TensorFiles(folder)
    files.check_size(max_bytes)
    renamed = _strip_prefix(list(files.shapes))
    wanted = [stored for stored, name in renamed.items() if not name.startswith(UNUSED)]
    tensors = {renamed[stored]: value for stored, value in files.read(wanted).items()}
    params = _parameters(cfg, tensors)
    graphdef, paths = skeleton(cfg)
    for path, shape in paths:
        if path not in params or tuple(params[path].shape) != shape:
            got = None if path not in params else tuple(params[path].shape)
            raise InputError(f"{folder.name}: {'.'.join(map(str, path))} has shape {got}, the config needs {shape}")
    state = nnx.from_flat_state([(path, nnx.Param(jnp.asarray(params[path]))) for path, _ in paths])
    return LoadedVit(folder, cfg, steps, graphdef, state, files.float32_bytes())


def run(vit: LoadedVit, pixels: np.ndarray, capture: Capture, interventions: Interventions | None = None):
    """Returns encoder's dict as numpy arrays for pixels float32 [C, H, W] (batch of one, batch axis dropped)."""
    out = captured(
        vit.state, jnp.asarray(pixels[None], jnp.float32), interventions, graphdef=vit.graphdef, capture=capture
    )
    return {
        name: np.asarray(value)[:, 0]
        if name == "residual"
        else tuple(np.asarray(a)[0] for a in value)
        if isinstance(value, tuple)
        else np.asarray(value)[0]
        for name, value in out.items()
    }


RUNNERS_KEPT = 2
shared_vit = SharedRunners(lambda folder, max_bytes: _load_shared(folder, max_bytes), RUNNERS_KEPT)


def _load_shared(folder: str | None, max_bytes: int | None) -> LoadedVit:
    if folder is None:
        raise InputError(
            "give a vision transformer folder (--model-dir): a ViT, DeiT, DINO or DINOv2 saved by "
            "Hugging Face transformers"
        )
    return load_folder(folder, max_bytes=max_bytes)
