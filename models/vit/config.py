"""A vision transformer folder's two configs, validated: config.json (the model) and preprocessor_config.json
(what its image processor does to a photo), as transformers' ViT, DeiT, DINOv2 and DINOv2-with-registers read them.

A field we do not implement is refused in one line naming it; nothing is silently ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from models.model_folders import read_config_json
from models.record import InputError

MODEL_TYPES = ("vit", "deit", "dinov2", "dinov2_with_registers")
ACTIVATIONS = ("gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "relu", "silu", "swish", "quick_gelu")
# Pillow's filters by their numbers in preprocessor_config.json (PILImageResampling).
RESAMPLE = {0: "nearest", 1: "lanczos", 2: "bilinear", 3: "bicubic", 4: "box", 5: "hamming"}
IMAGENET_STANDARD = (0.5, 0.5, 0.5)  # transformers' ViTImageProcessor defaults
# Processors whose ``size: int`` means the shortest edge (default_to_square False) rather than a square, and whose
# centre crop is on unless the file says otherwise (BitImageProcessor: DINOv2's).
SHORTEST_EDGE_PROCESSORS = ("BitImage", "ConvNextImage", "CLIPImage")


@dataclass(frozen=True)
class VitConfig:
    """A vision transformer's shapes and rules (hashable: a jit static argument and a cache key).

    special: tokens before the patches that carry a position embedding ([CLS], and DeiT's [DIST]); registers:
    DINOv2's register tokens, inserted after [CLS] without a position embedding. layer_scale: DINOv2's per-channel
    scale of each branch. interpolation: how position embeddings reach another patch grid ("bicubic": torch's,
    a = -0.75; "bicubic_aa": torch's antialiased one, a = -0.5, as Dinov2WithRegisters calls it).
    """

    model_type: str
    hidden_size: int
    num_layers: int
    num_heads: int
    intermediate_size: int
    patch_size: int
    image_size: int
    num_channels: int = 3
    special: int = 1
    registers: int = 0
    layer_scale: bool = False
    swiglu: bool = False
    qkv_bias: bool = True
    activation: str = "gelu"
    norm_eps: float = 1e-12
    interpolation: str = "bicubic"

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_heads

    @property
    def grid(self) -> int:
        """Returns the side of the square patch grid the position embeddings were trained on."""
        return self.image_size // self.patch_size


def _whole(data: dict[str, Any], key: str, default: Any = None) -> int:
    value = data.get(key, default)
    if isinstance(value, (list, tuple)) and len(value) == 2 and value[0] == value[1]:
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"config.json: {key} must be a positive whole number (a square), got {value!r}")
    return value


def vit_config(data: dict[str, Any]) -> VitConfig:
    """Returns the VitConfig of a parsed config.json; InputError naming what is not supported."""
    model_type = data.get("model_type")
    if model_type not in MODEL_TYPES:
        raise InputError(
            f"config.json holds a {model_type!r} model, not a vision transformer of the kinds read here "
            f"({', '.join(MODEL_TYPES)})"
        )
    hidden, heads = _whole(data, "hidden_size"), _whole(data, "num_attention_heads")
    if hidden % heads:
        raise InputError(f"config.json: hidden_size {hidden} is not a multiple of num_attention_heads {heads}")
    activation = str(data.get("hidden_act", "gelu"))
    if activation not in ACTIVATIONS:
        raise InputError(f"config.json: hidden_act {activation!r} is not implemented (read: {', '.join(ACTIVATIONS)})")
    channels = _whole(data, "num_channels", 3)
    if channels != 3:
        raise InputError(f"config.json: num_channels {channels} is not implemented (photos have 3)")
    dinov2 = model_type.startswith("dinov2")
    if dinov2:
        ratio = data.get("mlp_ratio", 4)
        intermediate = int(hidden * float(ratio))
        swiglu = bool(data.get("use_swiglu_ffn", False))
        if swiglu:
            intermediate = (int(intermediate * 2 / 3) + 7) // 8 * 8
    else:
        intermediate, swiglu = _whole(data, "intermediate_size"), False
    return VitConfig(
        model_type=model_type,
        hidden_size=hidden,
        num_layers=_whole(data, "num_hidden_layers"),
        num_heads=heads,
        intermediate_size=intermediate,
        patch_size=_whole(data, "patch_size"),
        image_size=_whole(data, "image_size"),
        num_channels=channels,
        special=2 if model_type == "deit" else 1,
        registers=int(data.get("num_register_tokens", 0)) if model_type == "dinov2_with_registers" else 0,
        layer_scale=dinov2,
        swiglu=swiglu,
        qkv_bias=bool(data.get("qkv_bias", True)),
        activation=activation,
        norm_eps=float(data.get("layer_norm_eps", 1e-6 if dinov2 else 1e-12)),
        interpolation="bicubic_aa" if model_type == "dinov2_with_registers" else "bicubic",
    )


@dataclass(frozen=True)
class Preprocess:
    """What the folder's image processor does, in order: convert to RGB, resize to `size` (("height", h, w) or
    ("shortest_edge", s, 0)) with Pillow's `resample` filter, centre crop to `crop` (h, w), multiply by
    `rescale`, normalise by mean and std per channel. None or False: the step is skipped."""

    size: tuple[str, int, int] | None
    resample: str
    crop: tuple[int, int] | None
    rescale: float | None
    mean: tuple[float, float, float] | None
    std: tuple[float, float, float] | None


def _size(value: Any, square: bool, key: str) -> tuple[str, int, int]:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return ("height", value, value) if square else ("shortest_edge", value, 0)
    if isinstance(value, dict):
        if set(value) == {"height", "width"} and all(isinstance(v, int) and v > 0 for v in value.values()):
            return "height", int(value["height"]), int(value["width"])
        if set(value) == {"shortest_edge"} and isinstance(value["shortest_edge"], int) and value["shortest_edge"] > 0:
            return "shortest_edge", int(value["shortest_edge"]), 0
    raise InputError(
        f"preprocessor_config.json: {key} {value!r} is not implemented (read: a whole number, "
        "{height, width} or {shortest_edge})"
    )


def _triple(data: dict[str, Any], key: str, default: tuple[float, float, float]) -> tuple[float, float, float]:
    value = data.get(key, default)
    value = [value] * 3 if isinstance(value, (int, float)) else value
    if not isinstance(value, (list, tuple)) or len(value) != 3 or not all(isinstance(v, (int, float)) for v in value):
        raise InputError(f"preprocessor_config.json: {key} must be three numbers, got {value!r}")
    return float(value[0]), float(value[1]), float(value[2])


def preprocess_config(folder: str | Path) -> Preprocess:
    """Returns the folder's Preprocess from preprocessor_config.json; InputError if it is missing or not supported."""
    file = Path(folder) / "preprocessor_config.json"
    if not file.is_file():
        raise InputError(
            f"{Path(folder).name} has no preprocessor_config.json: the model's image preprocessing is "
            "unknown; save the image processor beside the model (processor.save_pretrained)"
        )
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"{file} is not valid JSON ({str(error).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise InputError(f"{file} is not a JSON object")
    for key in ("do_pad", "do_flip_channel_order", "do_reduce_labels"):
        if data.get(key):
            raise InputError(f"preprocessor_config.json: {key} is not implemented")
    kind = str(data.get("image_processor_type") or data.get("feature_extractor_type") or "")
    square = not kind.startswith(SHORTEST_EDGE_PROCESSORS)
    resample = data.get("resample", 2)
    if resample not in RESAMPLE:
        raise InputError(f"preprocessor_config.json: resample {resample!r} is not one of Pillow's filters 0-5")
    crop = None
    if data.get("do_center_crop", not square):
        kind_, height, width = _size(data.get("crop_size", 224), True, "crop_size")
        crop = (height, width) if kind_ == "height" else (height, height)
    mean = _triple(data, "image_mean", IMAGENET_STANDARD) if data.get("do_normalize", True) else None
    std = _triple(data, "image_std", IMAGENET_STANDARD) if data.get("do_normalize", True) else None
    return Preprocess(
        size=_size(data.get("size", 224), square, "size") if data.get("do_resize", True) else None,
        resample=RESAMPLE[resample],
        crop=crop,
        rescale=float(data.get("rescale_factor", 1 / 255)) if data.get("do_rescale", True) else None,
        mean=mean,
        std=std,
    )


def read_vit_config(folder: str | Path) -> VitConfig:
    """Returns the VitConfig of a folder's config.json."""
    return vit_config(read_config_json(folder))
