"""cli.py run in the test's own process, so the models load once per session."""

from __future__ import annotations

from cli import main


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """Runs cli.py with args; returns (exit status, stdout, stderr)."""
    status = main(list(args))
    out = capsys.readouterr()
    return status, out.out, out.err
