"""Quality of the committed captioners: caption correctness and where they look.

    .venv/bin/python bench/captioner_quality.py [--n 1000]

Prints one row per (variant, rendering): 1,000 held-out scenes drawn cleanly and 1,000 drawn
"by another program" (anti-aliased, other shades, JPEG). Soft is judged reading Σ α a; hard
samples one cell per word (seed 0) and, as a second row, reads the argmax cell.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models.captioner.checkpoint import checkpoint_path, read_info  # noqa: E402
from models.captioner.quality import evaluate, held_out_scenes  # noqa: E402
from models.captioner.records import load_runner  # noqa: E402

BARS = {"soft": (0.95, 0.50, None), "hard": (0.90, None, 0.70)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    args = parser.parse_args(argv)
    sets = {r: held_out_scenes(r, args.n) for r in ("clean", "other")}
    print("| model | decoder reads | scenes | caption correct | α mass on object at shape words | "
          "shape words with ≥ 50 % mass | attended cell on object | bar |")
    print("|---|---|---|---|---|---|---|---|")
    for variant, modes in (("soft", ("soft",)), ("hard", ("sample", "argmax"))):
        runner = load_runner(variant)
        for mode in modes:
            for rendering, (images, scenes) in sets.items():
                started = time.perf_counter()
                q = evaluate(runner, images, scenes, mode=mode, seed=0)
                caption_bar, mass_bar, hit_bar = BARS[variant]
                bar = f"caption ≥ {caption_bar:.0%}" + (f", mass ≥ {mass_bar:.0%}" if mass_bar else "")
                bar += f", hit ≥ {hit_bar:.0%}" if hit_bar else ""
                print(f"| {variant} | {mode} | {args.n} {rendering} | {q.caption_accuracy:.1%} | {q.shape_mass:.1%} | "
                      f"{q.shape_mass_share:.1%} | {q.hit_rate:.1%} | {bar if mode != 'argmax' else '(for comparison)'} |"
                      f"  <!-- {time.perf_counter() - started:.1f} s -->")
    print()
    for variant in ("soft", "hard"):
        meta = read_info(checkpoint_path(variant))
        size = checkpoint_path(variant).stat().st_size
        print(f"{variant}: {meta.get('steps')} steps × batch {meta.get('batch')}, trained {meta.get('train_seconds')} s"
              f"{' (from ' + str(meta['init']) + ')' if meta.get('init') else ''}, checkpoint {size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
