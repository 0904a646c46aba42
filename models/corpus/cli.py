"""`cli.py corpus`: per-head attention statistics over a corpus file, written as CSV and NPZ.

    python cli.py corpus --mechanism transformer --input-file texts.txt --out stats/
    python cli.py corpus --mechanism transformer --input-file data.csv --column text --out stats/
    python cli.py corpus --mechanism lm [--model-dir DIR] --input-file texts.txt --out stats/

One text per line (or one CSV cell per row), streamed: memory does not grow with the file
(models/corpus/run.py). A progress bar (tqdm) goes to stderr; Ctrl-C stops the pass and the
statistics of the inputs that ran are still written (statistics.npz says stopped=True).
cli.py only registers the subcommand (add_parser) and calls run().
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from models.record import InputError

MECHANISMS = ("transformer", "lm")  # a BERT-family encoder; a decoder LM (models/lm)
OUTPUTS = ("heads.csv", "top_inputs.csv", "statistics.npz")


def add_parser(commands) -> argparse.ArgumentParser:
    """Adds the `corpus` subcommand to an argparse subparsers object; returns its parser."""
    corpus = commands.add_parser("corpus", help="per-head attention statistics over a corpus (one text per line)")
    corpus.add_argument("--mechanism", required=True, choices=MECHANISMS, help="the model family to run")
    corpus.add_argument("--input-file", required=True, help="UTF-8 text, one text per line; or a CSV with --column")
    corpus.add_argument("--column", help="read this column of a CSV file (its header names it)")
    corpus.add_argument("--out", required=True, help="output folder: heads.csv, top_inputs.csv, statistics.npz")
    corpus.add_argument("--model-dir", help="transformer: a BERT-family folder (default: the installed all-MiniLM-L6-v2); "
                        "lm: a GPT-2/Llama folder (default: the GPT trained here, checkpoints/lm)")
    corpus.add_argument("--limit", type=int, help="read at most this many lines")
    corpus.add_argument("--max-batch-mb", type=float, help="bound on one batch's attention maps, in MB (default 256)")
    corpus.add_argument("--force", action="store_true", help="replace the outputs in an existing --out")
    corpus.add_argument("--quiet", action="store_true", help="no progress bar")
    return corpus


def _texts(args):
    from models.corpus import texts

    if args.column:
        return texts.csv_file_column(args.input_file, args.column)
    return texts.text_lines(args.input_file)


def _check(args) -> None:
    if not Path(args.input_file).is_file():
        raise InputError(f"input file not found: {args.input_file}")
    if args.limit is not None and args.limit < 1:
        raise InputError(f"--limit must be at least 1, got {args.limit}")
    if args.max_batch_mb is not None and not 1 <= args.max_batch_mb <= 65536:
        raise InputError(f"--max-batch-mb must be between 1 and 65536, got {args.max_batch_mb}")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out must be a folder, and {out} is a file")
    existing = [name for name in OUTPUTS if (out / name).exists()]
    if existing and not args.force:
        raise InputError(f"{out} already holds {', '.join(existing)}; give --force to replace them")


def corpus_model(mechanism: str, model_dir: str | None, max_batch_bytes: int):
    """Returns the corpus model of a mechanism ("transformer" or "lm") and folder (None: the default)."""
    if mechanism == "lm":
        from models.corpus.lm import LMCorpusModel
        from models.lm.records import load_runner as load_lm

        return LMCorpusModel(load_lm(model_dir), max_batch_bytes=max_batch_bytes)
    from models.corpus.run import CorpusModel
    from models.transformer.records import load_runner

    return CorpusModel(load_runner(model_dir), max_batch_bytes=max_batch_bytes)


def run(args: argparse.Namespace) -> int:
    """Runs the corpus pass for parsed arguments; prints a summary line; returns the exit status (0)."""
    _check(args)
    from models.corpus import run as corpus
    from models.corpus.texts import count_lines

    budget = corpus.MAX_BATCH_BYTES if args.max_batch_mb is None else int(args.max_batch_mb * 2**20)
    model = corpus_model(args.mechanism, args.model_dir, budget)
    total = count_lines(args.input_file) - (1 if args.column else 0)
    total = total if args.limit is None else min(total, args.limit)
    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
    bar = None
    if not args.quiet:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="text", file=sys.stderr, dynamic_ncols=True)
    try:
        stats = corpus.corpus_statistics(_texts(args), model, stop=stop.is_set, limit=args.limit,
                                         progress=None if bar is None else (lambda n: bar.update(n - bar.n)))
    finally:
        signal.signal(signal.SIGINT, previous)
        if bar is not None:
            bar.close()
    if stats.count == 0 and not stats.stopped:
        raise InputError(f"{args.input_file} has no non-empty texts")
    paths = corpus.save(stats, args.out)
    rate = stats.tokens / stats.seconds if stats.seconds else 0.0
    print(f"{stats.count:,} texts ({stats.tokens:,} tokens, {stats.skipped:,} empty skipped, {stats.truncated:,} cut) "
          f"in {stats.seconds:.1f} s, {rate:,.0f} tokens/s on {model.devices} device(s)"
          f"{' - stopped early' if stats.stopped else ''}: " + ", ".join(str(p) for p in paths))
    return 0
