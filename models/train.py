"""Training entry point: ``python -m models.train <task> [options]``.

One subcommand per task. Each task's module defines ``add_arguments(parser)`` and
``run(args) -> int``, so this file stays a small dispatcher:

    python -m models.train seq2seq --variant bahdanau      # models/seq2seq/train.py

To add a task, add one entry to TASKS: name -> (module, one-line help). Only the chosen
task's module is imported, so one task's dependencies never slow down or break another.
"""

from __future__ import annotations

import argparse
import importlib
import sys

TASKS: dict[str, tuple[str, str]] = {
    "seq2seq": ("models.seq2seq.train", "character-level date normalisation with Bahdanau/Luong attention"),
    "captioner": ("models.captioner.train", "Show, Attend and Tell on the scene world, soft or hard attention"),
    "feedforward": ("models.feedforward.train", "feed-forward attention (Raffel & Ellis) on the addition problem"),
    "han": ("models.han.train", "hierarchical attention network (Yang et al.) on generated reviews"),
}


def build_parser(task: str | None = None) -> argparse.ArgumentParser:
    """Returns the parser; the chosen task's own arguments are added only for `task`."""
    parser = argparse.ArgumentParser(prog="python -m models.train", description="Train Attention Lab's models.")
    tasks = parser.add_subparsers(dest="task", required=True)
    for name, (module, help_text) in TASKS.items():
        sub = tasks.add_parser(name, help=help_text, description=help_text)
        if name == task:
            importlib.import_module(module).add_arguments(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    task = next((a for a in argv if not a.startswith("-")), None)
    args = build_parser(task if task in TASKS else None).parse_args(argv)
    module, _ = TASKS[args.task]
    return int(importlib.import_module(module).run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
