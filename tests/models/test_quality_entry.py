"""`python -m models.quality FAMILY` prints the family's measured table: rows of numbers, not a header alone."""

import re

import pytest

from models import quality


def _rows(table: str) -> list[list[str]]:
    """Returns the cells of every Markdown data row (header and separator left out)."""
    lines = [line for line in table.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


def test_feedforward_quick_prints_a_row_of_measured_numbers_per_model(capsys):
    assert quality.main(["feedforward", "--quick"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert [row[0] for row in rows] == ["paper-T100", "paper-T1000", "unbounded", "unbounded"]
    for row in rows:
        mse, top2, mass, one_ms = float(row[3]), float(row[4].rstrip("%")), float(row[5].rstrip("%")), float(row[6])
        assert 0 <= mse < 0.05 and top2 >= 90 and 0 < mass <= 100 and one_ms > 0, row


def test_every_family_has_a_report_and_an_unknown_family_is_one_line(capsys):
    import importlib

    for family in quality.FAMILIES:
        assert callable(importlib.import_module(f"models.{family}.quality").report), family
    with pytest.raises(SystemExit) as exit_info:
        quality.main(["no-such-family"])
    assert exit_info.value.code == 2
    assert re.search(r"invalid choice: 'no-such-family'", capsys.readouterr().err)
