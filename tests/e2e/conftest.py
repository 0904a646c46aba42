"""Browser tests: Playwright drives Chromium against a real `streamlit run` on a free port."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tools.ui_timing import CHROMIUM_ARGS, stop_server, wait_healthy
from viz.export import chromium_path

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
UPDATE_DOCS = os.environ.get("UPDATE_DOCS_SCREENSHOTS") == "1"


def screenshot_path(name: str) -> str:
    """Returns where a test saves its screenshot `name`: docs/ with UPDATE_DOCS_SCREENSHOTS=1 (to be
    looked at before committing), else test-artifacts/ (a test run never changes tracked files)."""
    folder = ROOT / "docs" if UPDATE_DOCS else ARTIFACTS
    folder.mkdir(exist_ok=True)
    return str(folder / name)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(**environment: str):
    """Yields the base URL of a freshly started `streamlit run app.py` on 127.0.0.1, with these
    environment variables set for it (e.g. ATTENTION_LAB_MODEL_ROOT)."""
    port = free_port()
    # The app runs as shipped: without the suite's faster, less tuned XLA compile (tests/conftest.py).
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "XLA_FLAGS": os.environ.get("ATTENTION_LAB_SHIPPED_XLA_FLAGS", ""),
           **environment}
    log = open(ARTIFACTS / f"streamlit-{port}.log", "w") if ARTIFACTS.mkdir(exist_ok=True) is None else None
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, 90, log.name)
        yield url
    finally:
        stop_server(proc)
        log.close()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    assert path, "no Chromium found: run `make test` (it installs one) or set BROWSER_PATH"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield b
        b.close()


VIEWPORT = {"width": 1400, "height": 1300}


@pytest.fixture(scope="session")
def _shared_tab(browser):
    """{"context", "page"}: the one browser tab the tests share (made again when a test lost it)."""
    tab: dict = {}
    yield tab
    if tab:
        tab["context"].close()


@pytest.fixture
def page(browser, _shared_tab):
    """The browser tab every test shares: Streamlit's scripts are fetched and compiled once, not
    once per test in a new browser context.

    Each test still starts from nothing: it opens its page (a new Streamlit session: a tab's
    session ends when it leaves the page), and after it the tab's storage is cleared, it goes to
    about:blank and gets the default viewport back. Listeners go through `listen`, which removes
    them after the test. A test that needs a browser of its own (a cold cache, a locale) makes a
    context from `browser`."""
    if not _shared_tab or _shared_tab["page"].is_closed():
        if _shared_tab:
            _shared_tab["context"].close()
        _shared_tab["context"] = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
        _shared_tab["page"] = _shared_tab["context"].new_page()
    pg = _shared_tab["page"]
    yield pg
    try:
        pg.evaluate("() => { try { localStorage.clear(); sessionStorage.clear(); } catch (e) {} }")
        pg.goto("about:blank")
        pg.set_viewport_size(VIEWPORT)
    except Exception:  # noqa: BLE001 (a crashed or closed tab: the next test gets a new one)
        _shared_tab["context"].close()
        _shared_tab.clear()


@pytest.fixture
def listen(page):
    """listen(event, handler): page.on(event, handler) for this test only (the tab is shared)."""
    added = []

    def add(event: str, handler) -> None:
        page.on(event, handler)
        added.append((event, handler))

    yield add
    for event, handler in added:
        page.remove_listener(event, handler)


def wait_idle(page, timeout: float = 60_000) -> None:
    """Waits until the Streamlit script has finished running."""
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=timeout)


def wait_for_charts(page, count: int, timeout: float = 60_000) -> None:
    """Waits until `count` plotly charts have drawn their data."""
    page.wait_for_function(
        f"""() => {{ const c = document.querySelectorAll('.js-plotly-plot');
                    return c.length >= {count} && Array.from(c).every(el => el._fullData && el._fullData.length); }}""",
        timeout=timeout,
    )


def plotly_traces(page) -> list:
    """Returns the data of every plotly chart on the page, as rendered in the browser."""
    return page.evaluate(
        """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(
            el => (el._fullData || []).map(t => ({x: Array.from(t.x || []), y: Array.from(t.y || []),
                  z: t.z ? Array.from(t.z, r => Array.from(r)) : null})))"""
    )


def pushed_margins(page) -> list[dict]:
    """Returns, for every plotly chart on the page, the sides (l, b, r, t) whose margin plotly.js widened
    after drawing to fit the tick labels, a colour bar or a legend over the plot: {side: [margin asked,
    margin drawn]}. Empty when the margins reserved for them (viz.margins.reserve_tick_margins) held."""
    return page.evaluate(
        """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(gd => {
            const size = gd._fullLayout._size, asked = gd._fullLayout.margin, out = {};
            for (const side of ['l', 'b', 'r', 't']) if (size[side] > asked[side] + 0.5) out[side] = [asked[side], size[side]];
            return out; })"""
    )


def wait_for_change(page, before, timeout: float = 30.0, *, chart: int | None = None) -> list:
    """Returns the chart data once it differs from `before` (chart: once that chart's first trace does);
    fails after `timeout` s."""
    def changed(now) -> bool:
        if chart is None:
            return bool(now) and json.dumps(now) != json.dumps(before)
        return len(now) > chart and bool(now[chart]) and json.dumps(now[chart][0]) != json.dumps(before[chart][0])

    deadline = time.time() + timeout
    while time.time() < deadline:
        now = plotly_traces(page)
        if changed(now):
            return now
        time.sleep(0.2)
    raise AssertionError("the charts did not change" if chart is None else f"chart {chart} did not change")


def wait_stable(page, quiet: float = 2.0, timeout: float = 180.0) -> list:
    """Returns the chart data once the app is idle and the data has not changed for `quiet` s.

    A slider moved by keys sends one value per press, and plotly redraws after the script's run
    ends, so one idle moment is not yet the last state; this waits for the last one."""
    deadline = time.time() + timeout
    last, since = None, time.time()
    while time.time() < deadline:
        wait_idle(page, timeout=max(1_000, (deadline - time.time()) * 1000))
        now = json.dumps(plotly_traces(page))
        if now != last:
            last, since = now, time.time()
        elif time.time() - since >= quiet:
            return json.loads(last)
        time.sleep(0.25)
    raise AssertionError(f"the charts did not settle within {timeout} s")


@pytest.fixture(scope="session")
def app_url():
    """A `streamlit run` server shared by the browser tests that need no fresh server."""
    with streamlit_server() as url:
        yield url


@pytest.fixture(scope="session")
def model_root_url(tmp_path_factory):
    """(URL, root) of a server whose operator set a model root holding one user folder, my-gpt (a copy
    of the committed GPT-2 folder): the language-model pages' "my own model" path."""
    from models.lm.quality import CHECKPOINT_DIR

    root = tmp_path_factory.mktemp("models")
    shutil.copytree(CHECKPOINT_DIR, root / "my-gpt")
    with streamlit_server(ATTENTION_LAB_MODEL_ROOT=str(root)) as url:
        yield url, root


def open_page(page, url: str, path: str, title_text: str, charts: int = 1, timeout: float = 90_000) -> list:
    """Opens `url/path`, waits (each wait up to `timeout` ms) for `title_text`, `charts` drawn plotly charts
    and an idle app; returns the charts' data."""
    page.goto(f"{url}/{path}", timeout=timeout)
    page.get_by_text(title_text).first.wait_for(timeout=timeout)
    if charts:
        wait_for_charts(page, charts, timeout=timeout)
    wait_idle(page, timeout=timeout)
    return plotly_traces(page)
