"""What bench/ui_latency.py (and bench/control_pairs.py, bench/load_protocol.py) share with the tests: Chromium's
flags, a server's health check and stop, the in-browser reader that sees a Streamlit script run end, the results of one control and one page, and the
count of controls within a bound of the floor. Plain Python and JavaScript: no browser, no Streamlit.

Tested by tests/e2e/test_bench_protocol.py (the reader, in Chromium, on real ForwardMsg bytes) and
tests/tools/test_ui_timing.py (the count).
"""

from __future__ import annotations

import statistics
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

RERUN_TIMEOUT_MS = 60_000  # a first change may load a model or compile a new length bucket
# Chromium as the browser tests and the benchmarks launch it: headless Debian Chromium, offline.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]

# Installed in every document of a timed page (bench/ui_latency.py): a wrapper of the browser's WebSocket that reads the top-level
# fields of each ForwardMsg (protobuf) the server sends and calls window.__onScriptFinished on a
# script_finished (field 6) other than FINISHED_EARLY_FOR_RERUN (2: another run follows). A rerun
# fast enough for React to fold "running" into one update never changes data-test-script-state at
# all; this message still says it ended. window.__scriptFinished(bytes) is the reader on its own:
# the status of a script_finished message, null for any other (tests/e2e/test_bench_protocol.py).
FINISHED_INIT = """
(() => {
  const Native = window.WebSocket;
  const EARLY_FOR_RERUN = 2;
  const scriptFinished = buffer => {
    const b = new Uint8Array(buffer);
    let i = 0;
    const varint = () => { let v = 0, f = 1, x; do { x = b[i++]; v += (x & 127) * f; f *= 128; } while (x & 128 && i < b.length); return v; };
    while (i < b.length) {
      const tag = varint(), field = Math.floor(tag / 8), wire = tag % 8;
      if (field === 6 && wire === 0) return varint();
      // The length is read before it is added: `i += varint()` would add it to i as it was before.
      if (wire === 0) varint();
      else if (wire === 2) { const length = varint(); i += length; }
      else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else return null;
    }
    return null;
  };
  window.__scriptFinished = scriptFinished;
  function Watched(...args) {
    const ws = new Native(...args);
    // Where a round trip goes: when the change left for the server, when each message came back.
    const send = ws.send.bind(ws);
    ws.send = data => { (window.__sent = window.__sent || []).push(performance.now()); return send(data); };
    ws.addEventListener('message', event => {
      (window.__received = window.__received || []).push(performance.now());
      if (!(event.data instanceof ArrayBuffer) || !window.__onScriptFinished) return;
      const status = scriptFinished(event.data);
      if (status !== null && status !== EARLY_FOR_RERUN) window.__onScriptFinished();
    });
    return ws;
  }
  Watched.prototype = Native.prototype;
  for (const name of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) Watched[name] = Native[name];
  window.WebSocket = Watched;
})();
"""


@dataclass
class ControlResult:
    """The round trips (ms) of one control, or why it was skipped."""

    kind: str
    label: str
    key: str | None
    times_ms: list[float] = field(default_factory=list)
    lost: int = 0  # changes that produced no rerun within RERUN_TIMEOUT_MS
    skipped: str | None = None
    fingerprint_before: str | None = None  # of the figures before the first change
    figures_changed: int | None = None  # how many figures the first change redrew (FINGERPRINT_JS)
    splits: list[dict] = field(default_factory=list)  # SPLIT_JS of each recorded round trip
    beside_ms: list[float] = field(default_factory=list)  # the floor's slider, measured just before (BesideFloor)

    @property
    def median(self) -> float | None:
        return statistics.median(self.times_ms) if self.times_ms else None


@dataclass
class PageResult:
    title: str
    path: str
    first_visit_ms: float | None = None
    warm_ms: list[float] = field(default_factory=list)
    controls: list[ControlResult] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    exceptions: int = 0  # st.exception boxes shown after the first visit


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def fmt(value: float | None, digits: int = 0) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def within_line(report: dict, floor_ms: float | None, limit: float = 1.3) -> str:
    """Returns how many measured controls are within `limit` × the run's floor, and × the floor beside each."""
    measured = [c for page in report["pages"] for c in page.controls if not c.skipped and c.median is not None]
    by_run = sum(bool(floor_ms) and c.median <= limit * floor_ms for c in measured)
    line = f"\nWithin {limit} × the run's floor: **{by_run} of {len(measured)}** controls"
    paired = [c for c in measured if c.beside_ms]
    if paired:
        by_beside = sum(c.median <= limit * median(c.beside_ms) for c in paired)
        beside_floors = [median(c.beside_ms) for c in paired]
        line += (f"; within {limit} × the floor measured beside each: **{by_beside} of {len(paired)}** "
                 f"(those floors {fmt(min(beside_floors))}–{fmt(max(beside_floors))} ms)")
    return line + "."


def wait_healthy(url: str, proc: subprocess.Popen | None, timeout: float, log_path: Path | str | None = None) -> None:
    """Returns once url/_stcore/health answers 200; raises if the process exits or time runs out."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}; see {log_path}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not become healthy in {timeout:.0f} s")


def stop_server(proc: subprocess.Popen) -> None:
    """Ends a server process: asks it to stop, and kills it if it has not within 15 s."""
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
