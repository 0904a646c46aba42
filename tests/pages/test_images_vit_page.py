"""The images page's "Your vision transformer" view (AppTest): shown only under an operator's model root; a ViT
folder there draws each head's [CLS] map and every head of the layer, then a patch's map and rollout."""

from pathlib import Path

import numpy as np

from tests.pages.conftest import chart_specs, decode, open_page

FOLDERS = Path(__file__).resolve().parents[1] / "fixtures" / "vit"


def _heat(spec) -> np.ndarray:
    return np.asarray(decode([t for t in spec["data"] if t["type"] == "heatmap"][0]["z"]), float)


def test_the_view_needs_a_model_root(monkeypatch):
    monkeypatch.delenv("ATTENTION_LAB_MODEL_ROOT", raising=False)
    at = open_page("pages/images.py")
    assert not at.exception
    assert not any(r.key == "img_view" and "vit" in r.options for r in at.radio)


def test_a_vit_folder_draws_cls_patch_and_rollout_maps(monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_MODEL_ROOT", str(FOLDERS))
    at = open_page("pages/images.py")
    at.session_state["img_view"] = "vit"
    at.run()
    assert not at.exception, at.exception
    assert not chart_specs(at) or len(chart_specs(at)) == 1  # no folder yet: at most the photo, no maps
    at.text_input(key="vit_model_dir").set_value("dinov2_reg").run()
    assert not at.exception, at.exception
    specs = chart_specs(at)
    assert len(specs) == 2  # the chosen head's [CLS] map over the photo, and every head of the layer
    cls_map = _heat(specs[0])
    at.radio(key="vit_show").set_value("patch").run()
    assert not at.exception, at.exception
    patch_map = _heat(chart_specs(at)[0])
    at.radio(key="vit_show").set_value("rollout").run()
    assert not at.exception, at.exception
    rollout = _heat(chart_specs(at)[0])
    assert len(chart_specs(at)) == 1
    assert cls_map.shape == patch_map.shape == rollout.shape
    assert not np.allclose(cls_map, patch_map) and not np.allclose(cls_map, rollout)
    at.text_input(key="vit_model_dir").set_value("../../..").run()
    assert not at.exception
    assert at.error, "a name outside the model root gets one line"
