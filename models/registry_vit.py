"""The registry's vision transformer entry: a ViT, DeiT, DINO or DINOv2 folder's attention over a photo, on the
images page (pages.IMAGES). models/registry.py appends VIT_MECHANISMS to MECHANISMS; the entries follow the rules
written there.
"""

from __future__ import annotations

from models import options as o
from models import pages
from models.entry import Mechanism
from models.text import N_

VIT_FOLDER = o.MODEL_DIR.with_(
    required=True,
    help=N_(
        "a local Hugging Face-format ViT, DeiT, DINO or DINOv2 folder (config.json, model.safetensors, "
        "preprocessor_config.json)"
    ),
)
VIT_VIEW = o.Option(
    "view",
    "choice",
    default="all",
    choices=(N_("all"), N_("cls"), N_("rollout"), N_("patch")),
    label=N_("View"),
    help=N_(
        "all: every map [layer, head, token, token]; cls: each head's [CLS] attention over the patch grid; "
        "rollout: [CLS]'s attention rollout over the grid; patch: the chosen patch's attention over the grid"
    ),
)
QUERY_PATCH = o.Option(
    "query_patch",
    "pair",
    default=(0, 0),
    label=N_("Query patch"),
    help=N_("the patch whose attention the patch view shows, as row,col from 0 (e.g. 3,5)"),
)
EXAMPLE = {"model_dir": "tests/fixtures/vit/dinov2_reg", "image": "tests/fixtures/photos/chelsea.jpg"}

VIT_MECHANISMS: tuple[Mechanism, ...] = (
    Mechanism(
        id="vit",
        name=N_("Self-attention of a vision transformer over your photo"),
        paper="Dosovitskiy et al. (2021), An Image is Worth 16x16 Words; Caron et al. (2021), Emerging Properties "
        "in Self-Supervised Vision Transformers (DINO); Darcet et al. (2024), Vision Transformers Need Registers",
        formula=r"\alpha^{(l,h)} = \operatorname{softmax}\!\left(\frac{Q_h K_h^\top}{\sqrt{d}}\right),\quad "
        r"x_0 = [x_\text{cls};\, x_\text{reg};\, E\,p_1;\dots;E\,p_N] + E_\text{pos}",
        page=pages.IMAGES.file,
        summary=N_(
            "Your ViT, DeiT, DINO or DINOv2 folder reads the photo as its own image processor prepares it: "
            "each head's [CLS] attention over the patches, rollout, any patch's attention, and the "
            "high-norm artifact patches marked."
        ),
        family="vit",
        builder="models.vit.records:vit_record",
        record_size="models.vit.records:vit_record_size",
        options=(VIT_FOLDER, o.IMAGE_FILE, VIT_VIEW, QUERY_PATCH),
        input="image",
        example=EXAMPLE,
    ),
)
