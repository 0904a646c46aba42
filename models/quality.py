"""One entry point for the quality tables of every trained family.

    .venv/bin/python -m models.quality FAMILY [--quick]
    .venv/bin/python -m models.quality seq2seq --write     # also store checkpoints/seq2seq/quality.json

Each family's `models/<family>/quality.py` has `report(quick=False) -> str`: it measures the committed
checkpoint against the family's ground truth and returns the Markdown table(s) docs/QUALITY.md shows.
`--quick` measures on a small sample (a smoke run, not the documented figures). `--write` (seq2seq and
encdec only) stores the measurement the pages read in checkpoints/seq2seq/quality.json.
"""

from __future__ import annotations

import argparse
import importlib
import sys

FAMILIES: tuple[str, ...] = ("seq2seq", "captioner", "feedforward", "han", "encdec", "induction", "lm", "variants")
# Views of those models measured against what they are known to do (models/<view>/quality.py, report() alike).
VIEWS: tuple[str, ...] = ("flow", "explain")
WRITES_QUALITY_FILE = ("seq2seq", "encdec")  # the families whose figures the pages read from quality.json


def main(argv: list[str] | None = None) -> int:
    """Prints one family's quality report; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m models.quality", description=__doc__.splitlines()[0])
    parser.add_argument("family", choices=FAMILIES + VIEWS, help="the model family (or view of them) to measure")
    parser.add_argument("--quick", action="store_true", help="a small sample: a smoke run, not the documented figures")
    parser.add_argument("--write", action="store_true",
                        help="seq2seq, encdec: also write checkpoints/seq2seq/quality.json (not with --quick)")
    args = parser.parse_args(argv)
    if args.write and (args.family not in WRITES_QUALITY_FILE or args.quick):
        parser.error("--write is for seq2seq and encdec, without --quick")
    module = importlib.import_module(f"models.{args.family}.quality")
    if args.write:
        print(module.report(quick=False, write=True))
    else:
        print(module.report(quick=args.quick))
    return 0


if __name__ == "__main__":
    sys.exit(main())
