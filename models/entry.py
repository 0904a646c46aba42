"""What a registry entry is: a Page of the app and a Mechanism of the catalogue (models/registry.py
holds the entries). Builders are imported only when a mechanism is built."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from models import options as o
from models.record import AttentionRecord


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
    paper: str
    formula: str  # LaTeX, rendered with st.latex
    page: str  # a Page.file
    summary: str
    family: str
    builder: str  # "module:function", (mechanism, options) -> AttentionRecord
    variant: str | None = None
    options: tuple[o.Option, ...] = ()
    input: str = "text"
    batch_builder: str | None = None  # "module:function", (mechanism, [options]) -> [records]
    example: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)

    def __post_init__(self):
        names = [x.name for x in self.options]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.id}: an option is declared twice")
        if self.input not in names:
            raise ValueError(f"{self.id}: input {self.input!r} is not a declared option")
        object.__setattr__(self, "example", dict(self.example))

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
