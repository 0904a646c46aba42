"""A scene world with known answers: 64×64 images of one or two shapes, their captions and masks.

Rules (issue 5 §1):
- 64×64 RGB on a white background; one or two objects whose bounding boxes do not touch;
- shapes circle / square / triangle, colours red / green / blue / yellow, size 12–24 px;
- with two objects the relation follows the dominant axis of the centre offset:
  "left of" / "right of" (|dx| >= |dy|) or "above" / "below".

Captions read "a red circle" or "a red circle left of a blue square". The first-named object
is the one earlier in the canonical order (colour, then shape, then x, then y), so every scene
has exactly one target caption; any caption naming the right objects with a true relation is
accepted by ``caption_correct``. Each object's boolean pixel mask is kept as ground truth.

Two renderings of the same scene description:
- ``render_clean``: hard edges, the palette colours exactly (what training mostly sees);
- ``render_other``: "drawn by another program": 4× supersampled anti-aliased edges, shades
  jittered around the palette colour, an off-white background, JPEG compression (pillow).
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass

import numpy as np
from PIL import Image

from models.record import InputError

SIZE = 64
SHAPES = ("circle", "square", "triangle")
COLOURS = ("red", "green", "blue", "yellow")
RELATIONS = ("left of", "right of", "above", "below")
MIN_OBJECT, MAX_OBJECT = 12, 24
GAP = 2  # pixels between the two objects' bounding boxes, at least
PALETTE = {
    "red": (220, 30, 30),
    "green": (30, 170, 40),
    "blue": (30, 60, 220),
    "yellow": (235, 200, 20),
}


@dataclass(frozen=True)
class SceneObject:
    """One shape: its bounding box is [x, x + size) × [y, y + size) in pixels (x = column)."""

    shape: str
    colour: str
    x: int
    y: int
    size: int

    @property
    def center(self) -> tuple[float, float]:
        """Returns (cx, cy) in pixels."""
        return self.x + self.size / 2, self.y + self.size / 2

    @property
    def words(self) -> tuple[str, ...]:
        return ("a", self.colour, self.shape)


@dataclass(frozen=True)
class Scene:
    """One or two objects, in caption order (see module docstring)."""

    objects: tuple[SceneObject, ...]

    @property
    def relation(self) -> str | None:
        """Returns the dominant-axis relation of object 0 to object 1, or None for one object."""
        if len(self.objects) < 2:
            return None
        return dominant_relation(self.objects[0], self.objects[1])

    @property
    def caption(self) -> str:
        """Returns the target caption, e.g. "a red circle left of a blue square"."""
        words = list(self.objects[0].words)
        if len(self.objects) == 2:
            words += [*self.relation.split(), *self.objects[1].words]
        return " ".join(words)


def dominant_relation(a: SceneObject, b: SceneObject) -> str:
    """Returns where a lies relative to b along the dominant axis of the centre offset."""
    (ax, ay), (bx, by) = a.center, b.center
    dx, dy = bx - ax, by - ay
    if abs(dx) >= abs(dy):
        return "left of" if dx > 0 else "right of"
    return "above" if dy > 0 else "below"


def relation_true(relation: str, a: SceneObject, b: SceneObject) -> bool:
    """Returns whether "a <relation> b" is true: it is the dominant-axis relation, or the two
    bounding boxes are fully separated in that direction (so near-diagonal pairs accept both)."""
    if relation == dominant_relation(a, b):
        return True
    if relation == "left of":
        return a.x + a.size <= b.x
    if relation == "right of":
        return b.x + b.size <= a.x
    if relation == "above":
        return a.y + a.size <= b.y
    if relation == "below":
        return b.y + b.size <= a.y
    return False


def _order_key(obj: SceneObject) -> tuple:
    return (COLOURS.index(obj.colour), SHAPES.index(obj.shape), obj.x, obj.y)


def make_scene(objects) -> Scene:
    """Returns a Scene with `objects` (1 or 2 SceneObjects) in canonical caption order."""
    objects = tuple(objects)
    if not 1 <= len(objects) <= 2:
        raise ValueError("a scene has one or two objects")
    for o in objects:
        if o.shape not in SHAPES or o.colour not in COLOURS:
            raise ValueError(f"unknown shape or colour: {o.shape}, {o.colour}")
        if not (0 <= o.x and 0 <= o.y and o.x + o.size <= SIZE and o.y + o.size <= SIZE):
            raise ValueError(f"object outside the {SIZE}×{SIZE} image: {o}")
    if len(objects) == 2 and boxes_touch(*objects):
        raise ValueError("the two objects overlap or touch")
    return Scene(tuple(sorted(objects, key=_order_key)))


def build_scene(objects) -> Scene:
    """Returns make_scene(objects) for a scene a user built; InputError with a hint if it breaks a rule."""
    try:
        return make_scene(objects)
    except ValueError as error:
        raise InputError(f"{error}; move or shrink an object") from None


def boxes_touch(a: SceneObject, b: SceneObject, gap: int = GAP) -> bool:
    """Returns whether the two bounding boxes come closer than `gap` pixels."""
    return not (
        a.x + a.size + gap <= b.x
        or b.x + b.size + gap <= a.x
        or a.y + a.size + gap <= b.y
        or b.y + b.size + gap <= a.y
    )


def random_object(rng: np.random.Generator) -> SceneObject:
    size = int(rng.integers(MIN_OBJECT, MAX_OBJECT + 1))
    return SceneObject(
        shape=SHAPES[rng.integers(len(SHAPES))],
        colour=COLOURS[rng.integers(len(COLOURS))],
        x=int(rng.integers(0, SIZE - size + 1)),
        y=int(rng.integers(0, SIZE - size + 1)),
        size=size,
    )


def random_scene(rng: np.random.Generator, num_objects: int | None = None) -> Scene:
    """Returns a random scene (one or two objects with equal probability, unless given)."""
    n = int(rng.integers(1, 3)) if num_objects is None else int(num_objects)
    first = random_object(rng)
    if n == 1:
        return make_scene([first])
    while True:
        second = random_object(rng)
        if not boxes_touch(first, second):
            return make_scene([first, second])


# ----------------------------------------------------------------------------- rendering


def _shape_mask(obj: SceneObject, scale: int = 1, box: tuple[int, int, int, int] | None = None) -> np.ndarray:
    """Returns bool [h·scale, w·scale]: the object's pixels (pixel centres inside) within
    box = (x0, y0, x1, y1) in base pixels (default: the whole image)."""
    bx0, by0, bx1, by1 = box or (0, 0, SIZE, SIZE)
    xs = bx0 + (np.arange((bx1 - bx0) * scale, dtype=np.float32) + 0.5) / scale  # pixel centres
    ys = by0 + (np.arange((by1 - by0) * scale, dtype=np.float32) + 0.5) / scale
    yy, xx = ys[:, None], xs[None, :]
    x0, y0, s = obj.x, obj.y, obj.size
    if obj.shape == "square":
        return (xx >= x0) & (xx < x0 + s) & (yy >= y0) & (yy < y0 + s)
    if obj.shape == "circle":
        cx, cy, r = x0 + s / 2, y0 + s / 2, s / 2
        return (xx - cx) ** 2 + (yy - cy) ** 2 <= r * r
    # triangle: apex at top centre, base along the bottom of the box
    cx = x0 + s / 2
    half = (yy - y0) / 2  # half-width grows from 0 at the apex row to s/2 at the base
    return (yy >= y0) & (yy < y0 + s) & (np.abs(xx - cx) <= half)


def object_masks(scene: Scene) -> np.ndarray:
    """Returns bool [num_objects, 64, 64]: each object's ground-truth pixel mask."""
    return np.stack([_shape_mask(o) for o in scene.objects])


def render_clean(scene: Scene) -> np.ndarray:
    """Returns uint8 [64, 64, 3]: hard-edged shapes in the palette colours on white."""
    image = np.full((SIZE, SIZE, 3), 255, np.uint8)
    for obj, mask in zip(scene.objects, object_masks(scene)):
        image[mask] = PALETTE[obj.colour]
    return image


def render_other(scene: Scene, rng: np.random.Generator, scale: int = 4) -> np.ndarray:
    """Returns uint8 [64, 64, 3]: the scene as another program might draw it.

    Anti-aliased edges (supersampled `scale`×), shades jittered by up to ±25 per channel,
    a background between 240 and 255, then a JPEG round trip at quality 50–90.
    """
    image = np.broadcast_to(rng.integers(240, 256, size=3).astype(np.float32), (SIZE, SIZE, 3)).copy()
    for obj in scene.objects:
        colour = np.clip(np.asarray(PALETTE[obj.colour], np.float32) + rng.uniform(-25, 25, 3), 0, 255)
        box = (obj.x, obj.y, obj.x + obj.size, obj.y + obj.size)
        fine = _shape_mask(obj, scale, box).astype(np.float32)
        cover = fine.reshape(obj.size, scale, obj.size, scale).mean(axis=(1, 3))[..., None]  # [s, s, 1]
        region = image[obj.y : obj.y + obj.size, obj.x : obj.x + obj.size]
        image[obj.y : obj.y + obj.size, obj.x : obj.x + obj.size] = region * (1 - cover) + colour * cover
    image = np.clip(np.rint(image), 0, 255).astype(np.uint8)
    return jpeg_round_trip(image, int(rng.integers(50, 91)))


def jpeg_round_trip(image: np.ndarray, quality: int) -> np.ndarray:
    """Returns uint8 [H, W, 3]: the image after JPEG encoding at `quality` and decoding."""
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="JPEG", quality=quality)
    buffer.seek(0)
    with Image.open(buffer) as decoded:
        return np.asarray(decoded.convert("RGB"), np.uint8)


# ------------------------------------------------------------------------- datasets


def scene_batch(rng: np.random.Generator, n: int, other_fraction: float = 0.5):
    """Returns (images uint8 [n, 64, 64, 3], scenes): random scenes, a share re-rendered."""
    scenes = [random_scene(rng) for _ in range(n)]
    images = np.stack(
        [render_other(s, rng) if rng.random() < other_fraction else render_clean(s) for s in scenes]
    )
    return images, scenes


def held_out_set(n: int = 1000, seed: int = 10_001, rendering: str = "clean"):
    """Returns (images [n, 64, 64, 3], scenes) from a seed training never uses (training seeds < 10,000)."""
    rng = np.random.default_rng(seed)
    scenes = [random_scene(rng) for _ in range(n)]
    if rendering == "clean":
        images = np.stack([render_clean(s) for s in scenes])
    elif rendering == "other":
        images = np.stack([render_other(s, rng) for s in scenes])
    else:
        raise ValueError(f"unknown rendering {rendering!r}")
    return images, scenes


# ------------------------------------------------------------------------- judging captions


def parse_caption(caption: str):
    """Returns ([(colour, shape), ...], relation or None), or None if the caption is malformed."""
    words = caption.split()
    if len(words) == 3 and words[0] == "a" and words[1] in COLOURS and words[2] in SHAPES:
        return [(words[1], words[2])], None
    if len(words) == 8 or len(words) == 7:
        first = words[:3]
        rel_len = 2 if words[3] in ("left", "right") else 1
        relation = " ".join(words[3 : 3 + rel_len])
        second = words[3 + rel_len :]
        if relation not in RELATIONS or len(second) != 3:
            return None
        objs = []
        for part in (first, second):
            if part[0] != "a" or part[1] not in COLOURS or part[2] not in SHAPES:
                return None
            objs.append((part[1], part[2]))
        return objs, relation
    return None


def caption_assignment(caption: str, scene: Scene) -> tuple[int, ...] | None:
    """Returns the scene-object index of each object the caption names, in caption order,
    or None if the caption is wrong (wrong objects, wrong count, false relation, malformed)."""
    parsed = parse_caption(caption)
    if parsed is None:
        return None
    named, relation = parsed
    objs = scene.objects
    if len(named) != len(objs):
        return None
    if len(objs) == 1:
        return (0,) if named[0] == (objs[0].colour, objs[0].shape) else None
    for i, j in ((0, 1), (1, 0)):
        a, b = objs[i], objs[j]
        if named == [(a.colour, a.shape), (b.colour, b.shape)] and relation_true(relation, a, b):
            return (i, j)
    return None


def caption_correct(caption: str, scene: Scene) -> bool:
    """Returns whether the caption names exactly the scene's objects, with a true relation."""
    return caption_assignment(caption, scene) is not None


def shape_word_objects(caption: str, scene: Scene) -> list[tuple[int, int]]:
    """Returns [(word index, object index)] for each shape word of a correct caption."""
    order = caption_assignment(caption, scene)
    if order is None:
        return []
    positions = [i for i, w in enumerate(caption.split()) if w in SHAPES]
    return list(zip(positions, order))


def cell_overlap(masks: np.ndarray, grid: int) -> np.ndarray:
    """Returns bool [num_objects, grid, grid]: which grid cells contain any pixel of each object."""
    n = masks.shape[0]
    cell = SIZE // grid
    return masks.reshape(n, grid, cell, grid, cell).any(axis=(2, 4))


# ------------------------------------------------------------------ how far from the scene world

# A model input farther than this (Mahalanobis distance of scene_features from the scene
# world's) is outside what the captioner knows. Generated scenes reach about 6.8 at most
# (2,000 of them), the photos in tests/fixtures/photos 22.8 at least.
SCENE_DISTANCE_LIMIT = 8.0
_SCENE_PALETTE = np.array([PALETTE[c] for c in COLOURS], np.float32)


def scene_features(image: np.ndarray) -> np.ndarray:
    """Returns float [3]: the colour and edge statistics of a model input uint8 [64, 64, 3].

    (share of background pixels: light and grey; share of pixels that are background or
    near a palette colour; share of pixels on a strong edge). Scenes are mostly white, with
    a few solid palette-coloured shapes and few edges; photos are none of these.
    """
    x = np.asarray(image, np.float32)
    background = (x.min(-1) >= 225) & (x.max(-1) - x.min(-1) <= 24)
    palette = np.sqrt(((x[..., None, :] - _SCENE_PALETTE) ** 2).sum(-1)).min(-1) <= 75
    step_y = np.abs(np.diff(x, axis=0)).max(-1)[:, :-1]
    step_x = np.abs(np.diff(x, axis=1)).max(-1)[:-1, :]
    edges = (step_y > 40) | (step_x > 40)
    return np.array([background.mean(), (background | palette).mean(), edges.mean()], np.float64)


@functools.lru_cache(maxsize=1)
def scene_statistics() -> tuple[np.ndarray, np.ndarray]:
    """Returns (mean [3], inverse covariance [3, 3]) of scene_features over 1,000 seeded scenes,
    half of them re-rendered (seed 8000: not a training, validation or test seed)."""
    images, _ = scene_batch(np.random.default_rng(8_000), 1_000, 0.5)
    features = np.stack([scene_features(i) for i in images])
    return features.mean(0), np.linalg.inv(np.cov(features.T) + np.eye(3) * 1e-6)


def scene_distance(image: np.ndarray) -> float:
    """Returns how far a model input [64, 64, 3] lies from the scene world (Mahalanobis)."""
    mean, inverse = scene_statistics()
    d = scene_features(image) - mean
    return float(np.sqrt(d @ inverse @ d))
