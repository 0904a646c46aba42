"""One control of one page, in several checkouts side by side, against the floor, in one browser.

    .venv/bin/python bench/control_pairs.py PAGE LABEL ROOT [ROOT ...] [--steps 5] [--blocks 6]

e.g. `bench/control_pairs.py playground Normalisation /tmp/before .` starts a server per checkout
(ROOT: a git worktree of an older commit, or this checkout) and bench/floor_app.py as stock Streamlit runs
it, opens PAGE (a url path) in each, and finds the first control whose label contains LABEL. Then,
`--blocks` times: the floor's slider is stepped `--steps` times, and the control is changed `--steps`
times in each checkout, the checkouts' order reversed every other block so that neither always goes
first. Each change is bench/ui_latency.py's round trip (the same key presses and clicks, timed from the
event to the second paint after the rerun). It prints each block's medians, then per checkout the median
over all blocks, its ratio to the floor's, and the median count of messages a change brought.

Use it to compare a change of one control with the commit before, under the same load: a whole
bench/ui_latency.py run takes minutes per page, and two runs minutes apart see different machines.
It never asserts a time.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import ui_latency as ul  # noqa: E402


def find_control(page, label: str) -> dict:
    """Returns the first visible control whose label contains `label`."""
    for control in ul.visible_controls(page):
        if label in (control["label"] or ""):
            return control
    raise SystemExit(f"no control labelled like {label!r} on {page.url}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("page", help="url path of the page, e.g. playground")
    parser.add_argument("label", help="part of the control's label, e.g. Normalisation")
    parser.add_argument("roots", nargs="+", type=Path, help="checkouts to compare (e.g. a worktree and .)")
    parser.add_argument("--steps", type=int, default=5, help="changes per checkout per block (default 5)")
    parser.add_argument("--blocks", type=int, default=6, help="blocks (default 6)")
    args = parser.parse_args()
    roots = [root.resolve() for root in args.roots]
    from playwright.sync_api import sync_playwright

    with contextlib.ExitStack() as stack, sync_playwright() as playwright:
        urls = [stack.enter_context(ul.streamlit_server("app.py", cwd=root)).url for root in roots]
        floor = stack.enter_context(ul.streamlit_server(ul.FLOOR_APP, options=ul.STOCK_RUNNER))
        browser = ul.launch_chromium(playwright)
        floor = ul.BesideFloor(browser, floor)
        pages = []
        for url in urls:
            page = ul.new_page(browser, [])
            ul.first_figure_ms(page, f"{url}/{args.page}")
            ul.settle(page)
            ul.measure_control(page, find_control(page, args.label), 3)  # warm: caches, compiled shapes
            pages.append(page)
        times: list[list[float]] = [[] for _ in roots]
        messages: list[list[int]] = [[] for _ in roots]
        floor_ms: list[float] = []
        for block in range(args.blocks):
            floor_ms += floor.measure(args.steps)
            order = range(len(roots)) if block % 2 == 0 else reversed(range(len(roots)))
            for i in order:
                result = ul.measure_control(pages[i], find_control(pages[i], args.label), args.steps)
                if result.skipped:
                    print(f"{roots[i]}: skipped ({result.skipped})")
                times[i] += result.times_ms
                messages[i] += [split["messages"] for split in result.splits if split]
            print(f"block {block + 1}: floor {statistics.median(floor_ms[-args.steps:]):.0f} ms; " + "; ".join(
                f"{root.name} {statistics.median(times[i][-args.steps:]):.0f} ms" for i, root in enumerate(roots)
                if times[i]), flush=True)
        base = statistics.median(floor_ms)
        print(f"\n| checkout | median ms | n | × floor ({base:.0f} ms, n = {len(floor_ms)}) | messages a change |")
        print("|---|---:|---:|---:|---:|")
        for i, root in enumerate(roots):
            if times[i]:
                median = statistics.median(times[i])
                shown = f"{statistics.median(messages[i]):.0f}" if messages[i] else "–"
                print(f"| {root} | {median:.0f} | {len(times[i])} | {median / base:.2f} | {shown} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
