"""Faults end cleanly through the CLI: a browser that cannot start, one that hangs, a damaged
checkpoint. Each ends with one line on stderr, no traceback, a non-zero exit, and no process
of the browser left behind."""

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _processes_marked(token: str) -> list[int]:
    """Returns the pids whose environment or command line holds `token` (every process the CLI
    starts inherits its environment: kaleido's launcher, the browser and the browser's children)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if token.encode() in (entry / "environ").read_bytes() + (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return [pid for pid in found if pid != os.getpid()]


def _export_png(tmp_path: Path, browser: str, token: str, timeout: str = "3") -> subprocess.CompletedProcess:
    env = {**os.environ, "BROWSER_PATH": browser, "ATTENTION_LAB_EXPORT_TIMEOUT": timeout, "FAULT_TEST_TOKEN": token}
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), "export", "--mechanism", "qkv-dot", "--query", "1,2",
                           "--format", "png", "--out", str(tmp_path / "a.png")],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)


def _one_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def _none_left(token: str) -> None:
    deadline = time.monotonic() + 5  # SIGKILLed processes take a moment to leave /proc
    while _processes_marked(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_marked(token) == [], "processes of the browser outlived the CLI"


def test_a_browser_that_cannot_start_ends_the_cli_in_one_line(tmp_path):
    token = f"fault-{uuid.uuid4().hex}"
    result = _export_png(tmp_path, "/bin/false", token)
    assert "could not start its browser" in _one_line(result)
    assert not (tmp_path / "a.png").exists()
    _none_left(token)


def test_a_hanging_browser_is_given_up_and_its_whole_tree_killed(tmp_path):
    token = f"fault-{uuid.uuid4().hex}"
    started = tmp_path / "started"
    browser = tmp_path / f"browser-{token}"
    # A browser that never answers: a shell that writes its pid and waits on a child sleeping for
    # minutes (two processes under kaleido's launcher, neither of which ends by itself).
    browser.write_text(f"#!/bin/sh\necho $$ > {started}\nsleep 300 &\nwait\n")
    browser.chmod(0o755)
    began = time.monotonic()
    result = _export_png(tmp_path, str(browser), token, timeout="2")
    assert "could not start its browser (TimeoutError)" in _one_line(result)
    assert time.monotonic() - began < 100  # the 2 s knob was used, not the 45 s default (a loose bound)
    assert started.is_file(), "the fake browser never ran, so the test proves nothing"
    _none_left(token)


def test_a_damaged_checkpoint_ends_the_cli_in_one_line(tmp_path):
    damaged = tmp_path / "feedforward"
    damaged.mkdir()
    source = ROOT / "checkpoints" / "feedforward" / "unbounded.safetensors"
    (damaged / "unbounded.safetensors").write_bytes(source.read_bytes()[:5_000])
    shutil.copy(ROOT / "checkpoints" / "feedforward" / "paper-T100.safetensors", damaged)
    # The CLI's main() with the feed-forward family reading its checkpoints from the damaged folder.
    program = ("import sys, pathlib; import models.feedforward.checkpoint as c; c.CHECKPOINT_DIR = pathlib.Path(sys.argv[1]);"
               " import cli; sys.exit(cli.main(sys.argv[2:]))")
    result = subprocess.run([sys.executable, "-c", program, str(damaged), "export", "--mechanism", "feedforward-unbounded",
                             "--seed", "0", "--length", "100", "--format", "json", "--out", str(tmp_path / "a.json")],
                            capture_output=True, text=True, cwd=ROOT, timeout=300)
    line = _one_line(result)
    assert line.startswith("error: unbounded.safetensors is not a readable safetensors file"), line
    assert not (tmp_path / "a.json").exists()
