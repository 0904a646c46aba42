"""The bundled sample corpus split into a fitting sample and a held-out set (for the joint embedding)."""

from pathlib import Path

import models.corpus

SAMPLE = Path(models.corpus.__file__).with_name("sample_corpus.txt")


def _lines() -> list[str]:
    return [line for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]


def sample_sentences() -> list[str]:
    return _lines()[:40]


def held_out_sentences() -> list[str]:
    return _lines()[40:]
