"""What a section's view switch costs the browser on every rerun: st.tabs against st.segmented_control.

    .venv/bin/python bench/view_switch.py [--steps 12] [--rounds 2]

Starts bench/floor_app.py once per layout, FLOOR_SECTION = fragment, tabs and segmented: the slider
and the 64 × 64 heatmap in a fragment (st.fragment), that fragment's content in the first of two
st.tabs, and the same under a two-choice st.segmented_control. In Chromium it presses ArrowRight on
the slider --steps times per round, the rounds alternating over the layouts so that the machine's
load falls on all alike. For each step it records the round trip (bench/ui_latency.py's measure:
from the key press to the second paint after the rerun) and the page's main-thread script time
(the Chrome DevTools Protocol's Performance.getMetrics, ScriptDuration, in thread time, read
before the step and after it has settled). Prints the medians and their ratio to the fragment
alone. It never asserts a time.

The app's pages switch views with a segmented control (ui.widgets.view_switch) because of what
this measures: the tab bar is drawn again on every rerun of the fragment around it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ui_latency as u  # noqa: E402  (the bench's own helpers: server, Chromium, the timed step)

LAYOUTS = {
    "fragment": "slider and heatmap in a fragment",
    "tabs": "the same in the first of two st.tabs",
    "segmented": "the same under a two-choice st.segmented_control",
}


def measure(pw, layout: str, steps: int) -> tuple[list[float], list[float]]:
    """Returns (round trips, script ms) of `steps` slider steps on a fresh server and page."""
    with u.streamlit_server(u.FLOOR_APP, env={"FLOOR_SECTION": layout}) as app:
        browser = u.launch_chromium(pw)
        try:
            page = u.new_page(browser, [])
            u.first_figure_ms(page, app.url)
            u.settle(page)
            slider = next(c for c in u.visible_controls(page) if c["kind"] == "slider")
            locator = u.control_locator(page, slider)
            actions = u.slider_steps(page, locator, steps + 2)
            for action in actions[:2]:  # warm-up: the first steps mount what later steps reuse
                u.timed(page, action)
                u.settle(page)
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
            trips, script = [], []
            for action in actions[2:]:
                before = u.main_thread_ms(cdp)[0]
                ms = u.timed(page, action)
                u.settle(page)
                time.sleep(0.3)  # let the second paint's tasks finish before reading the counter
                if ms is not None:
                    trips.append(ms)
                    script.append(u.main_thread_ms(cdp)[0] - before)
            return trips, script
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12, help="slider steps per layout and round")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, alternating over the layouts")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    trips = {layout: [] for layout in LAYOUTS}
    script = {layout: [] for layout in LAYOUTS}
    with sync_playwright() as pw:
        for _ in range(args.rounds):
            for layout in LAYOUTS:
                t, s = measure(pw, layout, args.steps)
                trips[layout] += t
                script[layout] += s
    base_trip, base_script = statistics.median(trips["fragment"]), statistics.median(script["fragment"])
    print(f"Slider steps on bench/floor_app.py, {args.rounds} rounds × {args.steps} steps per layout, alternating.")
    print()
    print("| layout | round trip ms | × fragment | script ms | × fragment | n |")
    print("|---|---:|---:|---:|---:|---:|")
    for layout, text in LAYOUTS.items():
        trip, ms = statistics.median(trips[layout]), statistics.median(script[layout])
        print(f"| {text} | {trip:.0f} | {trip / base_trip:.2f} | {ms:.1f} | {ms / base_script:.2f} | {len(trips[layout])} |")


if __name__ == "__main__":
    main()
