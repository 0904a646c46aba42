"""What a registry entry is: a Page of the app and a Mechanism of the catalogue (models/registry.py
holds the entries). Builders are imported only when a mechanism is built.

Many records at once (a CLI --input-file, any batch) are built in chunks sized by bytes:
plan_chunks() closes a chunk before its estimated records pass CHUNK_BYTES, so the memory a
batch holds does not grow with its length nor with the size of its inputs. Each mechanism
estimates its records' bytes from the input (Mechanism.record_size); one without an estimate
is assumed to make records of DEFAULT_RECORD_BYTES.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from models import options as o
from models.record import AttentionRecord, InputError

CHUNK_BYTES = 256 * 2**20  # the records one chunk holds, estimated; one record above it is a chunk alone
MAX_CHUNK_INPUTS = 32  # and never more inputs than this (the batch builders' batch size)
DEFAULT_RECORD_BYTES = CHUNK_BYTES // MAX_CHUNK_INPUTS  # 8 MB: small records fill a chunk by count


@dataclass(frozen=True)
class Page:
    """One page of the app: its file in pages/, its title and its URL path (= the file stem)."""

    file: str
    title: str
    icon: str
    default: bool = False

    @property
    def url_path(self) -> str:
        return self.file.removeprefix("pages/").removesuffix(".py")


@dataclass(frozen=True)
class Mechanism:
    """One attention mechanism of the catalogue.

    family: the package under models/ that computes it; variant: which of the family's
    models it is (None if the family has one). input: the option one line of a CLI
    --input-file fills. example: options of a typical input (the registry test builds every
    mechanism with it; the README's CLI lines use it).
    """

    id: str
    name: str
    paper: str  # the citation, shown as it is in every language: authors (year), title or section
    formula: str  # LaTeX, rendered with st.latex
    page: str  # a Page.file
    summary: str
    family: str
    builder: str  # "module:function", (mechanism, options) -> AttentionRecord
    variant: str | None = None
    options: tuple[o.Option, ...] = ()
    input: str = "text"
    batch_builder: str | None = None  # "module:function", (mechanism, [options]) -> [records]
    # "module:function", (mechanism, options) -> the bytes its record will hold while built, at most
    # (weights and what building them holds per input); None: DEFAULT_RECORD_BYTES.
    record_size: str | None = None
    example: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    # What this mechanism changes in the cited paper's, marked with N_ and shown in the reader's language.
    paper_note: str = ""

    def __post_init__(self):
        names = [x.name for x in self.options]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.id}: an option is declared twice")
        if self.input not in names:
            raise ValueError(f"{self.id}: input {self.input!r} is not a declared option")
        object.__setattr__(self, "example", dict(self.example))

    def citation(self, gettext: Callable[[str], str] = lambda text: text) -> str:
        """Returns the paper line the pages show: the citation, then its note translated by `gettext`."""
        return f"{self.paper}, {gettext(self.paper_note)}" if self.paper_note else self.paper

    def option(self, name: str) -> o.Option:
        """Returns the declared option `name`; KeyError if the mechanism has none."""
        for declared in self.options:
            if declared.name == name:
                return declared
        raise KeyError(f"{self.id} has no option {name!r}")

    def read(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """Returns a typed value for every declared option; InputError for unknown or bad values."""
        return o.read_all(self.options, dict(raw), owner=self.id)

    def build(self, raw: Mapping[str, Any]) -> AttentionRecord:
        """Returns the record for one input (raw option values are checked first)."""
        return _resolve(self.builder)(self, self.read(raw))

    def estimated_bytes(self, raw: Mapping[str, Any]) -> int:
        """Returns the bytes one input's record will take while it is built (an estimate, made before
        building). Bad input is not reported here: it gets DEFAULT_RECORD_BYTES, and build() says it."""
        if not self.record_size:
            return DEFAULT_RECORD_BYTES
        try:
            return max(1, int(_resolve(self.record_size)(self, self.read(raw))))
        except InputError:
            return DEFAULT_RECORD_BYTES

    def build_many(self, raw_list: list[Mapping[str, Any]]) -> list[AttentionRecord]:
        """Returns one record per input, batched where the mechanism supports it."""
        checked = [self.read(raw) for raw in raw_list]
        if self.batch_builder:
            return _resolve(self.batch_builder)(self, checked)
        builder = _resolve(self.builder)
        return [builder(self, options) for options in checked]


def _resolve(path: str) -> Callable:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def plan_chunks(sizes: Iterable[int], budget: int = CHUNK_BYTES, max_inputs: int = MAX_CHUNK_INPUTS) -> Iterator[list[int]]:
    """Yields lists of input indices, in order: each list's sizes sum to at most `budget` bytes and it
    holds at most `max_inputs` indices (an input above the budget is a list alone).

    Lazy: sizes are read one ahead of the chunk being yielded, so a chunk is planned, built and
    written before the inputs after it are looked at.
    """
    chunk: list[int] = []
    held = 0
    for index, size in enumerate(sizes):
        if chunk and (held + size > budget or len(chunk) >= max_inputs):
            yield chunk
            chunk, held = [], 0
        chunk.append(index)
        held += size
    if chunk:
        yield chunk
