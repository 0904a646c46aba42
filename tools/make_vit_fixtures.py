"""Writes tests/fixtures/vit/<name>/: tiny random vision transformers as Hugging Face saves them, with HF's outputs.

The parity tests (tests/models/vit/) load each folder with models/vit/model.py and compare our preprocessing and
forward against these arrays without torch. Run it in the benchmark venv (torch CPU, transformers, pillow):

    .bench-venv/bin/pip install pillow
    .bench-venv/bin/python tools/make_vit_fixtures.py

Each folder holds config.json, model.safetensors and preprocessor_config.json, and reference.npz with, per photo i
of PHOTOS: pixel_values_i (float32 [3, H, W], HF's PIL image processor), attention_i (float32 [L, H, T, T], eager,
output_attentions=True) and last_hidden_i (float32 [T, D]); for the DINOv2 folders also pixel_values_alt /
attention_alt / last_hidden_alt at a non-square grid the position embeddings are interpolated to. The cases cover
ViT (a legacy ``size: int`` preprocessor with the pooler saved), DeiT (a distillation token, resize then crop),
DINO (model_type vit, no pooler, ViTForImageClassification prefix), DINOv2 (layer scale, shortest-edge resize,
bicubic position interpolation) and DINOv2 with registers and a SwiGLU MLP (antialiased interpolation). Weights
are drawn larger than HF's initialisation so that the attention maps are far from uniform.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "vit"
PHOTOS = ("tests/fixtures/photos/chelsea.jpg", "tests/fixtures/photos/coins.jpg")
IMAGENET = {"image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]}
SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, patch_size=8)


def bit_processor(shortest_edge: int) -> dict:
    """Returns DINOv2's preprocessor_config.json (BitImageProcessor: resize the shorter side, crop 48 × 48)."""
    return {
        "crop_size": {"height": 48, "width": 48},
        "do_center_crop": True,
        "do_convert_rgb": True,
        "do_normalize": True,
        "do_rescale": True,
        "do_resize": True,
        **IMAGENET,
        "image_processor_type": "BitImageProcessor",
        "resample": 3,
        "rescale_factor": 0.00392156862745098,
        "size": {"shortest_edge": shortest_edge},
    }


# name -> (model class, config class, config kwargs, preprocessor_config.json, alternative grid (rows, cols) or None)
CASES = {
    "vit": (
        "ViTModel",
        "ViTConfig",
        dict(SMALL, image_size=32),
        {
            "do_normalize": True,
            "do_resize": True,
            "feature_extractor_type": "ViTFeatureExtractor",
            "image_mean": [0.5, 0.5, 0.5],
            "image_std": [0.5, 0.5, 0.5],
            "resample": 2,
            "size": 32,
        },
        None,
    ),
    "deit": (
        "DeiTModel",
        "DeiTConfig",
        dict(SMALL, image_size=32, hidden_act="gelu"),
        {
            "crop_size": {"height": 32, "width": 32},
            "do_center_crop": True,
            "do_normalize": True,
            "do_rescale": True,
            "do_resize": True,
            "image_processor_type": "DeiTImageProcessor",
            **IMAGENET,
            "resample": 3,
            "rescale_factor": 1 / 255,
            "size": {"height": 40, "width": 40},
        },
        None,
    ),
    "dino": (
        "ViTForImageClassification",
        "ViTConfig",
        dict(SMALL, image_size=40, num_labels=3),
        {
            "do_normalize": True,
            "do_resize": True,
            "image_processor_type": "ViTImageProcessor",
            **IMAGENET,
            "resample": 3,
            "size": {"height": 40, "width": 40},
            "do_convert_rgb": True,
        },
        None,
    ),
    "dinov2": (
        "Dinov2Model",
        "Dinov2Config",
        dict(SMALL, image_size=32, mlp_ratio=2),
        bit_processor(shortest_edge=56),
        (5, 7),
    ),
    "dinov2_reg": (
        "Dinov2WithRegistersModel",
        "Dinov2WithRegistersConfig",
        dict(SMALL, image_size=32, mlp_ratio=3, num_register_tokens=3, use_swiglu_ffn=True),
        bit_processor(shortest_edge=52),
        (3, 7),
    ),
}


def _randomise(model, torch) -> None:
    # Larger than HF's init (std 0.02), so maps are far from uniform; norms and layer scales away from 1.
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "mask_token" in name:
                continue
            noise = torch.randn(param.shape, generator=generator)
            if name.endswith("lambda1") or "norm" in name and name.endswith("weight"):
                param.copy_(1.0 + 0.3 * noise)
            elif param.ndim == 1:
                param.copy_(0.1 * noise)
            else:
                param.copy_(0.25 * noise)


def main() -> None:
    import torch
    import transformers
    from PIL import Image
    from transformers import AutoImageProcessor

    torch.manual_seed(0)
    for name, (model_class, config_class, kwargs, preprocessor, alternative) in CASES.items():
        folder = OUT / name
        shutil.rmtree(folder, ignore_errors=True)
        config = getattr(transformers, config_class)(**kwargs)
        model = getattr(transformers, model_class)(config).eval()
        _randomise(model, torch)
        model.save_pretrained(folder, safe_serialization=True)
        (folder / "preprocessor_config.json").write_text(json.dumps(preprocessor, indent=2) + "\n")
        loaded = getattr(transformers, model_class).from_pretrained(folder, attn_implementation="eager").eval()
        base = getattr(loaded, loaded.base_model_prefix, loaded)
        processor = AutoImageProcessor.from_pretrained(folder)
        arrays = {}

        def run(pixels: np.ndarray, suffix: str, base=base, arrays=arrays) -> None:
            with torch.no_grad():
                out = base(pixel_values=torch.from_numpy(pixels[None]), output_attentions=True)
            arrays[f"pixel_values_{suffix}"] = pixels.astype(np.float32)
            arrays[f"attention_{suffix}"] = torch.stack(out.attentions)[:, 0].numpy().astype(np.float32)
            arrays[f"last_hidden_{suffix}"] = out.last_hidden_state[0].numpy().astype(np.float32)

        for i, photo in enumerate(PHOTOS):
            image = Image.open(ROOT / photo)
            run(processor(images=image, return_tensors="np")["pixel_values"][0], str(i))
        if alternative is not None:
            rows, cols = alternative
            patch = kwargs["patch_size"]
            pixels = np.random.default_rng(1).normal(size=(3, rows * patch, cols * patch)).astype(np.float32)
            run(pixels, "alt")
        np.savez_compressed(folder / "reference.npz", photos=np.asarray(PHOTOS), **arrays)
        for file in folder.iterdir():
            file.chmod(0o644)
        size = sum(p.stat().st_size for p in folder.iterdir())
        print(f"{name}: {size / 1e3:.0f} kB, tokens {arrays['attention_0'].shape[-1]}")


if __name__ == "__main__":
    main()
