"""Attention Lab without a browser: list mechanisms and their options, export attention records.

    python cli.py list                       # every mechanism id
    python cli.py options ID                 # the flags one mechanism takes, with ranges and defaults
    python cli.py export --mechanism ID [--text T | --image P | options] --format FMT --out PATH
    python cli.py export --mechanism ID --input-file FILE --format FMT --out DIR
    python cli.py export ... --format png --lang zh    # the figure's texts in Chinese (PNG, SVG, PDF, HTML)
    python cli.py corpus --mechanism transformer --input-file FILE [--column NAME] --out DIR   # models/corpus/cli.py
    python cli.py export --mechanism corpus --corpus FILE [--model lm] --format npz --out PATH

The option flags come from the registry (models/registry.py): a mechanism accepts exactly the
options it declares, each checked the way the pages check them. Batch exports read the input
file with a size bound and build records in chunks sized by the bytes they will hold
(models/entry.py: CHUNK_BYTES, from each mechanism's estimate), writing each chunk before the
next is built; every file is written atomically, CSV and JSON a block at a time, so the peak
memory depends neither on the number of lines nor on the format. An existing --out is
refused unless --force is given.

Every error the project raises on purpose (models/errors.py: LabError) ends the command with
one line on stderr, no traceback, and its exit status: 2 for bad input (a flag, a value, a
file, a model folder), 1 for a failure that is not the input's fault (a damaged or missing
checkpoint, an image export whose browser cannot start or does not answer).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from models.errors import LabError

# XLA allocates fresh temporaries on every call; with glibc's default malloc settings that
# means page faults on every call (docs/PERFORMANCE.md). The tunables must be in place
# before the process starts, so the CLI re-executes itself once with them set.
GLIBC_TUNABLES = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295:glibc.malloc.arena_max=1"

FORMATS = ("npz", "json", "csv", "npy", "png", "svg", "pdf", "html")
EXIT_BAD_INPUT = 2
MAX_INPUT_FILE_BYTES = 5 * 1024 * 1024
MAX_INPUT_LINES = 10_000


class UsageError(LabError):
    """Bad command-line input; printed as one line, exit status 2."""

    exit_status = EXIT_BAD_INPUT


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not usage + message
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    from models.registry import all_options

    parser = _Parser(prog="cli.py", description="Export attention records from Attention Lab's mechanisms.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    commands.add_parser("list", help="print the registered mechanism ids, one per line")
    from models.corpus.cli import add_parser as add_corpus_parser  # cli.py corpus: models/corpus/cli.py

    add_corpus_parser(commands)
    describe = commands.add_parser("options", help="print the options one mechanism takes")
    describe.add_argument("id", help="a registered id (see: cli.py list)")
    export = commands.add_parser("export", help="export one record, or one per line of --input-file")
    export.add_argument("--mechanism", required=True, help="a registered id (see: cli.py list)")
    export.add_argument("--format", required=True, choices=FORMATS)
    export.add_argument("--out", required=True, help="output file; with --input-file, an output folder")
    export.add_argument("--input-file", help="one input per line (the mechanism's input option: text, image path, ...)")
    export.add_argument("--force", action="store_true", help="replace an existing --out")
    export.add_argument("--compress", action="store_true", help="npz: compress (about 30%% smaller, several times slower)")
    export.add_argument("--lang", default="en", choices=_languages(),
                        help="the language of a figure's texts (axis titles, hover, legends) in PNG, SVG, PDF and HTML")
    for option in all_options().values():
        export.add_argument(option.flag, dest=option.name, default=argparse.SUPPRESS, metavar=option.name.upper(),
                            help=option.help)
    return parser


def _languages() -> tuple[str, ...]:
    from viz.i18n_text import LANGUAGES  # no plotly, no babel: the catalog is read only when a figure is written

    return tuple(LANGUAGES)


def _given_options(args: argparse.Namespace) -> dict:
    from models.registry import all_options

    return {name: getattr(args, name) for name in all_options() if hasattr(args, name)}


def _check_declared(mechanism, given: dict) -> None:
    declared = {o.name for o in mechanism.options}
    extra = [name for name in given if name not in declared]
    if extra:
        flags = ", ".join("--" + n.replace("_", "-") for n in extra)
        takes = ", ".join(o.flag for o in mechanism.options)
        raise UsageError(f"{mechanism.id} does not take {flags}; it takes {takes}")


def _read_lines(path: str) -> list[tuple[int, str]]:
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"input file not found: {path}")
    with file.open("rb") as f:
        data = f.read(MAX_INPUT_FILE_BYTES + 1)
    if len(data) > MAX_INPUT_FILE_BYTES:
        raise UsageError(f"input file is over {MAX_INPUT_FILE_BYTES // 2**20} MB: {path}; split it")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"input file is not UTF-8 text: {path}") from None
    lines = [(number, line) for number, line in enumerate((raw.rstrip("\r\n") for raw in text.splitlines()), start=1)
             if line.strip()]
    if not lines:
        raise UsageError(f"input file has no non-empty lines: {path}")
    if len(lines) > MAX_INPUT_LINES:
        raise UsageError(f"input file has {len(lines):,} lines, over the limit of {MAX_INPUT_LINES:,}; split it")
    return lines


def _write(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """Runs write(file) on a temporary file in path's folder, then renames it to path: a file is
    whole or absent, never half written."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "wb") as file:
            write(file)
        os.replace(tmp, path)
    except BaseException as error:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise UsageError(f"cannot write {path}: {error.strerror or error}") from None
        raise


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _write_export(path: Path, record, fmt: str, compress: bool, language: str = "en") -> None:
    from viz.export import FIGURE_FORMATS, write_export  # plotly and kaleido load only for figure formats
    from viz.i18n_text import gettext_for, untranslated

    gettext = gettext_for(language) if fmt in FIGURE_FORMATS else untranslated
    _write(path, lambda file: write_export(record, fmt, file, compress=compress, gettext=gettext))


def run_export(args: argparse.Namespace) -> None:
    from models.registry import get_mechanism

    try:
        mechanism = get_mechanism(args.mechanism)
    except KeyError as error:
        raise UsageError(str(error.args[0])) from None
    given = _given_options(args)
    _check_declared(mechanism, given)
    if not args.input_file:
        mechanism.read(given)  # a bad value is reported before any file is looked at
    from models.compile_cache import enable_compilation_cache

    enable_compilation_cache()  # a second run loads its compiled functions instead of compiling them
    out = Path(args.out)
    if args.input_file:
        if mechanism.input in given:
            raise UsageError(f"give --input-file or --{mechanism.input.replace('_', '-')}, not both")
        run_batch(mechanism, given, args, out)
        return
    if out.is_dir():
        raise UsageError(f"--out is a folder; give a file name such as {out / ('attention.' + args.format)}")
    if out.exists() and not args.force:
        raise UsageError(f"{out} exists; pass --force to replace it")
    if not out.parent.is_dir():  # a typo in a path is said, not made into new folders
        raise UsageError(f"--out's folder {out.parent} does not exist; create it first")
    image = given.get("image")
    if image and _same_file(out, Path(str(image))):
        raise UsageError("--out would overwrite the input image")
    record = mechanism.build(given)
    _write_export(out, record, args.format, args.compress, args.lang)
    print(f"wrote {out}")
    _say_notices(record)


def run_batch(mechanism, given: dict, args: argparse.Namespace, out_dir: Path) -> None:
    """Builds and writes the records of --input-file in chunks of at most CHUNK_BYTES of records."""
    from models.entry import plan_chunks

    numbered = _read_lines(args.input_file)
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out must be a folder with --input-file: {out_dir} is a file")
    if _same_file(out_dir, Path(args.input_file).parent) and not args.force:
        raise UsageError("--out is the input file's folder; choose another folder (or pass --force)")
    if out_dir.exists() and any(out_dir.iterdir()) and not args.force:
        raise UsageError(f"{out_dir} exists and is not empty; pass --force to write into it")
    # Files are numbered by their line in the input file: a blank line is skipped, not renumbered past.
    width = max(4, len(str(numbered[-1][0])))
    input_file = Path(args.input_file)
    inputs = [{**given, mechanism.input: line} for _, line in numbered]
    for chunk in plan_chunks(mechanism.estimated_bytes(raw) for raw in inputs):
        records = mechanism.build_many([inputs[i] for i in chunk])
        for index, record in zip(chunk, records, strict=True):
            number = numbered[index][0]
            path = out_dir / f"{number:0{width}d}.{args.format}"
            if _same_file(path, input_file):
                raise UsageError(f"{path} is the input file; choose another --out")
            _write_export(path, record, args.format, args.compress, args.lang)
            _say_notices(record, f"line {number}: ")
        del records, record  # a chunk's records are gone before the next chunk is built
    blank = numbered[-1][0] - len(numbered)
    print(f"wrote {len(numbered)} files to {out_dir}, one per line of {input_file.name}"
          + (f" (line numbers; {blank} blank {'line' if blank == 1 else 'lines'} skipped)" if blank else ""))


def _say_notices(record, where: str = "") -> None:
    # What the page shows beside a figure (an input cut, outside what the model knows, [UNK]) goes to
    # stderr, one line each: a CSV or NPY export does not hold it, and a JSON one only in its meta.
    notices = [*record.meta.get("notices", []), record.meta.get("notice")]
    for notice in dict.fromkeys(n for n in notices if isinstance(n, str) and n):
        print(f"notice: {where}{' '.join(notice.split())}", file=sys.stderr)


def describe(mechanism_id: str) -> str:
    """Returns the options of one mechanism, one line each."""
    from models.registry import get_mechanism

    try:
        mechanism = get_mechanism(mechanism_id)
    except KeyError as error:
        raise UsageError(str(error.args[0])) from None
    lines = [f"{mechanism.id}: {mechanism.name} ({mechanism.citation()})"]
    for option in mechanism.options:
        default = "" if option.default is None else f", default {option.default}"
        lines.append(f"  {option.flag:14} {option.describe()}{default}: {option.help}")
    lines.append(f"  --input-file   one {mechanism.input} per line")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = build_parser().parse_args(argv)
        if args.command == "list":
            from models.registry import mechanism_ids

            print("\n".join(mechanism_ids()))
            return 0
        if args.command == "options":
            print(describe(args.id))
            return 0
        if args.command == "corpus":  # the registry's "corpus" entry reads the flags' values
            from models.corpus.cli import options_of
            from models.corpus.cli import run as run_corpus
            from models.registry import get_mechanism

            return run_corpus(args, get_mechanism("corpus").read(options_of(args)))
        run_export(args)
        return 0
    except LabError as error:  # raised on purpose: one line, its exit status (see the docstring)
        print(f"error: {error.one_line()}", file=sys.stderr)
        return error.exit_status


if __name__ == "__main__":
    if os.environ.get("GLIBC_TUNABLES") is None and os.environ.get("ATTENTION_LAB_NO_REEXEC") is None:
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "GLIBC_TUNABLES": GLIBC_TUNABLES})
    sys.exit(main())
