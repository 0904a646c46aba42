"""Training entry point: ``python -m models.train <family> [options]``.

One subcommand per family, read from models/registry.py's TRAINERS (family -> module, help).
Each family's train.py defines ``add_arguments(parser)`` and ``run(args) -> int``:

    python -m models.train seq2seq --variant bahdanau      # models/seq2seq/train.py

Only the chosen family's module is imported, so one family's dependencies never slow down
or break another. Runs write to runs/<family>/ unless --overwrite-committed is given.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from models.registry import TRAINERS as TASKS


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
    from models.compile_cache import enable_compilation_cache

    enable_compilation_cache()
    return int(importlib.import_module(module).run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
