"""Where a rerun's server time goes, per page: one control moved, the script rerun in-process.

    .venv/bin/python bench/rerun_profile.py [--pages home,playground] [--repeat 5] [--top 12]

For each page: opens it through app.py with Streamlit's AppTest (the real navigation), moves its
first slider one step (or its first select box to the next option) --repeat times, and prints the
median script time of a rerun, the bytes of every plotly figure the rerun sends (the JSON the
browser parses and draws), and, with --top, the functions where one profiled rerun spent its
time (cumulative, under the page script). This is the server's share of bench/ui_latency.py's round
trip: websocket transfer and the browser's own drawing come on top. It never asserts a time.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("ATTENTION_LAB_JAX_CACHE", "off")

from streamlit.runtime.scriptrunner import script_runner  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from models.registry import PAGES  # noqa: E402

PROFILER: list[cProfile.Profile] = []  # set: the next script run (in its own thread) is profiled
_run_script = script_runner.ScriptRunner._run_script


def _profiled_run_script(self, rerun_data):
    if not PROFILER:
        return _run_script(self, rerun_data)
    PROFILER[0].enable()
    try:
        return _run_script(self, rerun_data)
    finally:
        PROFILER[0].disable()


script_runner.ScriptRunner._run_script = _profiled_run_script


def open_page(page_file: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    if page_file != "pages/home.py":
        at.switch_page(page_file)
        at.run()
    return at


def move(at: AppTest, step: int) -> str:
    """Moves the first slider one step in one direction (or the first select box); returns its label."""
    if at.slider:
        s = at.slider[0]
        hi = s.max
        value = s.value
        delta = s.step or 1
        if isinstance(value, (int, float)):
            nxt = value + delta if value + delta <= hi else value - delta
            s.set_value(type(value)(nxt))
        return s.label
    if at.select_slider:
        s = at.select_slider[0]
        options = list(s.options)
        i = options.index(str(s.value)) if str(s.value) in options else 0
        s.set_value(s.value if len(options) < 2 else type(s.value)(options[(i + 1) % len(options)]))
        return s.label
    if at.selectbox:
        s = at.selectbox[0]
        options = list(s.options)
        s.select_index((options.index(str(s.value)) + 1) % len(options) if str(s.value) in options else 0)
        return s.label
    return "(rerun only)"


def figure_bytes(at: AppTest) -> list[int]:
    return [len(chart.proto.spec) for chart in at.get("plotly_chart")]


def profile_page(page_file: str, repeat: int, top: int) -> dict:
    at = open_page(page_file)
    label, times = "", []
    for i in range(repeat):
        label = move(at, i)
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
        if at.exception:
            return {"page": page_file, "error": str(at.exception[0].message)[:200]}
    result = {"page": page_file, "control": label, "rerun_ms": 1000 * statistics.median(times),
              "figures_kb": [round(b / 1024, 1) for b in figure_bytes(at)]}
    if top:
        move(at, repeat)
        profiler = cProfile.Profile()
        PROFILER.append(profiler)
        at.run()
        PROFILER.clear()
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out).sort_stats("cumulative")
        stats.print_stats(top)
        result["profile"] = out.getvalue()
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", default="", help="comma-separated url names (default: every page)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--top", type=int, default=0, help="print the top N profiled functions per page")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    wanted = {p for p in args.pages.split(",") if p}
    rows = []
    for page in PAGES:
        name = Path(page.file).stem
        if wanted and name not in wanted:
            continue
        row = profile_page(page.file, args.repeat, args.top)
        rows.append(row)
        print(f"{name}: {row.get('control', '')}: {row.get('rerun_ms', float('nan')):.0f} ms, figures "
              f"{row.get('figures_kb', row.get('error'))} KB", flush=True)
        if args.top and "profile" in row:
            print(row["profile"])
    print("\n| page | control moved | rerun, server (ms, median) | figures sent (KB) |\n|---|---|---:|---|")
    for row in rows:
        print(f"| {Path(row['page']).stem} | {row.get('control', '')} | {row.get('rerun_ms', float('nan')):.0f} | "
              f"{' + '.join(str(k) for k in row.get('figures_kb', [])) or row.get('error', '')} |")
    if args.json:
        args.json.write_text(json.dumps([{k: v for k, v in r.items() if k != "profile"} for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
