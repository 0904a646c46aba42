"""What a view switch pays to draw each kind of element, in Chromium, against a switch that draws nothing.

    .venv/bin/python bench/mount_cost.py [--rounds 8] [--elements caption,chart,...]

Starts bench/mount_app.py once per element (MOUNT_ELEMENT): a page with one heatmap and a two-choice
st.segmented_control, whose second view draws that element. In Chromium it switches A → B (the
element is drawn) and B → A (it is removed), --rounds times each after one warm round, and records
each switch's round trip (bench/ui_latency.py's measure: from the click to the second paint after
the rerun) and the page's main-thread script time (Chrome DevTools Protocol Performance.getMetrics,
ScriptDuration). Prints the medians and what each element adds to the switch that draws nothing.
It never asserts a time. The elements run one after another, so a change in the machine's load falls
between rows: run it twice, and read rows that differ by less than ~15 ms as equal.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ui_latency as u  # noqa: E402  (the bench's own helpers: server, Chromium, the timed step)

ELEMENTS = {
    "nothing": "nothing (the baseline)",
    "caption": "a caption",
    "markdown": "a paragraph of markdown",
    "radio": "a radio group",
    "selectbox": "a select box",
    "toggle": "a toggle",
    "export": "an Export menu (closed)",
    "link": "a Link box (closed)",
    "chart": "a 24 × 24 heatmap (st.plotly_chart)",
    "figure": "the same with its Export menu and Link box",
    "two_figures": "two such figures",
    "two_panels": "the same two maps as one figure of two panels",
}


def measure(browser, element: str, rounds: int) -> dict[str, list[tuple[float, float]]]:
    """Returns {"mount": [(round trip, script, style + layout ms)], "unmount": [...]} for one element."""
    out: dict[str, list[tuple[float, float]]] = {"mount": [], "unmount": []}
    with u.streamlit_server("bench/mount_app.py", env={"MOUNT_ELEMENT": element}) as server:
        page = u.new_page(browser, [])
        u.first_figure_ms(page, server.url + "/")
        u.settle(page)
        cdp = page.context.new_cdp_session(page)
        cdp.send("Performance.enable")
        options = page.locator('[data-testid="stMain"] .st-key-mount_view button[role="radio"]')
        for index in range(rounds + 1):  # the first round warms up
            for choice, kind in ((1, "mount"), (0, "unmount")):
                before = u.main_thread_ms(cdp)
                ms = u.timed(page, options.nth(choice).click)
                u.settle(page)
                after = u.main_thread_ms(cdp)
                if index and ms is not None:
                    out[kind].append((ms, after[0] - before[0], after[1] - before[1]))
        page.context.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--elements", default=",".join(ELEMENTS))
    args = parser.parse_args()
    elements = args.elements.split(",")
    unknown = set(elements) - set(ELEMENTS)
    if unknown:
        raise SystemExit(f"unknown elements: {', '.join(sorted(unknown))}")
    if "nothing" not in elements:
        elements.insert(0, "nothing")
    from playwright.sync_api import sync_playwright

    results = {}
    with sync_playwright() as playwright:
        browser = u.launch_chromium(playwright)
        for element in elements:
            results[element] = measure(browser, element, args.rounds)
            print(f"{element}: done", file=sys.stderr)
        browser.close()

    def med(element: str, kind: str, part: int) -> float:
        values = [v[part] for v in results[element][kind]]
        return statistics.median(values) if values else float("nan")

    base = {kind: med("nothing", kind, 0) for kind in ("mount", "unmount")}
    print(f"View switch A ↔ B, {args.rounds} switches each way per element, headless Chromium, "
          f"load average {os.getloadavg()[0]:.2f} at the end\n")
    print("| view B draws | A → B ms | + over nothing | script ms | style + layout ms | B → A ms | + over nothing |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for element in elements:
        mount, unmount = med(element, "mount", 0), med(element, "unmount", 0)
        print(f"| {ELEMENTS[element]} | {mount:.0f} | {mount - base['mount']:+.0f} | {med(element, 'mount', 1):.0f} "
              f"| {med(element, 'mount', 2):.0f} | {unmount:.0f} | {unmount - base['unmount']:+.0f} |")


if __name__ == "__main__":
    main()
