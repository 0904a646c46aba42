"""Texts of a corpus, streamed: lines of a text file or one column of a CSV, each cut to a bound.

Nothing here holds more than one text at a time, so a corpus of any size reads in bounded
memory; a line longer than MAX_LINE_CHARS is cut there and the rest of it skipped unread.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from pathlib import Path

from models.options import MAX_TEXT_CHARS
from models.record import InputError
from models.text import N_, Notice

MAX_LINE_CHARS = MAX_TEXT_CHARS  # the tokenizer cuts here anyway (models/options.py)
_SKIP_CHUNK = 1 << 16


def _lines(handle: io.TextIOBase, limit: int) -> Iterator[str]:
    while True:
        line = handle.readline(limit + 1)
        if not line:
            return
        if len(line) > limit and not line.endswith("\n"):
            rest = handle.readline(_SKIP_CHUNK)  # skip the rest of an over-long line, chunk by chunk
            while rest and not rest.endswith("\n"):
                rest = handle.readline(_SKIP_CHUNK)
            line = line[:limit]
        yield line.rstrip("\r\n")


def text_lines(path: str | Path, limit: int = MAX_LINE_CHARS) -> Iterator[str]:
    """Yields each line of a UTF-8 text file (without its line ending), cut to `limit` characters.

    Raises InputError for a missing file or one that is not UTF-8 text.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path} is not a file; give a text file with one text per line")
    with path.open("r", encoding="utf-8-sig", errors="strict", newline="") as handle:
        try:
            for line in _lines(handle, limit):
                if "\x00" in line:
                    raise InputError(f"{path} contains binary data; give a plain UTF-8 text file")
                yield line
        except UnicodeDecodeError:
            raise InputError(f"{path} is not UTF-8 text; save it as UTF-8 and try again") from None


def csv_column(lines: Iterable[str], column: str, limit: int = MAX_LINE_CHARS) -> Iterator[str]:
    """Yields the `column` cell of each row of CSV text given line by line, cut to `limit` characters.

    The first row is the header (names compared without case or surrounding spaces). Raises
    InputError if the column is missing or the CSV cannot be read.
    """
    csv.field_size_limit(max(limit, 1 << 17))
    reader = csv.reader(iter(lines))
    try:
        header = [h.strip().lower() for h in next(reader, [])]
        wanted = column.strip().lower()
        if wanted not in header:
            shown = ", ".join(header[:8]) or "none"
            raise InputError(Notice(N_("the CSV has no column {column}; its columns: {shown}"), column=repr(column),
                                    shown=shown))
        index = header.index(wanted)
        for row in reader:
            if index < len(row):
                yield row[index][:limit]
    except csv.Error as error:
        raise InputError(Notice(N_("the CSV could not be read ({error}); check quoting and delimiters"),
                                error=str(error))) from None


def csv_file_column(path: str | Path, column: str, limit: int = MAX_LINE_CHARS) -> Iterator[str]:
    """Yields one column of a UTF-8 CSV file, streamed row by row (see csv_column)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path} is not a file; give a CSV file with a header row")
    with path.open("r", encoding="utf-8-sig", errors="strict", newline="") as handle:
        try:
            yield from csv_column(_lines_keep_end(handle, limit), column, limit)
        except UnicodeDecodeError:
            raise InputError(f"{path} is not UTF-8 text; save it as UTF-8 and try again") from None


def _lines_keep_end(handle: io.TextIOBase, limit: int) -> Iterator[str]:
    # csv.reader needs the line endings to read quoted cells that span lines.
    for line in iter(lambda: handle.readline(limit + 1), ""):
        if "\x00" in line:
            raise InputError("the CSV contains binary data; give a plain UTF-8 CSV")
        yield line


def count_lines(path: str | Path) -> int:
    """Returns the number of lines of a file (for a progress bar's total), read in 1 MB blocks."""
    count, last = 0, b"\n"
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")


# ----------------------------------------------------------------------------- uploads (the page)

MAX_UPLOAD_BYTES = 2_000_000  # as the HAN page's CSV upload (models/han/data.py: MAX_CSV_BYTES)
MAX_UPLOAD_TEXTS = 5_000  # as its MAX_CSV_ROWS


def upload_text(data: bytes) -> str:
    """Returns an uploaded file's text; InputError in one line if it is too big, not UTF-8 or binary."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise InputError(Notice(N_("the file is {size:.1f} MB; the limit is {limit:.0f} MB - upload a smaller sample"),
                                size=len(data) / 1e6, limit=MAX_UPLOAD_BYTES / 1e6))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(Notice(N_("the file is not UTF-8 text; save it as UTF-8 and upload again"))) from None
    if "\x00" in text:
        raise InputError(Notice(N_("the file contains binary data; upload plain text or CSV")))
    if not text.strip():
        raise InputError(Notice(N_("the file is empty; upload one text per line, or a CSV with a text column")))
    return text


def csv_header(text: str) -> list[str]:
    """Returns the column names of CSV text (its first row, stripped and lower-cased)."""
    try:
        return [h.strip().lower() for h in next(csv.reader(io.StringIO(text, newline="")), [])]
    except csv.Error as error:
        raise InputError(Notice(N_("the CSV could not be read ({error}); check quoting and delimiters"),
                                error=str(error))) from None


def upload_texts(text: str, column: str | None = None) -> list[str]:
    """Returns the non-empty texts of an upload: its lines, or one CSV column; at most MAX_UPLOAD_TEXTS."""
    rows = csv_column(io.StringIO(text, newline=""), column) if column else iter(text.splitlines())
    texts = []
    for row in rows:
        if row.strip():
            if len(texts) >= MAX_UPLOAD_TEXTS:
                raise InputError(Notice(N_("the file has more than {most:,} texts; upload a smaller sample "
                                           "or run `cli.py corpus` on the whole file"), most=MAX_UPLOAD_TEXTS))
            texts.append(row[:MAX_LINE_CHARS])
    if not texts:
        raise InputError(Notice(N_("the file has no non-empty texts")))
    return texts


def sample_texts() -> list[str]:
    """Returns the bundled sample corpus (models/corpus/sample_corpus.txt, 60 sentences written for it)."""
    return [line for line in text_lines(Path(__file__).with_name("sample_corpus.txt")) if line.strip()]
