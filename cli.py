"""Attention Lab without a browser: list mechanisms, export attention records.

    python cli.py list
    python cli.py export --mechanism ID [--text T | --image P | options] --format FMT --out PATH
    python cli.py export --mechanism ID --input-file FILE --format FMT --out DIR

Bad input exits with status 2 and one line on stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

# XLA allocates fresh temporaries on every call; with glibc's default malloc settings that
# means page faults on every call (see README, "Speed"). The tunables must be in place
# before the process starts, so the CLI re-executes itself once with them set.
GLIBC_TUNABLES = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295:glibc.malloc.arena_max=1"

FORMATS = ("npz", "json", "csv", "npy", "png", "svg", "pdf", "html")
EXIT_BAD_INPUT = 2


class UsageError(Exception):
    """Bad command-line input; printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not usage + message
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="cli.py", description="Export attention records from Attention Lab's mechanisms.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    commands.add_parser("list", help="print the registered mechanism ids, one per line")
    export = commands.add_parser("export", help="export one record, or one per line of --input-file")
    export.add_argument("--mechanism", required=True, help="a registered id (see: cli.py list)")
    export.add_argument("--format", required=True, choices=FORMATS)
    export.add_argument("--out", required=True, help="output file; with --input-file, an output folder")
    source = export.add_mutually_exclusive_group()
    source.add_argument("--text", help="input text")
    source.add_argument("--image", help="input image path")
    source.add_argument("--input-file", help="one input per line (text, image path or query)")
    export.add_argument("--text-pair", help="second sentence, for sentence pairs")
    export.add_argument("--model-dir", help="a local Hugging Face-format BERT folder")
    export.add_argument("--query", help="playground query, e.g. '1.5,0.5'")
    export.add_argument("--keys", help="playground keys, e.g. '2,0.1; 0.1,2'")
    export.add_argument("--values", help="playground values, one row per key")
    export.add_argument("--labels", help="playground key labels, comma-separated")
    export.add_argument("--temperature", type=float, help="softmax temperature")
    export.add_argument("--mode", choices=("soft", "argmax", "sample"), help="soft or hard attention")
    export.add_argument("--samples", type=int, help="number of hard-attention samples")
    export.add_argument("--seed", type=int, help="random seed")
    export.add_argument("--length", type=int, help="sequence length T")
    export.add_argument("--window", type=int, help="local attention half-width D")
    export.add_argument("--score", choices=("dot", "scaled-dot", "cosine"), help="parameter-free score (sentence-alignment)")
    export.add_argument("--patch", type=int, help="patch size in px (patch-self-attention)")
    return parser


def _options(args: argparse.Namespace) -> dict:
    skip = {"command", "format", "out", "input_file"}
    return {k: v for k, v in vars(args).items() if k not in skip and v is not None}


def _read_lines(path: str) -> list[str]:
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"input file not found: {path}")
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"input file is not UTF-8 text: {path}") from None
    lines = [line.rstrip("\r\n") for line in text.splitlines()]
    lines = [line for line in lines if line.strip()]
    if not lines:
        raise UsageError(f"input file has no non-empty lines: {path}")
    return lines


def _write(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as error:
        raise UsageError(f"cannot write {path}: {error.strerror or error}") from None


def run_export(args: argparse.Namespace) -> None:
    from models.registry import get_mechanism
    from viz.export import export_bytes

    try:
        mechanism = get_mechanism(args.mechanism)
    except KeyError as error:
        raise UsageError(str(error.args[0])) from None
    options = _options(args)
    if args.input_file:
        lines = _read_lines(args.input_file)
        out_dir = Path(args.out)
        if out_dir.exists() and not out_dir.is_dir():
            raise UsageError(f"--out must be a folder with --input-file: {out_dir} is a file")
        batch = [{**options, mechanism.input_field: line} for line in lines]
        records = mechanism.build_many(batch)
        width = max(4, len(str(len(records))))
        for number, record in enumerate(records, start=1):
            _write(out_dir / f"{number:0{width}d}.{args.format}", export_bytes(record, args.format))
        print(f"wrote {len(records)} files to {out_dir}")
        return
    record = mechanism.build(options)
    out = Path(args.out)
    if out.is_dir():
        raise UsageError(f"--out is a folder; give a file name such as {out / ('attention.' + args.format)}")
    _write(out, export_bytes(record, args.format))
    print(f"wrote {out}")


def main(argv: list[str] | None = None) -> int:
    from models.record import InputError

    argv = sys.argv[1:] if argv is None else argv
    try:
        args = build_parser().parse_args(argv)
        if args.command == "list":
            from models.registry import mechanism_ids

            print("\n".join(mechanism_ids()))
            return 0
        run_export(args)
        return 0
    except (UsageError, InputError) as error:
        print(f"error: {str(error).splitlines()[0] if str(error) else 'bad input'}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as error:  # noqa: BLE001 - anything else is still reported on one line
        from viz.export import ExportUnavailable

        if isinstance(error, ExportUnavailable):
            print(f"error: {error}", file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":
    if os.environ.get("GLIBC_TUNABLES") is None and os.environ.get("ATTENTION_LAB_NO_REEXEC") is None:
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "GLIBC_TUNABLES": GLIBC_TUNABLES})
    sys.exit(main())
