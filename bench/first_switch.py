"""Benchmark: the first switch to each variant of a page, cold and warmed ahead, against the next switch.

    .venv/bin/python bench/first_switch.py [--pages seq2seq,playground] [--cycles 2]

For each page, in two fresh processes (the caches this measures live in a process):
- cold: the page opened through app.py with Streamlit's AppTest, then its variant select box
  stepped through every option --cycles times, timing each rerun (the server's script time);
- warmed: the same, after models.registry.warm(page) ran to its end: what the page's background
  thread (ui.widgets.warm_in_background) has done once a class has had the page open for a moment.

Prints, per page and condition, the median rerun of a first switch to an option (cycle 1) and of
later switches (cycles 2 …), and their difference: what a first switch costs beyond a later one.
It uses JAX's compilation cache on disk as the app does (models/compile_cache.py; the folder of
$ATTENTION_LAB_JAX_CACHE, else the user cache): run it twice and the second run shows the warm-disk
case that a server restart sees. It never asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SELECTS = {"seq2seq": "s2s_variant", "playground": "mechanism"}  # page: the select box of its variants


def measure(page: str, cycles: int, warm_first: bool) -> dict:
    """Runs in the child process: returns {"first": [ms…], "later": [ms…]}."""
    sys.path.insert(0, str(ROOT))
    from streamlit.testing.v1 import AppTest

    from models.registry import PAGES, mechanisms_on_page, warm

    page_file = next(p.file for p in PAGES if Path(p.file).stem == page)
    if warm_first:
        warm(page_file)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    at.switch_page(page_file)
    at.run()
    key = SELECTS[page]
    options = list(at.selectbox(key=key).options)
    ids = [m.id for m in mechanisms_on_page(page_file)]
    assert len(ids) == len(options), (ids, options)
    shown = {ids.index(str(at.selectbox(key=key).value))}  # the default was built by the first visit
    first, later = [], []
    for _ in range(cycles * len(ids)):
        i = (ids.index(str(at.selectbox(key=key).value)) + 1) % len(ids)
        at.selectbox(key=key).set_value(ids[i])
        start = time.perf_counter()
        at.run()
        elapsed = 1000 * (time.perf_counter() - start)
        if at.exception:
            raise SystemExit(f"{page}: {at.exception[0].message}")
        (first if i not in shown else later).append(elapsed)
        shown.add(i)
    return {"first": first, "later": later}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", default=",".join(SELECTS))
    parser.add_argument("--cycles", type=int, default=2)
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        page, condition = args.child.split(":")
        print(json.dumps(measure(page, args.cycles, condition == "warmed")))
        return 0
    env = {**os.environ, "ATTENTION_LAB_WARM": "0"}  # this bench warms (or not) by itself
    print("| page | condition | first switch to a variant (ms, median) | later switches (ms, median) | first − later (ms) | n first / later |")
    print("|---|---|---:|---:|---:|---|")
    for page in [p for p in args.pages.split(",") if p]:
        for condition in ("cold", "warmed"):
            out = subprocess.run([sys.executable, __file__, "--child", f"{page}:{condition}", "--cycles", str(args.cycles)],
                                 env=env, capture_output=True, text=True, check=False)
            if out.returncode:
                print(f"| {page} | {condition} | failed: {out.stderr.strip().splitlines()[-1:]} | | | |")
                continue
            row = json.loads(out.stdout.strip().splitlines()[-1])
            first, later = statistics.median(row["first"]), statistics.median(row["later"])
            print(f"| {page} | {condition} | {first:.0f} | {later:.0f} | {first - later:+.0f} | "
                  f"{len(row['first'])} / {len(row['later'])} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
