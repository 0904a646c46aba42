"""What one more changed figure costs a control's round trip, in Chromium, against the floor.

    .venv/bin/python bench/figure_cost.py [--figures 1,2,4] [--ticks] [--menus] [--page] [--repeat 12] [--json FILE]

Starts bench/figures_app.py once per variant (N separate plotly figures, or one figure with N
subplots; N = 1 is bench/floor_app.py's floor; with --ticks also the floor's one heatmap with a
label on each of its 64 rows and columns, under plotly.js's default tick-label overflow check and
with ticklabeloverflow "allow"), each on its own loopback port and in its own
browser page, all at once. Then it steps each page's slider in turn, round-robin, so that drift of
the machine's load falls on every variant alike, and prints the median round trip of each and its
ratio to the floor. The round trip is bench/ui_latency.py's (key press → rerun done → two paints).
It never asserts a time.

Why: issue 12 asks every control to be within 1.3× of the floor. A control that changes N figures
pays the browser's per-figure cost N times; this measures that cost on its own.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ui_latency as bench  # noqa: E402  (the same servers, browser, clock and slider steps)

APP = "bench/figures_app.py"


TICK_VARIANTS = {"ticks": {"TICKS": "64"}, "ticks-allow": {"TICKS": "64", "OVERFLOW": "allow"},
                 "menus-app": {"MENUS": "app"}, "menus-lean": {"MENUS": "lean"},
                 "tokens": {"TOKENS": "24"}, "pad": {"PAD": "10"}, "tokens-pad": {"TOKENS": "24", "PAD": "10"},
                 "pad-text": {"PAD": "10", "PAD_PARTS": "text"}, "pad-table": {"PAD": "10", "PAD_PARTS": "table"},
                 "pad-figure": {"PAD": "10", "PAD_PARTS": "figure"}, "pad-fragment": {"PAD": "10", "FRAGMENT": "1"}}


def variants(counts: list[int], ticks: bool = False, menus: bool = False, page: bool = False) -> list[tuple[int, str]]:
    """Returns (N, layout) pairs: the floor first, then N figures and N subplots for every N > 1,
    then (1, "ticks") and (1, "ticks-allow"), (1, "menus-app") and (1, "menus-lean"), and (1, "tokens"),
    (1, "pad") and (1, "tokens-pad"), if asked."""
    out = [(1, "figures")]
    for n in counts:
        if n > 1:
            out += [(n, "figures"), (n, "subplots")]
    if ticks:
        out += [(1, "ticks"), (1, "ticks-allow")]
    if menus:
        out += [(1, "menus-app"), (1, "menus-lean")]
    if page:
        out += [(1, v) for v in ("tokens", "pad", "tokens-pad", "pad-text", "pad-table", "pad-figure", "pad-fragment")]
    return out


LABELS = {
    "ticks": "floor + 64 labels a side",
    "ticks-allow": "floor + 64 labels a side, overflow allowed",
    "menus-app": "floor + the app's Export and Link menus",
    "menus-lean": "floor + a one-select Export menu and the Link menu",
    "tokens": "the app's heatmap, 24 tokens a side",
    "pad": "floor under 10 unchanged sections",
    "tokens-pad": "the app's heatmap under 10 unchanged sections",
    "pad-text": "floor under 10 paragraphs",
    "pad-table": "floor under 10 tables",
    "pad-figure": "floor under 10 unchanged figures",
    "pad-fragment": "floor as a fragment under 10 unchanged sections",
}


def label(n: int, layout: str) -> str:
    if layout in LABELS:
        return LABELS[layout]
    return "floor (1 figure)" if n == 1 else (f"{n} figures" if layout == "figures" else f"1 figure, {n} subplots")


def environment(n: int, layout: str) -> dict[str, str]:
    """Returns the variables bench/figures_app.py reads for this variant."""
    if layout in TICK_VARIANTS:
        return {"FIGURES": "1", "LAYOUT": "figures", "TICKS": "", "OVERFLOW": "", "MENUS": "", "TOKENS": "",
                "PAD": "", "PAD_PARTS": "", "FRAGMENT": "", **TICK_VARIANTS[layout]}
    return {"FIGURES": str(n), "LAYOUT": layout, "TICKS": "", "OVERFLOW": "", "MENUS": "", "TOKENS": "", "PAD": "", "PAD_PARTS": "",
            "FRAGMENT": ""}


def run(args) -> dict:
    from playwright.sync_api import sync_playwright

    wanted = variants([int(n) for n in args.figures.split(",")], args.ticks, args.menus, args.page)
    times: dict[str, list[float]] = {label(*v): [] for v in wanted}
    lost: dict[str, int] = {label(*v): 0 for v in wanted}
    with contextlib.ExitStack() as stack:
        servers = []
        for n, layout in wanted:
            os.environ.update(environment(n, layout))  # the server inherits them
            servers.append(stack.enter_context(bench.streamlit_server(APP)))
        playwright = stack.enter_context(sync_playwright())
        browser = bench.launch_chromium(playwright)
        pages, thumbs = [], []
        for server in servers:
            page = bench.new_page(browser, [])
            bench.first_figure_ms(page, server.url + "/")
            bench.settle(page)
            thumb = page.locator('[data-testid="stSlider"] input[type="range"]').first
            pages.append(page)
            thumbs.append(thumb)
        for _ in range(args.repeat + 1):  # the first round is a warm-up, not counted
            for (n, layout), page, thumb in zip(wanted, pages, thumbs):
                name = label(n, layout)
                page.bring_to_front()
                thumb.focus()
                ms = bench.timed(page, lambda thumb=thumb: thumb.press("ArrowRight"))
                if ms is None:
                    lost[name] += 1
                elif _ > 0:
                    times[name].append(ms)
                bench.settle(page)
        browser.close()
    return {"times_ms": times, "lost": lost, "load_average": os.getloadavg()[0]}


def print_report(report: dict) -> None:
    floor = statistics.median(report["times_ms"]["floor (1 figure)"])
    print(f"Round trip of one slider step, medians; load average {report['load_average']:.1f}\n")
    print("| variant | median ms | × floor | extra ms per figure beyond the first |")
    print("|---|---:|---:|---:|")
    for name, values in report["times_ms"].items():
        med = statistics.median(values) if values else None
        n = 1 if name.startswith(("floor", "the app's")) else int(name.split()[0] if "subplots" not in name else name.split()[2])
        per = "" if med is None or n == 1 else f"{(med - floor) / (n - 1):.0f}"
        if "labels" in name and med is not None:
            per = f"({med - floor:+.0f} for the labels)"
        shown = "—" if med is None else f"{med:.0f}"
        ratio = "—" if med is None else f"{med / floor:.2f}"
        print(f"| {name} | {shown} | {ratio} | {per} |" + (f" ({report['lost'][name]} lost)" if report["lost"][name] else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figures", default="1,2,4", help="comma-separated N (default 1,2,4)")
    parser.add_argument("--ticks", action="store_true", help="also the floor with 64 tick labels a side, both ways")
    parser.add_argument("--menus", action="store_true", help="also the floor with the app's Export and Link menus, "
                        "and with a one-select Export menu")
    parser.add_argument("--page", action="store_true", help="also the app's own 24-token heatmap, the floor under "
                        "10 unchanged sections, and both together")
    parser.add_argument("--repeat", type=int, default=12, help="counted steps per variant (default 12)")
    parser.add_argument("--json", type=Path, help="also write the raw times here")
    args = parser.parse_args(argv)
    report = run(args)
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
