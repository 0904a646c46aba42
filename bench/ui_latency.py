"""UI latency in real Chromium: control → rerun → two paints, on every page, against a trivial floor.

    .venv/bin/python bench/ui_latency.py [--pages home,playground] [--repeat 5] [--max-controls 8] [--json FILE]

What it does, in one run:

1. Starts bench/floor_app.py (one slider, one 64 × 64 plotly heatmap) with `streamlit run` on a
   free loopback port and measures it: cold first render (server start → first figure painted),
   warm render (page load → first figure painted) and the slider's round trip. The floor runs
   with stock Streamlit's runner settings (a full garbage collection after every run, which the
   app's config turns off); the same floor with the app's config is measured beside it, and the
   table gives the ratio to both.
2. Starts `streamlit run app.py` fresh on another free port, opens the first page asked for
   (cold first render), then, for every page the app's navigation shows (models/registry.py
   PAGES whose file exists; home is "/"): its first visit, its warm render, and the round trip of
   every visible slider, select box, radio group, row of pills, toggle/checkbox and number input, up
   to --max-controls per page (sliders first, then select boxes, radios, pills, toggles, number inputs).
   Just before each control, the floor's slider is stepped as many times on a floor page kept
   open beside the app (BesideFloor; --no-beside turns it off): the floor under the same load,
   seconds from the control, where the run's floor can be ten minutes away.
3. Measures the floor's slider again (drift check) and prints markdown tables of medians and
   their ratio to the floor, and to the floor measured beside each control. It never asserts a time.

The floor is the slider's (issue 12's definition). Beside it, the same floor app with a select box,
a radio group, a row of pills, a checkbox or a number input in the slider's place (FLOOR_WIDGET) gives each kind
of control its own floor, and the table gives the ratio to that too: Streamlit's own round trip
differs by widget (a select box's menu opens and closes around its change).

The round trip, as issue 12 defines it: a MutationObserver on `[data-testid=stApp]`'s
`data-test-script-state` is armed before the key press or click; the clock starts at the
keydown/pointerdown event in the page; a rerun counts when a record's oldValue is "running" (or
"rerunRequested", should React fold a short run's "running" into one update) and the app is no longer running (both changes can arrive in one callback), or, for a
run whose "running" React folded away entirely, once its script_finished message has come and the app says
it is not running (tools/ui_timing.py's FINISHED_INIT); the clock stops in the second requestAnimationFrame callback after that. All times are in the page's own clock.

Sliders step with ArrowRight (ArrowLeft only if there is no room to the right), always in one
direction per control: Streamlit sometimes sends no rerun for a keyboard change back to a value
the slider had a moment before (/work/shared/NOTES.md). Select boxes take the next option,
radios and pills the next choice (radio choices that open a file uploader are skipped), toggles flip, number
inputs step up (down at the top; a box too narrow for its − and + buttons steps up with ArrowUp). After its
repetitions a select box, radio, row of pills or toggle is put back to the value it had, so the page keeps its default layout for the next control. A control
whose first change leaves every figure's data and layout as they were is reported as skipped
("no figure changed"); otherwise the table says how many figures that change redrew (each one
costs the browser about a third of a floor, docs/PERFORMANCE.md). Buttons, text boxes, file
uploaders, downloads and tabs are not measured (the app's view switches are rows of buttons, measured
as pills).

A second table splits each round trip where it went (SPLIT_JS): the browser until the change is
sent on the websocket, the server from then until the run's last message arrives, and the
browser from that message until the second paint, with the floor's split beside them.

Run it on a quiet machine: the browser's own rendering shares the cores with the server.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from models.registry import PAGES  # noqa: E402  (numpy only: no jax, no streamlit)
from tools.ui_timing import (  # noqa: E402
    CHROMIUM_ARGS,
    FINISHED_INIT,
    RERUN_TIMEOUT_MS,
    ControlResult,
    PageResult,
    fmt,
    median,
    stop_server,
    wait_healthy,
    within_line,
)

CHROMIUM = os.environ.get("BROWSER_PATH", "/usr/bin/chromium")
VIEWPORT = {"width": 1400, "height": 1300}
# As the Makefile exports for `make run` (docs/PERFORMANCE.md): the server is measured as served.
GLIBC_TUNABLES = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295:glibc.malloc.arena_max=1"
FLOOR_APP = "bench/floor_app.py"
# The floor runs as stock Streamlit runs a trivial app: Streamlit's own full garbage collection after
# every script run (runner.postScriptGC), which the app's .streamlit/config.toml turns off. The same
# floor with the app's config is measured beside it ("tuned floor").
STOCK_RUNNER = ("--runner.postScriptGC", "true")
LOG_DIR = ROOT / "test-artifacts"
LOAD_TIMEOUT_MS = 300_000  # a first visit on a busy machine may load MiniLM and compile
PAUSE_S = 0.3  # between repetitions, after the app is idle: lets a slider's keyboard state settle
CONTROL_KINDS = (  # measured in this order of kinds, each in page order
    ("slider", "stSlider"),
    ("select", "stSelectbox"),
    ("radio", "stRadio"),
    ("pills", "stButtonGroup"),  # st.pills and st.segmented_control
    ("toggle", "stCheckbox"),
    ("number", "stNumberInput"),
)
SKIPPED_CHOICE = re.compile(r"upload", re.IGNORECASE)  # radio choices that open a file uploader

# ----------------------------------------------------------------------------- page scripts

# Installed in every document before its own scripts: the time (ms since navigation start) at
# which the first plotly figure has data and two frames have been painted after it.
FIRST_FIGURE_INIT = """
(() => {
  window.__firstFigure = null;
  const look = () => {
    const plot = document.querySelector('.js-plotly-plot');
    if (plot && plot._fullData && plot._fullData.length) {
      requestAnimationFrame(() => requestAnimationFrame(() => { window.__firstFigure = performance.now(); }));
    } else {
      requestAnimationFrame(look);
    }
  };
  requestAnimationFrame(look);
})();
"""

ARM_JS = """
() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const m = {t0: null, ms: null, via: null};
  window.__sent = []; window.__received = [];
  let finish;
  m.done = new Promise(resolve => { finish = resolve; });
  const start = () => { if (m.t0 === null) m.t0 = performance.now(); };
  const events = ['keydown', 'pointerdown'];
  for (const type of events) window.addEventListener(type, start, {capture: true});
  let ended = false;
  const end = via => {
    if (ended) return;
    ended = true;
    observer.disconnect();
    window.__onScriptFinished = null;
    for (const type of events) window.removeEventListener(type, start, {capture: true});
    requestAnimationFrame(() => requestAnimationFrame(() => { m.ms = performance.now() - m.t0; m.via = via; finish(m.ms); }));
  };
  const observer = new MutationObserver(records => {
    if (m.t0 === null || !records.some(r => r.oldValue === 'running' || r.oldValue === 'rerunRequested')) return;
    if (app.getAttribute('data-test-script-state') === 'running') return;
    end('state');
  });
  observer.observe(app, {attributes: true, attributeFilter: ['data-test-script-state'], attributeOldValue: true});
  // The folded case: the run's script_finished message came, and once React has had a task to
  // apply it the app says it is not running, without the attribute having changed in between.
  window.__onScriptFinished = () => {
    if (m.t0 === null) return;
    setTimeout(() => {
      const look = () => {
        if (ended) return;
        const state = app.getAttribute('data-test-script-state');
        if (state === 'running' || state === 'rerunRequested') { requestAnimationFrame(look); return; }
        end('message');
      };
      requestAnimationFrame(look);
    }, 0);
  };
  window.__bench = m;
}
"""

WAIT_JS = """
(timeout) => Promise.race([window.__bench.done, new Promise(resolve => setTimeout(() => resolve(null), timeout))])
"""

# A cheap digest of each figure's data and layout (template left out), comma-separated in page
# order, to tell whether a control changed what is drawn and how many figures it changed. Long arrays are sampled; strings are hashed in full up to 20k.
FINGERPRINT_JS = """
() => {
  let h = 0, budget = 400000;
  const mix = v => { h = (Math.imul(h ^ v, 16777619) + 0x9e3779b9) | 0; };
  const walk = (v, depth) => {
    if (budget-- <= 0 || depth > 12 || v === null || v === undefined) return;
    if (typeof v === 'number') { mix(Math.round(v * 1e6) | 0); return; }
    if (typeof v === 'boolean') { mix(v ? 1 : 2); return; }
    if (typeof v === 'string') { mix(v.length); for (let i = 0; i < Math.min(v.length, 20000); i++) mix(v.charCodeAt(i)); return; }
    if (ArrayBuffer.isView(v) || Array.isArray(v)) {
      mix(v.length); const stride = Math.max(1, Math.floor(v.length / 5000));
      for (let i = 0; i < v.length; i += stride) walk(v[i], depth + 1); return;
    }
    if (typeof v === 'object') {
      for (const k of Object.keys(v).sort()) {
        if (k === 'template' || k.startsWith('_')) continue; mix(k.length); walk(v[k], depth + 1);
      }
    }
  };
  const plots = Array.from(document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot'));
  const each = [];
  for (const p of plots) { h = 0; budget = 400000; walk(p.data, 0); walk(p.layout, 0); each.push(h); }
  return each.join(',');
}
"""

CONTROLS_JS = """
(kinds) => {
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  const out = [];
  for (const [kind, testid] of kinds) {
    main.querySelectorAll(`[data-testid="${testid}"]`).forEach((el, index) => {
      if (el.closest('[data-testid="stPopoverBody"]')) return;
      const box = el.closest('[data-testid="stElementContainer"]');
      const keyClass = box ? Array.from(box.classList).find(c => c.startsWith('st-key-')) : null;
      const labelEl = el.querySelector('[data-testid="stWidgetLabel"]');
      const input = el.querySelector('input');
      out.push({
        kind, testid, index,
        key: keyClass ? keyClass.slice('st-key-'.length) : null,
        label: ((labelEl ? labelEl.innerText : (input && input.getAttribute('aria-label')) || el.innerText) || '').trim(),
        visible: el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden',
        disabled: !!(input && input.disabled),
      });
    });
  }
  return out;
}
"""

SLIDER_STATE_JS = """
el => ({value: Number(el.value), min: Number(el.min), max: Number(el.max), step: Number(el.step) || 1})
"""

# ----------------------------------------------------------------------------- servers


def free_port() -> int:
    """Returns a free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """A `streamlit run` process on 127.0.0.1 and the wall-clock time (s) it was started at."""

    proc: subprocess.Popen
    url: str
    started_at: float
    log: Path


def server_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Returns the environment `make run` gives the app (glibc tunables unless already set), plus `extra`."""
    return {**os.environ, "PYTHONUNBUFFERED": "1", "GLIBC_TUNABLES": os.environ.get("GLIBC_TUNABLES", GLIBC_TUNABLES),
            **(extra or {})}


@contextlib.contextmanager
def streamlit_server(script: str, *, timeout: float = 120.0, options: Sequence[str] = (),
                     env: dict[str, str] | None = None, cwd: Path = ROOT) -> Iterator[Server]:
    """Yields a healthy `streamlit run script` on a free loopback port (with extra command-line
    `options`, e.g. ("--runner.postScriptGC", "true"), and extra environment `env`), started in `cwd`
    (another checkout for bench/control_pairs.py); stops it on exit."""
    port = free_port()
    LOG_DIR.mkdir(exist_ok=True)
    log_path = LOG_DIR / f"bench-{Path(script).stem}-{port}.log"
    started_at = time.time()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false", *options],
            cwd=cwd, env=server_env(env), stdout=log, stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(url, proc, timeout, log_path)
            yield Server(proc, url, started_at, log_path)
        finally:
            stop_server(proc)


def launch_chromium(playwright):
    """Returns a headless Chromium launched with the browser tests' flags."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


# ----------------------------------------------------------------------------- measuring


def css_class(key: str) -> str:
    """Returns `key` escaped for a CSS class selector (Streamlit's st-key-<key> class)."""
    return re.sub(r"([^A-Za-z0-9_-])", r"\\\1", key)


def control_locator(page, control: dict):
    """Returns a locator of the control's widget element (by its key class, else by position)."""
    if control["key"]:
        return page.locator(f'[data-testid="stMain"] .st-key-{css_class(control["key"])} '
                            f'[data-testid="{control["testid"]}"]').first
    return page.locator(f'[data-testid="stMain"] [data-testid="{control["testid"]}"]').nth(control["index"])


def wait_idle(page, timeout: float = RERUN_TIMEOUT_MS) -> None:
    """Returns once the Streamlit script is not running."""
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=timeout)


# The round trip in three parts (ms): the browser until the change is sent, the server from then
# until the run's last message arrives (the script run, its messages and their transfer), and the
# browser from that message until the second paint. None where a part was not seen.
SPLIT_JS = """
() => {
  const m = window.__bench, end = m.t0 + m.ms, sent = (window.__sent || []).filter(t => t >= m.t0 && t <= end);
  const received = (window.__received || []).filter(t => t >= m.t0 && t <= end);
  if (!sent.length || !received.length) return null;
  const last = received[received.length - 1];
  return {browser_before: sent[0] - m.t0, server: last - sent[0], browser_after: end - last,
          messages: received.length};
}
"""
LAST_SPLIT: dict | None = None  # the split of the last timed() round trip
ENDS_SEEN: Counter = Counter()  # how each timed rerun's end was seen: "state" or "message" (FINISHED_INIT)


def timed(page, action) -> float | None:
    """Returns the round trip (ms) of `action()`: event → rerun done → two paints; None if no rerun."""
    page.evaluate(ARM_JS)
    action()
    ms = page.evaluate(WAIT_JS, RERUN_TIMEOUT_MS)
    global LAST_SPLIT
    LAST_SPLIT = None
    if ms is not None:
        ENDS_SEEN[page.evaluate("() => window.__bench.via")] += 1
        LAST_SPLIT = page.evaluate(SPLIT_JS)
    return None if ms is None else round(ms, 1)


def first_figure_ms(page, url: str) -> tuple[float, float]:
    """Loads `url` and returns (ms from navigation start to the first figure painted, timeOrigin epoch ms)."""
    page.goto(url, timeout=LOAD_TIMEOUT_MS)
    page.wait_for_function("() => window.__firstFigure !== null", timeout=LOAD_TIMEOUT_MS, polling=50)
    figure_ms, origin = page.evaluate("() => [window.__firstFigure, performance.timeOrigin]")
    return round(figure_ms, 1), origin


def settle(page) -> None:
    """Waits until the app is idle and a short pause has passed."""
    wait_idle(page)
    time.sleep(PAUSE_S)


def slider_step(locator, repeat: int) -> tuple:
    """Returns (an arrow press, always in the direction with room; how many of them fit in `repeat`)."""
    thumb = locator.locator('input[type="range"]').first
    state = thumb.evaluate(SLIDER_STATE_JS)
    room_right = round((state["max"] - state["value"]) / state["step"])
    room_left = round((state["value"] - state["min"]) / state["step"])
    if room_right >= repeat or room_right >= room_left:
        key, room = "ArrowRight", room_right
    else:
        key, room = "ArrowLeft", room_left
    thumb.focus()
    return lambda: thumb.press(key), min(repeat, room)


def selected_index(options) -> int:
    """Returns the index of the option marked selected (aria-selected / data-selected / checked)."""
    flags = options.evaluate_all(
        "els => els.map(e => e.getAttribute('aria-selected') === 'true' || e.getAttribute('data-selected') === 'true'"
        " || !!(e.querySelector('input:checked')))"
    )
    return flags.index(True) if True in flags else 0


def measure_select(page, locator, repeat: int, result: ControlResult) -> None:
    """Picks the next option `repeat` times (wrapping), then the original one again."""
    original = None
    for _ in range(repeat):
        locator.click()
        options = page.locator('[role="listbox"] [role="option"]')
        options.first.wait_for(timeout=10_000)
        count, current = options.count(), selected_index(options)
        original = current if original is None else original
        if count < 2:
            page.keyboard.press("Escape")
            result.skipped = "one option only"
            return
        target = options.nth((current + 1) % count)
        if not record(page, result, timed(page, target.click)):
            break
        settle(page)
    if original is not None:  # put it back, untimed
        locator.click()
        page.locator('[role="listbox"] [role="option"]').nth(original).click()
        settle(page)


def measure_radio(page, locator, repeat: int, result: ControlResult, option: str = '[data-testid="stRadioOption"]') -> None:
    """Clicks the next choice `repeat` times (wrapping, skipping uploads), then the original one.

    `option` selects the choices: a radio group's options, or the buttons of st.pills.
    """
    options = locator.locator(option)
    labels = [text.strip() for text in options.all_inner_texts()]
    usable = [i for i, text in enumerate(labels) if not SKIPPED_CHOICE.search(text)]
    original = selected_index(options)
    if len(usable) < 2:
        result.skipped = "fewer than two choices without a file uploader"
        return
    for _ in range(repeat):
        current = selected_index(options)
        later = [i for i in usable if i > current] or usable
        if not record(page, result, timed(page, options.nth(later[0]).click)):
            break
        settle(page)
    if selected_index(options) != original:
        options.nth(original).click()
        settle(page)


def measure_clicks(page, action, repeat: int, result: ControlResult) -> None:
    """Calls `action` (a click or a key press) `repeat` times, each a measured rerun."""
    for _ in range(repeat):
        if not record(page, result, timed(page, action)):
            break
        settle(page)


def record(page, result: ControlResult, ms: float | None) -> bool:
    """Records one round trip (None: no rerun came); returns whether to go on with the control.

    The first change of a control that drew the same figures marks it skipped, and so does a
    first change that brought no rerun at all.
    """
    if ms is None:
        result.lost += 1
        if not result.times_ms:
            result.skipped = f"no rerun within {RERUN_TIMEOUT_MS / 1000:.0f} s"
            return False
        return True
    result.times_ms.append(ms)
    if LAST_SPLIT is not None:
        result.splits.append(LAST_SPLIT)
    if len(result.times_ms) == 1:
        result.figures_changed = figures_changed(result.fingerprint_before, page.evaluate(FINGERPRINT_JS))
        if not result.figures_changed:
            result.skipped = "no figure changed"
            result.times_ms.clear()
            result.splits.clear()
            return False
    return True


def figures_changed(before: str | None, after: str) -> int:
    """Returns how many figures differ between two FINGERPRINT_JS digests (added or removed ones count)."""
    old = before.split(",") if before else []
    new = after.split(",") if after else []
    return sum(a != b for a, b in zip(old, new)) + abs(len(old) - len(new))


def measure_control(page, control: dict, repeat: int) -> ControlResult:
    """Returns the control's round trips over `repeat` changes in one direction."""
    result = ControlResult(control["kind"], control["label"] or f"{control['kind']} {control['index']}", control["key"])
    locator = control_locator(page, control)
    locator.scroll_into_view_if_needed()
    settle(page)
    result.fingerprint_before = page.evaluate(FINGERPRINT_JS)
    kind = control["kind"]
    if kind == "slider":
        measure_clicks(page, *slider_step(locator, repeat), result)
        if not result.times_ms and not result.skipped:
            result.skipped = "no room to step"
    elif kind == "select":
        measure_select(page, locator, repeat, result)
    elif kind == "radio":
        measure_radio(page, locator, repeat, result)
    elif kind == "pills":
        measure_radio(page, locator, repeat, result, option='button[role="radio"]')
    elif kind == "toggle":
        measure_clicks(page, locator.locator("label").first.click, repeat, result)
        if len(result.times_ms) % 2:  # an odd number of flips: flip back, untimed
            locator.locator("label").first.click()
            settle(page)
    elif kind == "number":
        up = locator.locator('[data-testid="stNumberInputStepUp"]')
        down = locator.locator('[data-testid="stNumberInputStepDown"]')
        if up.count() and down.count():
            measure_clicks(page, (down if up.is_disabled() else up).click, repeat, result)
        else:  # a box under 7.5rem wide has no − and + buttons: its arrow keys step it the same way
            box = locator.locator("input").first
            box.focus()
            measure_clicks(page, lambda: box.press("ArrowUp"), repeat, result)
    return result


def visible_controls(page) -> list[dict]:
    """Returns the page's visible, enabled controls, sliders first, each kind in page order."""
    return [c for c in page.evaluate(CONTROLS_JS, [list(k) for k in CONTROL_KINDS]) if c["visible"] and not c["disabled"]]


def control_id(control: dict) -> tuple:
    return (control["kind"], control["key"] or f"{control['label']}#{control['index']}")


class BesideFloor:
    """The floor app, kept open in its own browser context for the whole app phase: its slider is
    stepped `repeat` times just before each control is measured, so every control has a floor
    measured within seconds of it, under the same load (the run's floor, at its start and end, can
    be ten minutes away). The slider sweeps 0 → 100 → 0 …, so no step goes back to a value the slider
    had a moment before (the quirk in the module docstring)."""

    def __init__(self, browser, server: Server):
        self.page = new_page(browser, [])
        first_figure_ms(self.page, server.url + "/")
        settle(self.page)
        control = next(c for c in visible_controls(self.page) if c["kind"] == "slider")
        self.thumb = control_locator(self.page, control).locator('input[type="range"]').first
        self.key = "ArrowRight"

    def measure(self, repeat: int) -> list[float]:
        """Returns the round trips (ms) of `repeat` slider steps; LAST_SPLIT is left as it was."""
        global LAST_SPLIT
        kept, out = LAST_SPLIT, []
        for _ in range(repeat):
            state = self.thumb.evaluate(SLIDER_STATE_JS)
            if (self.key == "ArrowRight" and state["value"] >= state["max"]) or (
                    self.key == "ArrowLeft" and state["value"] <= state["min"]):
                self.key = "ArrowLeft" if self.key == "ArrowRight" else "ArrowRight"
            self.thumb.focus()
            ms = timed(self.page, lambda: self.thumb.press(self.key))
            if ms is not None:
                out.append(ms)
            settle(self.page)
        LAST_SPLIT = kept
        return out

    def close(self) -> None:
        self.page.context.close()


def measure_page_controls(page, repeat: int, cap: int, beside: BesideFloor | None = None
                          ) -> tuple[list[ControlResult], list[str]]:
    """Returns the results of up to `cap` controls and the labels of those left out by the cap.

    The controls are looked up again after each one, so a control that appears only after
    another's change (and stays) is found; one that disappears is simply not measured.
    """
    results, done = [], set()
    while len(results) < cap:
        pending = [c for c in visible_controls(page) if control_id(c) not in done]
        if not pending:
            break
        control = pending[0]
        done.add(control_id(control))
        try:
            floor_ms = beside.measure(repeat) if beside else []
            results.append(measure_control(page, control, repeat))
            results[-1].beside_ms = floor_ms
        except Exception as error:  # a bench reports a broken control and goes on
            results.append(ControlResult(control["kind"], control["label"], control["key"],
                                         skipped=f"error: {str(error).splitlines()[0][:120]}"))
            with contextlib.suppress(Exception):
                page.keyboard.press("Escape")
                settle(page)
    left_out = [f"{c['kind']} '{c['label']}'" for c in visible_controls(page) if control_id(c) not in done]
    return results, left_out


# ----------------------------------------------------------------------------- the run


def shown_pages(wanted: list[str] | None) -> list[tuple[str, str]]:
    """Returns (title, url path) of the registry pages whose file exists (what the navigation shows)."""
    pages = [(p.title, "" if p.default else p.url_path, p.url_path) for p in PAGES if (ROOT / p.file).exists()]
    if wanted:
        unknown = set(wanted) - {stem for _, _, stem in pages}
        if unknown:
            raise SystemExit(f"unknown or missing pages: {', '.join(sorted(unknown))}")
        pages = [p for p in pages if p[2] in wanted]
    return [(title, path) for title, path, _ in pages]


def new_page(browser, errors: list[str]):
    """Returns a fresh page in its own context, with the first-figure clock installed."""
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    context.add_init_script(FIRST_FIGURE_INIT)
    context.add_init_script(FINISHED_INIT)
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(str(error).splitlines()[0]))
    return page


def measure_floor(browser, server: Server, repeat: int, *, cold: bool, kind: str = "slider") -> dict:
    """Returns the floor app's renders and its control's round trips (cold only right after its start)."""
    errors: list[str] = []
    page = new_page(browser, errors)
    figure_ms, origin = first_figure_ms(page, server.url + "/")
    out = {"cold_ms": origin + figure_ms - server.started_at * 1000 if cold else None, "first_visit_ms": figure_ms}
    out["warm_ms"] = [first_figure_ms(page, server.url + "/")[0] for _ in range(repeat)]
    settle(page)
    control = next(c for c in visible_controls(page) if c["kind"] == kind)
    result = measure_control(page, control, repeat)
    out["round_trip_ms"], out["lost"], out["page_errors"] = result.times_ms, result.lost, errors
    out["splits"] = result.splits
    page.context.close()
    return out


def measure_widget_floors(browser, repeat: int) -> dict[str, list[float]]:
    """Returns, per kind of control other than the slider, the round trips of the floor app with
    that widget in the slider's place (FLOOR_WIDGET; stock runner, as the slider floor)."""
    out = {}
    for kind, _ in CONTROL_KINDS[1:]:
        for attempt in range(2):  # a second server if the first measured nothing (reason printed)
            with streamlit_server(FLOOR_APP, options=STOCK_RUNNER, env={"FLOOR_WIDGET": kind}) as server:
                page = new_page(browser, [])
                first_figure_ms(page, server.url + "/")
                settle(page)
                control = next(c for c in visible_controls(page) if c["kind"] == kind)
                result = measure_control(page, control, repeat)
                out[kind] = result.times_ms
                page.context.close()
            if result.times_ms:
                break
            print(f"floor of {kind}: nothing measured ({result.skipped or 'no rerun'}), attempt {attempt + 1}",
                  file=sys.stderr)
    return out


def measure_app_page(page, url: str, title: str, path: str, repeat: int, cap: int,
                     first_visit_ms: float | None = None, beside: BesideFloor | None = None) -> PageResult:
    """Returns one page's first visit (unless already made), warm renders and control round trips."""
    result = PageResult(title, path)
    result.first_visit_ms = first_visit_ms if first_visit_ms is not None else first_figure_ms(page, f"{url}/{path}")[0]
    result.warm_ms = [first_figure_ms(page, f"{url}/{path}")[0] for _ in range(repeat)]
    settle(page)
    result.exceptions = page.locator('[data-testid="stException"]').count()
    result.controls, result.left_out = measure_page_controls(page, repeat, cap, beside)
    return result


def run(args) -> dict:
    """Returns every raw figure of the run (see the module docstring for what is measured)."""
    from playwright.sync_api import sync_playwright

    pages = shown_pages(args.pages.split(",") if args.pages else None)
    if args.lang:  # the UI in another language: every page opened with ?lang=
        pages = [(title, f"{path}?lang={args.lang}") for title, path in pages]
    floor_repeat = max(args.repeat, 5)
    report = {"machine": {"cpus": os.cpu_count(), "loadavg_start": os.getloadavg()}, "repeat": args.repeat}
    with (sync_playwright() as playwright, streamlit_server(FLOOR_APP, options=STOCK_RUNNER) as floor,
          streamlit_server(FLOOR_APP) as tuned):
        browser = launch_chromium(playwright)
        report["floor_start"] = measure_floor(browser, floor, floor_repeat, cold=True)
        report["tuned_start"] = measure_floor(browser, tuned, floor_repeat, cold=True)
        print(f"floor: {fmt(median(report['floor_start']['round_trip_ms']))} ms, with the app's config "
              f"{fmt(median(report['tuned_start']['round_trip_ms']))} ms", file=sys.stderr)
        report["widget_floors"] = measure_widget_floors(browser, 2 * floor_repeat)
        print("floors of the other widgets: " + ", ".join(f"{k} {fmt(median(v))} ms" for k, v in report["widget_floors"].items()),
              file=sys.stderr)
        with streamlit_server("app.py", timeout=300) as app:
            errors: list[str] = []
            page = new_page(browser, errors)
            title, path = pages[0]
            figure_ms, origin = first_figure_ms(page, f"{app.url}/{path}")
            report["app_cold"] = {"page": title, "ms": origin + figure_ms - app.started_at * 1000}
            report["pages"] = []
            beside = BesideFloor(browser, floor) if args.beside else None
            for i, (title, path) in enumerate(pages):
                print(f"{title}…", file=sys.stderr)
                errors.clear()
                result = measure_app_page(page, app.url, title, path, args.repeat, args.max_controls,
                                          first_visit_ms=figure_ms if i == 0 else None, beside=beside)
                result.page_errors = list(errors)
                report["pages"].append(result)
            if beside:
                beside.close()
            report["app_log_tracebacks"] = app.log.read_text(errors="replace").count("Traceback")
        report["floor_end"] = measure_floor(browser, floor, floor_repeat, cold=False)
        report["tuned_end"] = measure_floor(browser, tuned, floor_repeat, cold=False)
        browser.close()
    report["machine"]["loadavg_end"] = os.getloadavg()
    report["ends_seen"] = dict(ENDS_SEEN)
    return report


# ----------------------------------------------------------------------------- printing


def ratio(value: float | None, floor: float | None) -> str:
    return "—" if value is None or not floor else f"{value / floor:.1f}"


def print_report(report: dict) -> None:
    """Prints the markdown tables of the run."""
    start, end = report["floor_start"], report["floor_end"]
    floor_trips = start["round_trip_ms"] + end["round_trip_ms"]
    floor_ms = median(floor_trips)
    floor_render = median(start["warm_ms"] + end["warm_ms"])
    tuned_trips = report["tuned_start"]["round_trip_ms"] + report["tuned_end"]["round_trip_ms"]
    tuned_ms = median(tuned_trips)
    load = report["machine"]
    print(f"UI latency, Chromium headless; {load['cpus']} CPUs, load average {load['loadavg_start'][0]:.2f} at the start, "
          f"{load['loadavg_end'][0]:.2f} at the end; repeat {report['repeat']}.\n")
    print(f"Floor (bench/floor_app.py: one slider, one 64 × 64 heatmap, stock Streamlit runner): round trip median "
          f"**{fmt(floor_ms)} ms** (n = {len(floor_trips)}; {fmt(median(start['round_trip_ms']))} ms at the start, "
          f"{fmt(median(end['round_trip_ms']))} ms at the end); warm render {fmt(floor_render)} ms. "
          f"Tuned floor (the same app with the app's .streamlit/config.toml, no gc after every run): "
          f"**{fmt(tuned_ms)} ms** (n = {len(tuned_trips)}).")
    kind_floor = {"slider": floor_ms, **{k: median(v) for k, v in report.get("widget_floors", {}).items()}}
    print("Floor of each kind of control (the same app and heatmap with that widget in the slider's place, stock "
          "runner): " + ", ".join(f"{k} {fmt(v)} ms" for k, v in kind_floor.items()) + ".")
    print(f"Cold first render (server start → first figure painted): app, {report['app_cold']['page']}: "
          f"{fmt(report['app_cold']['ms'])} ms; floor: {fmt(start['cold_ms'])} ms.\n")
    print("| page | control | median ms | × floor | × floor beside it | × its kind's floor | × tuned floor | "
          "figures redrawn | n |")
    print("|---|---|---|---|---|---|---|---|---|")
    for page in report["pages"]:
        labels = Counter(c.label for c in page.controls)
        for c in page.controls:
            if c.skipped:
                continue
            lost = f" ({c.lost} lost)" if c.lost else ""
            name = f"{c.label} ({c.kind}" + (f", key {c.key})" if labels[c.label] > 1 and c.key else ")")
            beside = f"{ratio(c.median, median(c.beside_ms))} ({fmt(median(c.beside_ms))} ms)" if c.beside_ms else "—"
            print(f"| {page.title} | {name} | {fmt(c.median)} | {ratio(c.median, floor_ms)} | {beside} | "
                  f"{ratio(c.median, kind_floor.get(c.kind))} | {ratio(c.median, tuned_ms)} | {c.figures_changed} | "
                  f"{len(c.times_ms)}{lost} |")
    print(within_line(report, floor_ms))
    print_splits(report)
    print("\n| page | first visit ms | warm render ms | × floor render | n |")
    print("|---|---|---|---|---|")
    for page in report["pages"]:
        warm = median(page.warm_ms)
        print(f"| {page.title} | {fmt(page.first_visit_ms)} | {fmt(warm)} | {ratio(warm, floor_render)} | {len(page.warm_ms)} |")
    notes = []
    for page in report["pages"]:
        if not page.controls:
            notes.append(f"- {page.title}: no slider, select box, radio, pills, toggle or number input shown")
        for c in page.controls:
            if c.skipped:
                notes.append(f"- {page.title}: {c.kind} '{c.label}' skipped: {c.skipped}")
        if page.left_out:
            notes.append(f"- {page.title}: over the cap, not measured: {', '.join(page.left_out)}")
        if page.exceptions:
            notes.append(f"- {page.title}: the page shows {page.exceptions} exception box(es) (see the server log)")
        if page.page_errors:
            notes.append(f"- {page.title}: {len(page.page_errors)} page errors, first: {page.page_errors[0]}")
    ends = report.get("ends_seen", {})
    if ends.get("message"):
        notes.append(f"- {ends['message']} of {sum(ends.values())} reruns ended without data-test-script-state changing "
                     "(React folded the short run into one update); their end was seen by the script_finished message")
    if report["app_log_tracebacks"]:
        notes.append(f"- the app server logged {report['app_log_tracebacks']} tracebacks")
    if notes:
        print("\nNot measured or worth a look:")
        print("\n".join(notes))


def split_medians(splits: list[dict]) -> tuple[float | None, ...]:
    """Returns the medians of SPLIT_JS's parts and message count over `splits`."""
    return tuple(median([s[k] for s in splits if s and s.get(k) is not None])
                 for k in ("browser_before", "server", "browser_after", "messages"))


def print_splits(report: dict) -> None:
    """Prints where each control's round trip went, beside the floor's."""
    floor = split_medians(report["floor_start"].get("splits", []) + report["floor_end"].get("splits", []))
    print("\nWhere the round trip went (medians, ms): in the browser until the change is sent; from then until the "
          "run's last message arrives (script run, its messages, their transfer); in the browser from that message "
          "to the second paint. The parts are medians of their own, so they need not add up to the table above.\n")
    print("| page | control | browser, before | server and transfer | browser, after | messages |")
    print("|---|---|---:|---:|---:|---:|")
    print(f"| floor | slider | {fmt(floor[0])} | {fmt(floor[1])} | {fmt(floor[2])} | {fmt(floor[3])} |")
    for page in report["pages"]:
        for c in page.controls:
            if c.skipped or not c.splits:
                continue
            parts = split_medians(c.splits)
            print(f"| {page.title} | {c.label} ({c.kind}) | {fmt(parts[0])} | {fmt(parts[1])} | {fmt(parts[2])} | "
                  f"{fmt(parts[3])} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", help="comma-separated url paths (home, playground, …); default: every page shown")
    parser.add_argument("--repeat", type=int, default=5, help="changes per control and warm renders per page (default 5)")
    parser.add_argument("--max-controls", type=int, default=8, help="controls measured per page (default 8)")
    parser.add_argument("--json", type=Path, help="also write the raw figures to this file")
    parser.add_argument("--lang", choices=("en", "zh"), help="open every page in this UI language (?lang=)")
    parser.add_argument("--no-beside", dest="beside", action="store_false",
                        help="do not measure the floor's slider just before each control (the '× floor beside' column)")
    args = parser.parse_args(argv)
    report = run(args)
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=vars))  # its dataclasses as plain dicts
    return 0


if __name__ == "__main__":
    sys.exit(main())
