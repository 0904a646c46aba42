"""Each step of a page's view switch, timed in Chromium, for one or more checkouts side by side.

    .venv/bin/python bench/view_transitions.py [--page self_attention] [--key sa_view] [--rounds 3]
        [--alternations 3] [--root CHECKOUT ...]

bench/ui_latency.py reports one median per control; a view switch's steps differ a lot (a view that
draws three charts against one that draws one), and that median is whichever step lands in the
middle. This bench clicks through the row of view buttons (`.st-key-KEY`) in order, wrapping
round, `--rounds` times after one untimed round, and prints each step's median round trip (the
same clock as ui_latency.py: click → rerun → the second painted frame) and the main thread's
script time in that step (DevTools Performance.getMetrics).

With several --root checkouts (default: this one) each gets its own fresh server, and the checkouts
take turns, `--alternations` times, so that drift in the machine's load falls on all of them. It
prints a table of medians; it never asserts a time.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_ui_latency(root: Path):
    """bench/ui_latency.py of `root`: its server starts that checkout's app."""
    spec = importlib.util.spec_from_file_location(f"ui_latency_{abs(hash(root))}", root / "bench" / "ui_latency.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def run_once(root: Path, page_path: str, key: str, rounds: int) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """(from view, to view) → [(round trip ms, script ms)] for one fresh server of `root`."""
    from playwright.sync_api import sync_playwright

    uil = load_ui_latency(root)
    steps: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    with sync_playwright() as pw, uil.streamlit_server("app.py", timeout=300) as app:
        browser = uil.launch_chromium(pw)
        page = uil.new_page(browser, [])
        uil.first_figure_ms(page, f"{app.url}/{page_path}")
        uil.settle(page)
        cdp = page.context.new_cdp_session(page)
        cdp.send("Performance.enable")
        buttons = page.locator(f'[data-testid="stMain"] .st-key-{key} button[role="radio"]')
        labels = [text.strip() for text in buttons.all_inner_texts()]
        order = [*range(1, len(labels)), 0]
        for index in order:  # one untimed round: every view drawn once
            uil.timed(page, buttons.nth(index).click)
            uil.settle(page)
        for _ in range(rounds):
            for index in order:
                before = uil.selected_index(buttons)
                script = uil.main_thread_ms(cdp)[0]
                took = uil.timed(page, buttons.nth(index).click)
                uil.settle(page)
                if took is not None:
                    steps[(labels[before], labels[index])].append((took, uil.main_thread_ms(cdp)[0] - script))
        browser.close()
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", default="self_attention", help="the page's URL path (default self_attention)")
    parser.add_argument("--key", default="sa_view", help="the key of its row of view buttons (default sa_view)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds through every view per server (default 3)")
    parser.add_argument("--alternations", type=int, default=3, help="servers per checkout, taking turns (default 3)")
    parser.add_argument("--root", type=Path, action="append", help="a checkout to measure (repeatable; default this one)")
    args = parser.parse_args()
    roots = [root.resolve() for root in (args.root or [ROOT])]
    found: dict[Path, dict[tuple[str, str], list[tuple[float, float]]]] = {root: defaultdict(list) for root in roots}
    for turn in range(args.alternations):
        for root in roots:
            print(f"{root} ({turn + 1} of {args.alternations})…", file=sys.stderr)
            for step, times in run_once(root, args.page, args.key, args.rounds).items():
                found[root][step] += times
    print(f"View switch steps of /{args.page} (buttons .st-key-{args.key}), Chromium headless; {args.rounds} rounds "
          f"× {args.alternations} servers per checkout. Medians: round trip ms, and main-thread script ms.\n")
    print("| step | " + " | ".join(f"{root.name}: round trip | script" for root in roots) + " | n |")
    print("|---|" + "---:|---:|" * len(roots) + "---:|")
    for step in found[roots[0]]:
        cells = []
        for root in roots:
            times = found[root].get(step, [])
            cells += [f"{statistics.median(t[0] for t in times):.0f}", f"{statistics.median(t[1] for t in times):.0f}"] if times else ["–", "–"]
        print(f"| {step[0]} → {step[1]} | " + " | ".join(cells) + f" | {len(found[roots[0]][step])} |")


if __name__ == "__main__":
    main()
