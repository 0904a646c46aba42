"""The scene world: seeded, within the rules, captions judged correctly, masks match pixels."""

import numpy as np
import pytest

from models.captioner import task as S
from models.captioner.task import SceneObject, make_scene


def test_generator_is_seeded_and_follows_the_rules():
    a = [S.random_scene(np.random.default_rng(5)) for _ in range(1)]
    b = [S.random_scene(np.random.default_rng(5)) for _ in range(1)]
    assert a == b
    rng = np.random.default_rng(0)
    counts = {1: 0, 2: 0}
    for _ in range(400):
        scene = S.random_scene(rng)
        counts[len(scene.objects)] += 1
        for obj in scene.objects:
            assert obj.shape in S.SHAPES and obj.colour in S.COLOURS
            assert S.MIN_OBJECT <= obj.size <= S.MAX_OBJECT
            assert 0 <= obj.x and obj.x + obj.size <= S.SIZE and 0 <= obj.y and obj.y + obj.size <= S.SIZE
        if len(scene.objects) == 2:
            assert not S.boxes_touch(*scene.objects)
            masks = S.object_masks(scene)
            assert not np.any(masks[0] & masks[1])
        assert S.caption_correct(scene.caption, scene)
    assert counts[1] > 120 and counts[2] > 120


def test_relation_follows_the_dominant_axis():
    left = SceneObject("circle", "red", 2, 20, 12)
    right = SceneObject("square", "blue", 40, 26, 12)
    scene = make_scene([left, right])
    assert scene.caption == "a red circle left of a blue square"
    top = SceneObject("triangle", "green", 30, 0, 12)
    bottom = SceneObject("circle", "yellow", 26, 40, 20)
    assert make_scene([bottom, top]).caption == "a green triangle above a yellow circle"
    assert S.dominant_relation(bottom, top) == "below"


def test_caption_judging_accepts_either_order_and_true_relations_only():
    scene = make_scene([SceneObject("circle", "red", 2, 20, 12), SceneObject("square", "blue", 40, 26, 12)])
    assert S.caption_correct("a blue square right of a red circle", scene)
    assert not S.caption_correct("a blue square left of a red circle", scene)
    assert not S.caption_correct("a red circle above a blue square", scene)  # the boxes overlap vertically
    assert not S.caption_correct("a red circle", scene)
    assert not S.caption_correct("a red square left of a blue square", scene)
    assert not S.caption_correct("a red circle left of", scene)
    # Fully separated along both axes: both the dominant and the other relation are true.
    diag = make_scene([SceneObject("circle", "red", 0, 0, 12), SceneObject("square", "blue", 40, 30, 12)])
    assert S.caption_correct("a red circle left of a blue square", diag)
    assert S.caption_correct("a red circle above a blue square", diag)
    assert S.shape_word_objects("a blue square right of a red circle", scene) == [(2, 1), (7, 0)]


def test_masks_are_the_drawn_pixels():
    scene = make_scene([SceneObject("triangle", "green", 10, 10, 20)])
    image = S.render_clean(scene)
    mask = S.object_masks(scene)[0]
    assert np.all(image[mask] == S.PALETTE["green"])
    assert np.all(image[~mask] == 255)
    assert mask[29, 20] and not mask[10, 10]  # base centre in, top-left corner out (a triangle)
    cells = S.cell_overlap(S.object_masks(scene), 8)[0]
    assert cells[3, 1:4].all() and cells[1, 2] and not cells[1, 1] and not cells[0].any()


@pytest.mark.parametrize("shape", S.SHAPES)
def test_re_rendered_scene_is_anti_aliased_shaded_and_close(shape):
    scene = make_scene([SceneObject(shape, "blue", 20, 20, 20)])
    clean = S.render_clean(scene).astype(int)
    other = S.render_other(scene, np.random.default_rng(1)).astype(int)
    assert other.shape == (64, 64, 3)
    assert not np.array_equal(clean, other)
    mask = S.object_masks(scene)[0]
    inside = other[mask].mean(axis=0)
    assert np.abs(inside - np.array(S.PALETTE["blue"])).max() < 40  # a similar shade
    assert len(np.unique(other.reshape(-1, 3), axis=0)) > 10  # soft edges and JPEG noise


def test_make_scene_rejects_bad_layouts():
    with pytest.raises(ValueError):
        make_scene([SceneObject("circle", "red", 10, 10, 20), SceneObject("square", "blue", 20, 20, 20)])
    with pytest.raises(ValueError):
        make_scene([SceneObject("circle", "red", 50, 10, 20)])


def test_the_scene_world_check_keeps_scenes_and_flags_photos():
    from pathlib import Path

    from models.captioner.records import load_image_option

    images, _ = S.scene_batch(np.random.default_rng(31), 600, 0.5)  # not the seed the statistics came from
    scene = np.array([S.scene_distance(i) for i in images])
    assert (scene <= S.SCENE_DISTANCE_LIMIT).mean() >= 0.99
    photos = sorted((Path(__file__).resolve().parents[2] / "fixtures" / "photos").glob("*.jpg"))
    assert len(photos) == 12
    rng = np.random.default_rng(5)
    distances = []
    for path in photos:
        from models.image_input import decode_image, fit_square

        full = decode_image(path.read_bytes())
        distances.append(S.scene_distance(load_image_option(path.read_bytes())))
        h, w = full.shape[:2]
        for _ in range(4):  # crops: other content, other scales
            side = int(rng.integers(32, min(h, w) + 1))
            y, x = int(rng.integers(0, h - side + 1)), int(rng.integers(0, w - side + 1))
            distances.append(S.scene_distance(fit_square(full[y : y + side, x : x + side], 64)))
    assert (np.array(distances) > S.SCENE_DISTANCE_LIMIT).mean() >= 0.95


def test_a_photo_gets_the_outside_notice_and_a_scene_does_not():
    from pathlib import Path

    from models.registry import get_mechanism

    root = Path(__file__).resolve().parents[3]
    photo = get_mechanism("soft").build({"image": str(root / "tests/fixtures/photos/coffee.jpg")})
    assert photo.meta["scene_distance"] > S.SCENE_DISTANCE_LIMIT
    assert "outside the scene world" in photo.meta["notices"][0]
    scene = get_mechanism("hard").build({"image": str(root / "docs/examples/scene.png")})
    assert "notices" not in scene.meta and scene.meta["scene_distance"] < S.SCENE_DISTANCE_LIMIT
