"""Corpus statistics from a file: the registry builder `corpus_record` and `cli.py corpus`.

    python cli.py corpus --mechanism transformer --input-file texts.txt --out stats/
    python cli.py corpus --mechanism transformer --input-file data.csv --column text --out stats/
    python cli.py corpus --mechanism lm [--model-dir DIR] --input-file texts.txt --out stats/
    python cli.py export --mechanism corpus --corpus texts.txt --model lm --format npz --out stats.npz

One text per line (or one CSV cell per row), streamed: memory does not grow with the file
(models/corpus/run.py). Both read typed options (the registry's "corpus" entry, checked by
Mechanism.read): corpus (the file; default: the bundled sample), column, model (transformer | lm),
model_dir, limit and max_batch_mb. `cli.py corpus` writes heads.csv, top_inputs.csv and statistics.npz,
with a progress bar (tqdm) on stderr; Ctrl-C stops the pass and the statistics of the inputs that ran
are still written (statistics.npz says stopped=True). cli.py registers the subcommand (add_parser),
reads its options through the registry (options_of) and calls run().
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from models.record import AttentionRecord, InputError

MODELS = ("transformer", "lm")  # a BERT-family encoder; a decoder LM (models/lm)
OUTPUTS = ("heads.csv", "top_inputs.csv", "statistics.npz")


def add_parser(commands) -> argparse.ArgumentParser:
    """Adds the `corpus` subcommand to an argparse subparsers object; returns its parser."""
    corpus = commands.add_parser("corpus", help="per-head attention statistics over a corpus (one text per line)")
    corpus.add_argument("--mechanism", required=True, choices=MODELS, help="the model family to run")
    corpus.add_argument("--input-file", required=True, help="UTF-8 text, one text per line; or a CSV with --column")
    corpus.add_argument("--column", help="read this column of a CSV file (its header names it)")
    corpus.add_argument("--out", required=True, help="output folder: heads.csv, top_inputs.csv, statistics.npz")
    corpus.add_argument("--model-dir", help="transformer: a BERT-family folder (default: the installed all-MiniLM-L6-v2); "
                        "lm: a GPT-2/Llama folder (default: the GPT trained here, checkpoints/lm)")
    corpus.add_argument("--limit", help="read at most this many lines")
    corpus.add_argument("--max-batch-mb", help="bound on one batch's attention maps, in MB (default 256)")
    corpus.add_argument("--force", action="store_true", help="replace the outputs in an existing --out")
    corpus.add_argument("--quiet", action="store_true", help="no progress bar")
    return corpus


def options_of(args: argparse.Namespace) -> dict[str, Any]:
    """Returns the raw options of the "corpus" entry that `cli.py corpus`'s flags give."""
    return {"corpus": args.input_file, "column": args.column, "model": args.mechanism, "model_dir": args.model_dir,
            "limit": args.limit, "max_batch_mb": args.max_batch_mb}


def _texts(options: Mapping[str, Any]) -> Iterable[str]:
    from models.corpus import texts

    if options["corpus"] is None:
        return texts.sample_texts()
    if options["column"]:
        return texts.csv_file_column(options["corpus"], options["column"])
    return texts.text_lines(options["corpus"])


def corpus_model(options: Mapping[str, Any]):
    """Returns the corpus model of typed options model ("transformer" or "lm"), model_dir (None: the default)
    and max_batch_mb (None: models/corpus/run.py's MAX_BATCH_BYTES): the process's one copy of its weights."""
    from models.corpus.run import MAX_BATCH_BYTES
    from models.model_folders import model_dir_option

    budget = MAX_BATCH_BYTES if options["max_batch_mb"] is None else int(options["max_batch_mb"] * 2**20)
    if options["model"] == "lm":
        from models.corpus.lm import LMCorpusModel
        from models.lm.records import shared_runner as lm_runner

        return LMCorpusModel(lm_runner(model_dir_option(options)), max_batch_bytes=budget)
    from models.corpus.run import CorpusModel
    from models.transformer.records import shared_runner

    return CorpusModel(shared_runner(model_dir_option(options)), max_batch_bytes=budget)


def corpus_pass(options: Mapping[str, Any], *, stop: Callable[[], bool] | None = None,
                progress: Callable[[int], None] | None = None):
    """Returns (the CorpusStats of typed options, the corpus model); InputError when no text ran."""
    from models.corpus.run import corpus_statistics

    model = corpus_model(options)
    stats = corpus_statistics(_texts(options), model, stop=stop, limit=options["limit"], progress=progress)
    if stats.count == 0 and not stats.stopped:
        raise InputError(f"{options['corpus'] or 'the sample'} has no non-empty texts")
    return stats, model


def corpus_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Registry builder: typed options (module docstring) -> the corpus means [L·H, statistic], extras std."""
    from models.corpus.run import stats_record

    return stats_record(corpus_pass(options)[0], mechanism.id)


def _check_files(args: argparse.Namespace) -> None:
    if not Path(args.input_file).is_file():
        raise InputError(f"input file not found: {args.input_file}")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out must be a folder, and {out} is a file")
    existing = [name for name in OUTPUTS if (out / name).exists()]
    if existing and not args.force:
        raise InputError(f"{out} already holds {', '.join(existing)}; give --force to replace them")


def run(args: argparse.Namespace, options: Mapping[str, Any]) -> int:
    """Runs the corpus pass for parsed arguments and their typed options; prints a summary line; returns 0."""
    _check_files(args)
    from models.corpus import run as corpus
    from models.corpus.texts import count_lines

    total = count_lines(args.input_file) - (1 if args.column else 0)
    total = total if options["limit"] is None else min(total, options["limit"])
    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
    bar = None
    if not args.quiet:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="text", file=sys.stderr, dynamic_ncols=True)
    try:
        stats, model = corpus_pass(options, stop=stop.is_set,
                                   progress=None if bar is None else (lambda n: bar.update(n - bar.n)))
    finally:
        signal.signal(signal.SIGINT, previous)
        if bar is not None:
            bar.close()
    paths = corpus.save(stats, args.out)
    rate = stats.tokens / stats.seconds if stats.seconds else 0.0
    print(f"{stats.count:,} texts ({stats.tokens:,} tokens, {stats.skipped:,} empty skipped, {stats.truncated:,} cut) "
          f"in {stats.seconds:.1f} s, {rate:,.0f} tokens/s on {model.devices} device(s)"
          f"{' - stopped early' if stats.stopped else ''}: " + ", ".join(str(p) for p in paths))
    return 0
