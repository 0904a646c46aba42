"""Records the CLI's npz output for a fixed set of inputs, or compares it with a recording.

    python tools/cli_snapshot.py record DIR     # before a refactor
    python tools/cli_snapshot.py compare DIR    # after it: exit 1 unless every array is bit-for-bit equal

Every registered mechanism gets a few inputs (one --input-file batch and one or two single
exports with options). The CLI runs in this process through cli.main, so one run takes a
minute or two rather than one process start per export. Every recorded array must come back
with the same dtype, shape and bytes, and every recorded meta value unchanged (the wall-clock
key "seconds" left out: it is a timing); arrays and meta keys the new code adds are listed
as additions.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("ATTENTION_LAB_NO_REEXEC", "1")

VOLATILE_META = ("seconds",)
DATES = ["9 May 2018", "2018/05/09", "Wednesday, May 9, 2018", "31 February 2018", "hello world"]
TEXTS = ["The cat sat on the mat.", "Attention is all you need, they said.", "embeddings tokenizer ##"]
DOCS = [
    "We went there on a Friday. The waiter was rude and slow. We took the bus home.",
    "The pasta was delicious. It was raining that evening.",
]


def scene_png(folder: Path) -> Path:
    """Writes a generated two-object scene as PNG (deterministic) and returns its path."""
    from PIL import Image

    sys.path.insert(0, str(ROOT))
    try:
        from models.captioner.task import random_scene, render_clean
    except ImportError:  # before the family packages existed
        from models.captioner.task import random_scene, render_clean
    path = folder / "scene.png"
    Image.fromarray(render_clean(random_scene(np.random.default_rng(11), 2))).save(path)
    return path


def cases(folder: Path) -> list[tuple[str, list[str], list[str] | None]]:
    """Returns (name, CLI args after --mechanism ID, input-file lines or None)."""
    image = str(scene_png(folder))
    out: list[tuple[str, list[str], list[str] | None]] = []
    for score in ("dot", "scaled-dot", "general", "concat", "additive", "location", "cosine"):
        mid = f"qkv-{score}"
        out.append((f"{mid}-batch", ["--mechanism", mid], ["1.5,0.5", "-1,2", "0,0"]))
        out.append((f"{mid}-tau", ["--mechanism", mid, "--query", "0.3,1.2", "--temperature", "0.5"], None))
        out.append((f"{mid}-sample", ["--mechanism", mid, "--mode", "sample", "--samples", "50", "--seed", "3"], None))
    for mid in ("feedforward", "feedforward-unbounded"):
        out.append((f"{mid}-batch", ["--mechanism", mid, "--length", "300"], ["0", "7"]))
        out.append((f"{mid}-long", ["--mechanism", mid, "--length", "2500", "--seed", "4"], None))
    out.append(("transformer-batch", ["--mechanism", "transformer"], TEXTS))
    out.append(("transformer-pair", ["--mechanism", "transformer", "--text", "A dog runs.", "--text-pair", "It barks."], None))
    for mid in ("bahdanau", "luong-dot", "luong-general", "luong-concat", "luong-location", "local-m", "local-p"):
        out.append((f"{mid}-batch", ["--mechanism", mid], DATES))
        out.append((f"{mid}-window", ["--mechanism", mid, "--text", "May 9th 2018", "--window", "5"], None))
    out.append(("han-batch", ["--mechanism", "han"], DOCS))
    out.append(("alignment-default", ["--mechanism", "sentence-alignment", "--text", "The cat sat on the mat",
                                      "--text-pair", "A cat was sitting on the rug"], None))
    out.append(("alignment-local", ["--mechanism", "sentence-alignment", "--text", "I like green tea",
                                    "--text-pair", "Green tea is what I like", "--score", "dot", "--window", "2",
                                    "--temperature", "3"], None))
    out.append(("soft", ["--mechanism", "soft", "--image", image, "--temperature", "1.5"], None))
    out.append(("hard", ["--mechanism", "hard", "--image", image, "--samples", "20", "--seed", "1"], None))
    # Defaults that changed with the registry's option declarations are passed explicitly, at
    # their old value (hard --samples 0, patch --patch 16), so the recording stays comparable.
    out.append(("hard-argmax", ["--mechanism", "hard", "--image", image, "--mode", "argmax", "--samples", "0"], None))
    out.append(("patch", ["--mechanism", "patch-self-attention", "--image", image, "--patch", "8", "--query-patch", "2,3"], None))
    out.append(("patch-sample", ["--mechanism", "patch-self-attention", "--image", image, "--mode", "sample",
                                 "--samples", "30", "--seed", "2", "--patch", "16"], None))
    return out


def run_all(dest: Path) -> None:
    """Runs every case through cli.main, writing npz files under dest/<case>/."""
    import cli

    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        for name, args, lines in cases(tmp_path):
            target = dest / name
            if lines is None:
                target.mkdir(parents=True)
                argv = ["export", *args, "--format", "npz", "--out", str(target / "0001.npz")]
            else:
                input_file = tmp_path / f"{name}.txt"
                input_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
                argv = ["export", *args, "--input-file", str(input_file), "--format", "npz", "--out", str(target)]
            code = cli.main(argv)
            if code != 0:
                raise SystemExit(f"{name}: cli exited {code}")
            print(f"{name}: {len(list(target.iterdir()))} file(s)")


def normalised_meta(text: str) -> dict:
    meta = json.loads(text)
    for key in VOLATILE_META:
        meta.pop(key, None)
    return meta


def compare(recorded: Path, fresh: Path) -> tuple[list[str], list[str]]:
    """Returns (differences, additions) between two recordings.

    A difference is a recorded array that is missing or not bit-for-bit equal, or a recorded
    meta key whose value changed; an addition is an array or a meta key the fresh run has
    and the recording lacks (new extras, settings now written out). Differences fail.
    """
    problems, additions = [], []
    for old_file in sorted(recorded.rglob("*.npz")):
        rel = old_file.relative_to(recorded)
        new_file = fresh / rel
        if not new_file.is_file():
            problems.append(f"{rel}: missing")
            continue
        old, new = np.load(old_file), np.load(new_file)
        for key in sorted(set(new.files) - set(old.files)):
            additions.append(f"{rel}: new array {key}")
        for key in old.files:
            if key not in new.files:
                problems.append(f"{rel}: array {key} missing")
                continue
            a, b = old[key], new[key]
            if key == "meta_json":
                before, after = normalised_meta(str(a)), normalised_meta(str(b))
                problems += [f"{rel}: meta {k} changed: {before[k]!r} -> {after.get(k)!r}"
                             for k in before if before[k] != after.get(k)]
                additions += [f"{rel}: new meta {k} = {after[k]!r}" for k in after if k not in before]
            elif a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
                problems.append(f"{rel}: {key} differs ({a.dtype}{a.shape} vs {b.dtype}{b.shape})")
    return problems, additions


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("record", "compare"):
        print(__doc__)
        return 2
    folder = Path(argv[1])
    if argv[0] == "record":
        run_all(folder)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        run_all(Path(tmp))
        problems, additions = compare(folder, Path(tmp))
    files = len(list(folder.rglob("*.npz")))
    for line in additions:
        print(f"added: {line}")
    for line in problems:
        print(f"DIFFERS: {line}")
    if not problems:
        print(f"identical: every recorded array and meta value of {files} files, bit for bit ({len(additions)} additions)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
