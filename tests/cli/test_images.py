"""The CLI on the image mechanisms: soft/hard npz exports, samples, --input-file, bad images."""

from pathlib import Path

import numpy as np
from PIL import Image

from models.captioner import task as S
from models.captioner.model import WORDS
from tests.cli.test_cli import cli

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args):
    return cli(*args, cwd=ROOT)


def scene_png(path: Path, seed: int) -> S.Scene:
    scene = S.random_scene(np.random.default_rng(seed), 2)
    Image.fromarray(S.render_clean(scene)).save(path)
    return scene


def test_hard_export_with_samples_then_soft_and_input_file(tmp_path):
    image = tmp_path / "scene.png"
    scene_png(image, 3)
    out = tmp_path / "hard.npz"
    result = run_cli("export", "--mechanism", "hard", "--image", str(image), "--samples", "50", "--seed", "4",
                     "--format", "npz", "--out", str(out))
    assert result.returncode == 0, result.stderr
    data = np.load(out)
    words = [str(w) for w in data["query_labels"]]
    assert str(data["caption"]) == " ".join(words)
    assert data["weights"].dtype == np.float32 and data["weights"].shape == (len(words), 8, 8)
    assert [str(a) for a in data["axes"]] == ["word", "row", "col"]
    assert list(data["key_labels"][:2]) == ["r0c0", "r0c1"] and str(data["key_labels"][29]) == "r3c5"
    np.testing.assert_allclose(data["weights"].sum(axis=(1, 2)), 1.0, atol=1e-4)
    assert data["samples"].shape == (len(words), 50)
    assert data["samples"].min() >= 0 and data["samples"].max() < 64
    assert set(words) <= set(WORDS) and words[0] == "a"

    soft = tmp_path / "soft.npz"
    assert run_cli("export", "--mechanism", "soft", "--image", str(image), "--format", "npz", "--out", str(soft)).returncode == 0
    soft_data = np.load(soft)
    assert "samples" not in soft_data and str(soft_data["caption"]).startswith("a ")

    second = tmp_path / "second.png"
    scene_png(second, 5)
    listing = tmp_path / "images.txt"
    listing.write_text(f"{image}\n{second}\n")
    folder = tmp_path / "batch"
    result = run_cli("export", "--mechanism", "soft", "--input-file", str(listing), "--format", "npz", "--out", str(folder))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["0001.npz", "0002.npz"]
    assert str(np.load(folder / "0001.npz")["caption"]) == str(soft_data["caption"])


def test_bad_image_is_one_line_exit_2(tmp_path):
    fake = tmp_path / "fake.png"
    fake.write_text("not an image")
    result = run_cli("export", "--mechanism", "soft", "--image", str(fake), "--format", "npz", "--out", str(tmp_path / "x.npz"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "not an image" in result.stderr
    assert "Traceback" not in result.stderr
