"""Load: N real Chromium sessions against one app server (or nginx in front of replicas) for a fixed time.

    .venv/bin/python bench/load.py [--sessions 16] [--seconds 180] [--json FILE]
    .venv/bin/python bench/load.py --url http://127.0.0.1:8501 --server-pids 1234,1235 ...   # e.g. tools/serve.sh

Without --url it starts `streamlit run app.py` on a free loopback port (with the glibc tunables
`make run` sets) and reads that process tree's memory and CPU; with --url it drives a server
that is already running (on 127.0.0.1 only) and reads the process trees of --server-pids.

Each session is one Playwright browser context (its own cookies, so behind nginx its own
replica), spread over --browsers Chromium processes, all driven from one asyncio loop. Sessions
arrive spread over --ramp seconds. A session loops until the time is up: it visits a random page
of the app's navigation (its first visit loads the app; later ones click the sidebar, as a user
moves between pages, and one in --reload-every reloads the whole app), waits a think time
(--think MIN MAX seconds after every action, as a user reads the figure), moves a random slider
one step, and now and then (one visit in --type-every) types odd text into a
random text box (very long text, emoji, HTML such as <img src=x onerror=alert(1)>, markdown and
LaTeX, right-to-left and zero-width characters, an empty string), and now and then (one visit
in --export-every) opens a random Export menu and downloads CSV or JSON (NPY if the record is
too large for text), or, one export in --png-every, a PNG ("PNG image", then "Save PNG").

Reported: visits; exceptions (st.exception boxes seen on a page, and JavaScript page errors);
alert dialogs (an escaped-HTML failure); hangs (no settle within --hang-seconds); lost events
(a change that brought no rerun); the median and p95 time to settle (action → the script has
rerun and is idle, every chart drawn, two frames painted; a visit counts from navigation start;
in the page's own clock); the export round trip (click → file received); the server's RSS
(VmRSS summed over the process tree, and PSS, which counts shared pages once) at the start,
after the warm-up and at the end; and the
server's CPU seconds (utime + stime of the tree, and of its reaped children) per visit.

A warm-up visits every page once before the clock starts (--no-warmup to skip it), so model
loading is not counted as load. Every loop is bounded: a session starts no new action after
--seconds, and each action waits at most --hang-seconds. It never asserts a figure.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import statistics
import sys
import time
import urllib.parse
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ui_latency import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    VIEWPORT,
    shown_pages,
    streamlit_server,
    wait_healthy,
)

ODD_TEXTS = (
    "word " * 12_000,  # far over any max_chars: the browser cuts it at the box's limit
    "x" * 60_000,  # one enormous word
    "😀🎉👩‍👩‍👧‍👦🏳️‍🌈 emoji " * 40,
    "<img src=x onerror=alert(1)> <script>alert(2)</script>",
    "",
    "**bold** _it_ `code` [link](javascript:alert(3)) $\\frac{1}{0}$ $$x$$ # heading | a | b |",
    "\u202eright to left\u200b\u200d zero\u2060width\ufeff",
    "2018年5月9日 Ünïcödé café naïve",
    "   ",
    "9 May 2018",
)

# Installed in every document before its own scripts: counts finished script runs from the
# start (a rerun counts when a record's oldValue is "running" and the app no longer runs) and
# keeps the time of the first key press / pointer press after each arm().
INIT_JS = """
(() => {
  const L = window.__load = {runs: 0, t0: null, armedAt: null, armed: false};
  L.arm = () => { L.t0 = null; L.armedAt = performance.now(); L.armed = true; return L.runs; };
  const start = () => { if (L.armed && L.t0 === null) L.t0 = performance.now(); };
  window.addEventListener('keydown', start, {capture: true});
  window.addEventListener('pointerdown', start, {capture: true});
  new MutationObserver(records => {
    for (const r of records) {
      if (r.oldValue === 'running' && r.target.getAttribute('data-test-script-state') !== 'running') { L.runs++; return; }
    }
  }).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-test-script-state'], attributeOldValue: true});
})();
"""

# Resolves when the app has finished a run after `runs`, is idle and shows its content (every
# chart drawn and at least one, or else a message box: an error, a warning, an info), two frames
# later: {ms} since the armed event (or navigation start), or {ms: null, started}. The content
# test matters: on a server's first session a run may end having drawn nothing (ui/router.py's
# rerun out of Streamlit's legacy pages/ mode), and React mounts the charts a moment after the
# script state changes.
SETTLED_JS = """
async ({runs, timeout, nav}) => {
  const L = window.__load;
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const frame = () => new Promise(r => requestAnimationFrame(r));
  const app = () => document.querySelector('[data-testid="stApp"]');
  const ready = () => {
    const charts = Array.from(document.querySelectorAll('[data-testid="stMain"] [data-testid="stPlotlyChart"]'));
    if (charts.length) return charts.every(c => { const p = c.querySelector('.js-plotly-plot'); return p && p._fullData && p._fullData.length; });
    return !!document.querySelector('[data-testid="stMain"] [data-testid="stAlertContainer"], [data-testid="stMain"] [data-testid="stException"]');
  };
  const deadline = performance.now() + timeout;
  while (performance.now() < deadline) {
    const a = app();
    if (L.runs > runs && a && a.getAttribute('data-test-script-state') === 'notRunning' && ready()) {
      await frame(); await frame();
      const t0 = nav ? 0 : (L.t0 !== null ? L.t0 : L.armedAt);
      L.armed = false;
      return {ms: performance.now() - t0};
    }
    await sleep(50);
  }
  const a = app();
  return {ms: null, started: L.runs > runs || !!(a && a.getAttribute('data-test-script-state') === 'running')};
}
"""

MAIN = '[data-testid="stMain"]'
TEXT_BOXES = f'{MAIN} [data-testid="stTextInput"] input:visible, {MAIN} [data-testid="stTextArea"] textarea:visible'
SLIDERS = f'{MAIN} [data-testid="stSlider"]:visible input[type="range"]'  # the input itself is visually hidden
EXPORT_MENUS = f'{MAIN} [data-testid="stPopoverButton"]:visible'
DATA_EXPORTS = ("CSV (weights)", "JSON (record)")


# ----------------------------------------------------------------------------- the server's process tree


def children_of() -> dict[int, list[int]]:
    """Returns {ppid: [pid, ...]} for every process in /proc."""
    tree: dict[int, list[int]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                tree[int(fields[1])].append(int(entry))
    return tree


def process_tree(roots: list[int]) -> list[int]:
    """Returns the roots and all their descendants that are alive."""
    tree, seen, todo = children_of(), [], list(roots)
    while todo:
        pid = todo.pop()
        if pid not in seen and Path(f"/proc/{pid}").exists():
            seen.append(pid)
            todo.extend(tree.get(pid, []))
    return seen


def tree_usage(roots: list[int]) -> dict[str, float]:
    """Returns {"rss_mb", "pss_mb", "cpu_s", "processes"} summed over the process trees of `roots`.

    VmRSS counts pages shared between processes (kaleido's Chromium) once per process; PSS
    shares them out, so its sum is the tree's real footprint.

    cpu_s is utime + stime of every live process plus cutime + cstime (the children it has
    reaped), so a kaleido browser that came and went still counts.
    """
    tick = os.sysconf("SC_CLK_TCK")
    rss_kb, pss_kb, ticks, pids = 0, 0, 0, process_tree(roots)
    for pid in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            rss_kb += kilobytes(Path(f"/proc/{pid}/status"), "VmRSS:")
            pss_kb += kilobytes(Path(f"/proc/{pid}/smaps_rollup"), "Pss:")
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
    return {"rss_mb": rss_kb / 1024, "pss_mb": pss_kb / 1024, "cpu_s": ticks / tick, "processes": len(pids)}


def kilobytes(path: Path, field_name: str) -> int:
    """Returns the kB value of the line starting with `field_name` in a /proc file (0 if none)."""
    for line in path.read_text().splitlines():
        if line.startswith(field_name):
            return int(line.split()[1])
    return 0


# ----------------------------------------------------------------------------- what the sessions record


@dataclass
class Tally:
    """Everything the sessions saw, shared by all of them (one asyncio thread: no locks)."""

    visits: int = 0
    settles: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))  # action -> ms
    exports: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))  # format -> ms
    hangs: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    export_failures: list[str] = field(default_factory=list)
    bench_errors: list[str] = field(default_factory=list)
    pages: Counter = field(default_factory=Counter)
    session_visits: Counter = field(default_factory=Counter)  # session number -> visits


def merged(a: Tally, b: Tally) -> Tally:
    """Returns a tally of what both saw (for the warm-ups of several replicas)."""
    out = Tally(visits=a.visits + b.visits, pages=a.pages + b.pages)
    for name in ("hangs", "lost", "exceptions", "page_errors", "dialogs", "export_failures", "bench_errors"):
        setattr(out, name, getattr(a, name) + getattr(b, name))
    return out


def first_line(error: BaseException) -> str:
    return (str(error).splitlines() or [type(error).__name__])[0][:160]


async def settled(page, runs: int, hang_ms: float, *, nav: bool) -> dict:
    """Returns SETTLED_JS's answer, or {"ms": None, "started": True} if the page itself stalls."""
    try:
        return await asyncio.wait_for(page.evaluate(SETTLED_JS, {"runs": runs, "timeout": hang_ms, "nav": nav}),
                                      timeout=hang_ms / 1000 + 15)
    except TimeoutError:
        return {"ms": None, "started": True}


def note(tally: Tally, action: str, where: str, answer: dict) -> bool:
    """Records one action's settle; returns False on a hang (the session then reloads)."""
    if answer["ms"] is not None:
        tally.settles[action].append(round(answer["ms"], 1))
        return True
    (tally.hangs if answer.get("started") else tally.lost).append(f"{action} on {where}")
    return not answer.get("started")


async def count_exceptions(page, tally: Tally, where: str, seen: int) -> int:
    """Records st.exception boxes beyond the `seen` ones already counted on this visit; returns the count now."""
    boxes = page.locator(f'{MAIN} [data-testid="stException"]')
    count = await boxes.count()
    if count > seen:
        text = first_line(Exception(await boxes.first.inner_text()))
        tally.exceptions.extend([f"{where}: {text}"] * (count - seen))
    return max(count, seen)


async def visit(page, url: str, tally: Tally, hang_ms: float, action: str = "visit") -> bool:
    """Opens `url` and waits for it to settle; returns False on a hang."""
    try:
        await page.goto(url, timeout=hang_ms)
    except Exception as error:  # noqa: BLE001 (a navigation that times out is a hang)
        tally.hangs.append(f"{action} {url}: {first_line(error)}")
        return False
    return note(tally, action, url, await settled(page, 0, hang_ms, nav=True))


NAV_LINKS = '[data-testid="stSidebarNav"] a[data-testid="stSidebarNavLink"]'


async def navigate(page, path: str, tally: Tally, hang_ms: float) -> bool:
    """Clicks the page's link in the sidebar, as a user moves between pages (one rerun of the
    same session, no reload of the app's scripts); returns False on a hang."""
    links = page.locator(NAV_LINKS)
    link = links.first if not path else links.and_(page.locator(f'[href$="/{path}"]')).first
    runs = await page.evaluate("() => window.__load.arm()")
    try:
        await link.click(timeout=hang_ms)
    except Exception as error:  # noqa: BLE001 (a link that never becomes clickable is a hang)
        tally.hangs.append(f"visit {path or 'home'}: {first_line(error)}")
        return False
    return note(tally, "visit", path or "home", await settled(page, runs, hang_ms, nav=False))


async def move_slider(page, rng: random.Random, tally: Tally, where: str, hang_ms: float) -> bool:
    """Presses one arrow key on a random slider (towards the side with room); returns False on a hang."""
    sliders = page.locator(SLIDERS)
    count = await sliders.count()
    if not count:
        return True
    thumb = sliders.nth(rng.randrange(count))
    state = await thumb.evaluate("el => [Number(el.value), Number(el.max)]")
    runs = await page.evaluate("() => window.__load.arm()")
    await thumb.press("ArrowRight" if state[0] < state[1] else "ArrowLeft")
    return note(tally, "slider", where, await settled(page, runs, hang_ms, nav=False))


async def type_text(page, rng: random.Random, tally: Tally, where: str, hang_ms: float) -> bool:
    """Types an odd text into a random text box and submits it; returns False on a hang."""
    boxes = page.locator(TEXT_BOXES)
    count = await boxes.count()
    if not count:
        return True
    box = boxes.nth(rng.randrange(count))
    before = await box.input_value()
    text = rng.choice(ODD_TEXTS)
    await box.fill(text)
    if await box.input_value() == before:  # no change, no rerun: nothing to measure
        return True
    runs = await page.evaluate("() => window.__load.arm()")
    is_area = await box.evaluate("el => el.tagName === 'TEXTAREA'")
    await box.press("Control+Enter" if is_area else "Enter")
    return note(tally, "type", where, await settled(page, runs, hang_ms, nav=False))


async def export(page, rng: random.Random, tally: Tally, where: str, png_every: int, hang_ms: float) -> None:
    """Opens a random Export menu and downloads one format; records click → file received."""
    menus = page.locator(EXPORT_MENUS).filter(has_text="Export")
    count = await menus.count()
    if not count:
        return
    await menus.nth(rng.randrange(count)).click()
    body = page.locator('[data-testid="stPopoverBody"]:visible')
    await body.first.wait_for(timeout=10_000)
    try:
        if rng.randrange(png_every) == 0:
            await export_png(page, body, tally, where, hang_ms)
        else:
            labels = [x for x in DATA_EXPORTS if await body.get_by_role("button", name=x).is_enabled()]
            label = rng.choice(labels) if labels else "NPY (weights array)"
            start = time.perf_counter()
            async with page.expect_download(timeout=hang_ms) as download:
                await body.get_by_role("button", name=label).click()
            await (await download.value).path()
            tally.exports[label.split()[0].lower()].append(round((time.perf_counter() - start) * 1000, 1))
    except Exception as error:  # noqa: BLE001 (a failed export is a finding, not a crash of the bench)
        tally.export_failures.append(f"{where}: {first_line(error)}")
    with contextlib.suppress(Exception):
        await page.keyboard.press("Escape")


async def export_png(page, body, tally: Tally, where: str, hang_ms: float) -> None:
    """'PNG image' renders on the server (a rerun), then 'Save PNG' downloads it."""
    make = body.get_by_role("button", name="PNG image")
    if not await make.is_enabled():
        tally.export_failures.append(f"{where}: PNG export disabled")
        return
    start = time.perf_counter()
    await make.click()
    save = page.get_by_role("button", name="Save PNG")
    busy = page.locator('[data-testid="stPopoverBody"] [data-testid="stAlertContentError"]')
    await save.or_(busy).first.wait_for(timeout=hang_ms)
    if not await save.count():  # the exporter answered "busy, try again" (one line, no hang)
        tally.export_failures.append(f"{where}: PNG: {first_line(Exception(await busy.first.inner_text()))}")
        return
    async with page.expect_download(timeout=hang_ms) as download:
        await save.click()
    await (await download.value).path()
    tally.exports["png"].append(round((time.perf_counter() - start) * 1000, 1))


async def think(rng: random.Random, args) -> None:
    """Waits as a user reads the figure before the next action: uniform in --think (0 0: none)."""
    low, high = args.think
    if high > 0:
        await asyncio.sleep(rng.uniform(low, high))


async def session(number: int, context, url: str, pages: list[tuple[str, str]], args, deadline: float, tally: Tally):
    """One user: random pages, a slider step each, odd text and exports now and then, until `deadline`."""
    rng = random.Random(args.seed * 1000 + number)
    hang_ms = args.hang_seconds * 1000
    page = await context.new_page()
    page.on("pageerror", lambda error: tally.page_errors.append(first_line(error)))

    async def on_dialog(dialog):
        tally.dialogs.append(f"{dialog.type}: {dialog.message[:80]}")
        await dialog.dismiss()

    page.on("dialog", on_dialog)
    await asyncio.sleep(rng.random() * args.ramp)  # a class arrives over --ramp seconds, not in one instant
    loaded, current = False, None
    while time.monotonic() < deadline:
        title, path = rng.choice([p for p in pages if p[1] != current] or pages)
        where = path or "home"
        try:
            # A session's first visit fetches the app's scripts into an empty browser cache; later
            # visits click the sidebar (one visit in --reload-every reloads the whole app instead).
            reload = bool(args.reload_every) and rng.randrange(args.reload_every) == 0
            stays = False
            if not loaded or reload:
                action = "visit" if tally.session_visits[number] else "first visit"
                loaded = await visit(page, f"{url}/{path}", tally, hang_ms, "reload" if loaded else action)
            elif len(pages) == 1:  # a one-page app (the floor): nowhere to go, the session moves a slider
                stays = True
            else:
                loaded = await navigate(page, path, tally, hang_ms)
            current = path if loaded else None
            if not loaded:
                continue
            if not stays:
                tally.session_visits[number] += 1
                tally.visits += 1
                tally.pages[where] += 1
            seen = await count_exceptions(page, tally, where, 0)
            await think(rng, args)
            if time.monotonic() < deadline and not await move_slider(page, rng, tally, where, hang_ms):
                loaded = False
                continue
            await think(rng, args)
            seen = await count_exceptions(page, tally, where, seen)
            if time.monotonic() < deadline and rng.randrange(args.type_every) == 0:
                if not await type_text(page, rng, tally, where, hang_ms):
                    loaded = False
                    continue
                await think(rng, args)
                seen = await count_exceptions(page, tally, where, seen)
            if time.monotonic() < deadline and rng.randrange(args.export_every) == 0:
                await export(page, rng, tally, where, args.png_every, hang_ms)
                await count_exceptions(page, tally, where, seen)
        except Exception as error:  # noqa: BLE001 (the bench reports its own failures and goes on)
            tally.bench_errors.append(f"{where}: {first_line(error)}")
            loaded = False
            await asyncio.sleep(0.5)
    await page.close()


async def navigation_pages(browser, url: str, hang_ms: float) -> list[tuple[str, str]]:
    """Returns (title, path) of every page the running app's navigation shows.

    The home page is loaded twice: on a freshly started server the first session may still
    see Streamlit's legacy pages/ listing (every file in pages/, and app itself).
    """
    context = await browser.new_context(viewport=VIEWPORT)
    await context.add_init_script(INIT_JS)
    page = await context.new_page()
    for _ in range(2):
        await visit(page, url + "/", Tally(), max(hang_ms, 300_000))
    links = page.locator('[data-testid="stSidebarNav"] a[data-testid="stSidebarNavLink"]')
    found = []
    for link in await links.all():
        path = urllib.parse.urlparse(await link.get_attribute("href")).path.strip("/")
        title = await link.locator('[data-testid="stMarkdownContainer"]').first.inner_text()
        found.append((title.strip(), path))
    await context.close()
    return found


async def warm_up(browser, url: str, pages: list[tuple[str, str]], hang_ms: float) -> Tally:
    """Visits every page once, so the models are loaded before the clock starts; returns what it saw."""
    context = await browser.new_context(viewport=VIEWPORT)
    await context.add_init_script(INIT_JS)
    page = await context.new_page()
    seen = Tally()
    page.on("pageerror", lambda error: seen.page_errors.append(first_line(error)))
    for title, path in pages:
        print(f"warm-up: {title} ({url})", file=sys.stderr)
        where = path or "home"
        if await visit(page, f"{url}/{path}", seen, max(hang_ms, 300_000)):
            seen.visits += 1
            await count_exceptions(page, seen, where, 0)
    await context.close()
    return seen


async def drive(url: str, roots: list[int], args) -> dict:
    """Returns the run's figures: warm-up, then args.sessions sessions for args.seconds."""
    from playwright.async_api import async_playwright

    report: dict = {"url": url, "sessions": args.sessions, "seconds": args.seconds, "cpus": os.cpu_count(),
                    "ramp": args.ramp, "think": list(args.think), "reload_every": args.reload_every}
    report["usage_start"] = tree_usage(roots) if roots else None
    async with async_playwright() as playwright:
        browsers = [await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                    for _ in range(args.browsers or max(1, math.ceil(args.sessions / 8)))]
        pages = await navigation_pages(browsers[0], url, args.hang_seconds * 1000)
        if not pages:  # no sidebar: a one-page app such as the floor, or else the registry's pages
            pages = [("floor", "")] if args.app != "app.py" else shown_pages(None)
        report["pages"] = [path or "home" for _, path in pages]
        report["warmup"] = None
        if not args.no_warmup:  # each replica loads its own models: warm each one directly if given
            for warm_url in [loopback_only(u) for u in args.warmup_urls.split(",") if u.strip()] or [url]:
                seen = await warm_up(browsers[0], warm_url, pages, args.hang_seconds * 1000)
                report["warmup"] = seen if report["warmup"] is None else merged(report["warmup"], seen)
        contexts = []
        for i in range(args.sessions):
            context = await browsers[i % len(browsers)].new_context(viewport=VIEWPORT, accept_downloads=True)
            await context.add_init_script(INIT_JS)
            contexts.append(context)
        tally = Tally()
        report["usage_before"] = tree_usage(roots) if roots else None
        report["loadavg_before"] = os.getloadavg()
        started = time.monotonic()
        deadline = started + args.seconds
        await asyncio.gather(*(session(i, c, url, pages, args, deadline, tally) for i, c in enumerate(contexts)))
        report["wall_s"] = time.monotonic() - started
        report["usage_after"] = tree_usage(roots) if roots else None
        report["loadavg_after"] = os.getloadavg()
        for context in contexts:
            await context.close()
        for browser in browsers:
            await browser.close()
    report["tally"] = tally
    return report


# ----------------------------------------------------------------------------- printing


def p95(values: list[float]) -> float | None:
    """Returns the nearest-rank 95th percentile."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def seconds(ms: float | None) -> str:
    return "—" if ms is None else f"{ms / 1000:.2f} s"


def print_report(report: dict) -> None:
    """Prints the run as a markdown table."""
    tally: Tally = report["tally"]
    warmup: Tally | None = report.get("warmup")
    every = [ms for values in tally.settles.values() for ms in values]
    rows = [
        ("server", report["url"]),
        ("sessions × seconds", f"{report['sessions']} × {report['seconds']} s (ran {report['wall_s']:.0f} s)"),
        ("arrivals / think time / reloads", f"over {report['ramp']:.0f} s / {report['think'][0]:g}–{report['think'][1]:g} s "
                                            f"after each action / one visit in {report['reload_every'] or '∞'}"),
        ("load average before / after", f"{report['loadavg_before'][0]:.2f} / {report['loadavg_after'][0]:.2f} "
                                         f"({report['cpus']} CPUs)"),
        ("warm-up (each page once, before the clock)", "skipped" if warmup is None else
         f"{warmup.visits} visits, {len(warmup.exceptions)} exceptions, {len(warmup.page_errors)} page errors, "
         f"{len(warmup.hangs)} hangs"),
        ("visits", f"{tally.visits} ({', '.join(f'{k} {v}' for k, v in sorted(tally.pages.items()))})"),
        ("exceptions (st.exception boxes)", len(tally.exceptions)),
        ("page errors (JavaScript)", len(tally.page_errors)),
        ("alert dialogs", len(tally.dialogs)),
        (f"hangs (no settle in {report['hang_seconds']:.0f} s)", len(tally.hangs)),
        ("lost events (no rerun)", len(tally.lost)),
        ("settle median / p95, all actions", f"{seconds(median(every))} / {seconds(p95(every))} (n = {len(every)})"),
    ]
    for action in ("first visit", "visit", "reload", "slider", "type"):
        values = tally.settles.get(action, [])
        rows.append((f"settle median / p95, {action}", f"{seconds(median(values))} / {seconds(p95(values))} (n = {len(values)})"))
    for fmt, values in sorted(tally.exports.items()):
        rows.append((f"export round trip, {fmt}", f"{seconds(median(values))} median, {seconds(p95(values))} p95 (n = {len(values)})"))
    rows.append(("export failures", len(tally.export_failures)))
    start, before, after = report["usage_start"], report["usage_before"], report["usage_after"]
    if before and after:
        growth = after["rss_mb"] - before["rss_mb"]
        rows.append(("server RSS start / after warm-up / end", f"{start['rss_mb']:.0f} / {before['rss_mb']:.0f} / "
                     f"{after['rss_mb']:.0f} MB (growth under load {growth:+.0f} MB; {after['processes']} processes)"))
        rows.append(("server PSS start / after warm-up / end", f"{start['pss_mb']:.0f} / {before['pss_mb']:.0f} / "
                     f"{after['pss_mb']:.0f} MB (growth {after['pss_mb'] - before['pss_mb']:+.0f} MB)"))
        cpu = after["cpu_s"] - before["cpu_s"]
        per_visit = f"{cpu / tally.visits:.2f}" if tally.visits else "—"
        rows.append(("server CPU", f"{cpu:.1f} s in {report['wall_s']:.0f} s ({cpu / report['wall_s']:.2f} cores); "
                     f"**{per_visit} s per visit**"))
    else:
        rows.append(("server RSS / CPU", "not read (give --server-pids)"))
    rows.append(("bench errors", len(tally.bench_errors)))
    print("| figure | value |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")
    for name, items in (("warm-up exceptions", warmup.exceptions if warmup else []), ("exceptions", tally.exceptions), ("page errors", tally.page_errors), ("hangs", tally.hangs),
                        ("lost events", tally.lost), ("export failures", tally.export_failures),
                        ("bench errors", tally.bench_errors), ("dialogs", tally.dialogs)):
        if items:
            common = Counter(items).most_common(3)
            print(f"\n{name}: " + "; ".join(f"{text} (×{n})" for text, n in common))


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def loopback_only(url: str) -> str:
    """Returns `url` without a trailing slash; refuses a host other than 127.0.0.1 / localhost."""
    host = urllib.parse.urlparse(url).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit(f"--url must be a loopback address, not {host}")
    return url.rstrip("/")


def session_arguments(description: str, clients: str) -> argparse.ArgumentParser:
    """Returns a parser with the options bench/load.py and bench/load_protocol.py share; `clients`
    names what a session is ("browser", "websocket")."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--sessions", type=int, default=16, help=f"{clients} sessions (default 16)")
    parser.add_argument("--seconds", type=float, default=180, help="how long the sessions run (default 180)")
    parser.add_argument("--url", help="an already running server on 127.0.0.1 (default: start `streamlit run --app`)")
    parser.add_argument("--server-pids", default="", help="with --url: comma-separated PIDs whose process trees are the server")
    parser.add_argument("--app", default="app.py", help="the script to serve without --url (bench/floor_app.py: "
                        "Streamlit's floor, one slider and one heatmap, under the same sessions)")
    parser.add_argument("--hang-seconds", type=float, default=60, help="an action not settled after this is a hang (default 60)")
    parser.add_argument("--type-every", type=int, default=4, help="one visit in N types odd text (default 4)")
    parser.add_argument("--ramp", type=float, default=30, help="sessions arrive spread over this many seconds (default 30)")
    parser.add_argument("--think", type=float, nargs=2, default=(1.0, 3.0), metavar=("MIN", "MAX"),
                        help="seconds a session waits after each action, uniform in [MIN, MAX] (default 1 3; 0 0: none)")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the sessions' choices")
    parser.add_argument("--no-warmup", action="store_true", help="do not visit every page once before the clock starts")
    parser.add_argument("--json", type=Path, help="also write the raw figures to this file")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = session_arguments(__doc__.splitlines()[0], "browser")
    parser.add_argument("--browsers", type=int, default=0, help="Chromium processes (default: one per 8 sessions)")
    parser.add_argument("--export-every", type=int, default=4, help="one visit in N exports (default 4)")
    parser.add_argument("--png-every", type=int, default=10, help="one export in N is a PNG (default 10)")
    parser.add_argument("--reload-every", type=int, default=8, help="one visit in N reloads the app instead of "
                        "clicking the sidebar (default 8; 0: only the first visit loads it)")
    parser.add_argument("--warmup-urls", default="", help="comma-separated URLs to warm up instead of --url "
                        "(each replica behind nginx, as tools/serve.sh prints)")
    return run_sessions(parser.parse_args(argv), drive, print_report)


def run_sessions(args, drive, print_report) -> int:
    """Runs `drive(url, server_pids, args)` against --url or a fresh `streamlit run --app`, prints its
    report and writes it to --json (the shared main of bench/load.py and bench/load_protocol.py)."""
    if args.url:
        url = loopback_only(args.url)
        wait_healthy(url, None, 30)
        report = asyncio.run(drive(url, [int(p) for p in args.server_pids.split(",") if p.strip()], args))
    else:
        with streamlit_server(args.app, timeout=300) as server:
            report = asyncio.run(drive(server.url, [server.proc.pid], args))
            report["server_log_tracebacks"] = server.log.read_text(errors="replace").count("Traceback")
            report["server_log"] = str(server.log)
    report["hang_seconds"] = args.hang_seconds
    print_report(report)
    if report.get("server_log_tracebacks"):
        print(f"\nthe server logged {report['server_log_tracebacks']} tracebacks ({report['server_log']})")
    if args.json:
        for name in ("tally", "warmup"):
            if report.get(name) is not None:
                report[name] = json.loads(json.dumps(vars(report[name]), default=list))
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
