"""PNG, SVG and PDF through one watched Chromium (kaleido) per process.

kaleido's own sync server waits on a queue with no timeout: if its Chromium dies, every later
export from every session hangs, holding the lock, and shutdown deadlocks on it. Here:
- one thread runs an asyncio loop that owns one kaleido.Kaleido (one browser); each render
  is a coroutine submitted to that loop and waited for with RENDER_TIMEOUT;
- a render that times out or fails, or a browser that died, gets the browser replaced: the
  old loop is abandoned, the next render starts a fresh one;
- a browser that is replaced, cannot start or does not answer in time has its whole process
  tree killed: kaleido starts its launcher in a session of its own (start_new_session), so
  every process of that session, and every descendant of the launcher, is sent SIGKILL and
  the launcher is reaped; nothing of it outlives the export;
- the lock that serialises renders is taken with LOCK_TIMEOUT: a busy exporter raises
  ExportBusy (one line, "try again"), never a hang; data exports (CSV, JSON, NPY, HTML)
  never touch it;
- close() at exit waits CLOSE_TIMEOUT at most.
The start and render timeouts are constructor arguments; exporter_for() takes them from
$ATTENTION_LAB_EXPORT_TIMEOUT (seconds) when it is set, so a test can give up in seconds.
MathJax is off and plotly.js comes from the plotly package, so no render reaches the network.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import logging
import os
import signal
import threading
from pathlib import Path
from typing import Any

from models.errors import LabError

RENDER_TIMEOUT = 45.0  # seconds for one image (a 512×512 heatmap renders in under a second)
START_TIMEOUT = 45.0  # seconds for the browser to start
LOCK_TIMEOUT = 20.0  # seconds a request waits for the exporter before it says "busy"
CLOSE_TIMEOUT = 5.0
TIMEOUT_ENV = "ATTENTION_LAB_EXPORT_TIMEOUT"  # seconds for the start and for each render, overriding both
# kaleido and choreographer log a browser that dies or is killed as warnings on stderr (Python's
# last-resort handler when nothing is configured); the exporter's one-line errors already say it.
_QUIET_LOGGERS = ("kaleido", "choreographer", "logistro")


class ExportUnavailable(LabError, RuntimeError):
    """Image export cannot run here (no Chromium); the message says what to install."""


class ExportBusy(LabError, RuntimeError):
    """The image exporter is busy or was restarted; the message says to try again."""


class ImageExporter:
    """Renders plotly figure dicts to image bytes in one long-lived, watched browser."""

    def __init__(self, browser_path: str, *, start_timeout: float | None = None, render_timeout: float | None = None):
        # None: the module's START_TIMEOUT / RENDER_TIMEOUT, read at each use.
        self._path = browser_path
        self._start_timeout = start_timeout
        self._render_timeout = render_timeout
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._kaleido: Any = None
        self.restarts = 0

    @property
    def start_timeout(self) -> float:
        return START_TIMEOUT if self._start_timeout is None else self._start_timeout

    @property
    def render_timeout(self) -> float:
        return RENDER_TIMEOUT if self._render_timeout is None else self._render_timeout

    # ------------------------------------------------------------------ lifecycle

    def _start(self) -> None:
        import kaleido

        for name in _QUIET_LOGGERS:
            logging.getLogger(name).setLevel(logging.CRITICAL)

        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, name="image-export", daemon=True).start()
        launched = []  # the browser as soon as it exists, so a start that fails can still kill it

        async def open_browser():
            k = kaleido.Kaleido(n=1, timeout=self.render_timeout, mathjax=False, path=self._path)
            launched.append(k)
            await k.open()
            return k

        future = asyncio.run_coroutine_threadsafe(_settled(open_browser()), loop)
        self._loop = loop
        try:
            self._kaleido = _result(future.result(timeout=self.start_timeout))
        except BaseException:
            future.cancel()
            self._kaleido = launched[0] if launched else None  # _discard kills what it launched
            raise

    def browser_pids(self) -> list[int]:
        """Returns the pids of the browser's process tree (kaleido's launcher first, then Chromium's)."""
        process = getattr(self._kaleido, "subprocess", None)
        return [] if process is None else _process_tree(process.pid)

    def _discard(self) -> None:
        """Abandons the current browser: kills its whole process tree, reaps its launcher, removes its
        profile folder and stops its loop, waiting CLOSE_TIMEOUT at most for the launcher to go."""
        browser, loop = self._kaleido, self._loop
        self._kaleido, self._loop = None, None
        process = getattr(browser, "subprocess", None)
        if process is not None:
            # An unreaped launcher's pid is still ours, so its descendants are too; once reaped, its
            # pid could be reused, and only its session (kept by any member still alive) is searched.
            _kill_session(process.pid, descendants=process.poll() is None)
            with contextlib.suppress(Exception):
                process.wait(timeout=CLOSE_TIMEOUT)  # reaped: no zombie left in a long-lived app
        # choreographer's profile folder (--user-data-dir) is removed by its close(), which a killed
        # browser never gets: its clean() is the one private name used here, and may be absent.
        clean = getattr(getattr(browser, "_browser_impl", None), "clean", None)
        if callable(clean):
            with contextlib.suppress(Exception):
                clean()
        if loop is not None:
            with contextlib.suppress(Exception):
                loop.call_soon_threadsafe(loop.stop)

    def _alive(self) -> bool:
        # The launcher and at least one browser process under it must still be running.
        pids = self.browser_pids()
        return self._loop is not None and len(pids) >= 2 and all(_running(pid) for pid in pids[:2])

    def close(self) -> None:
        """Closes the browser, waiting CLOSE_TIMEOUT at most (then kills it)."""
        if not self._lock.acquire(timeout=CLOSE_TIMEOUT):
            self._discard()  # a render is stuck: do not wait for it
            return
        try:
            if self._loop is not None and self._kaleido is not None:
                future = asyncio.run_coroutine_threadsafe(self._kaleido.close(), self._loop)
                with contextlib.suppress(Exception):
                    future.result(timeout=CLOSE_TIMEOUT)
            self._discard()
        finally:
            self._lock.release()

    # ------------------------------------------------------------------ rendering

    def render(self, fig_dict: dict, fmt: str, width: int, height: int, scale: float) -> bytes:
        """Returns the image bytes; ExportBusy when busy, stuck or broken (the browser is then replaced)."""
        if not self._lock.acquire(timeout=LOCK_TIMEOUT):
            raise ExportBusy("image export is busy; try again in a moment (CSV, JSON, NPY and HTML export work now)")
        try:
            if not self._alive():  # never started, or the browser died or hangs: a fresh one
                if self._loop is not None:
                    self.restarts += 1
                self._discard()
                self._start_or_busy()
            opts = {"format": fmt, "width": width, "height": height, "scale": scale}
            future = asyncio.run_coroutine_threadsafe(_settled(self._kaleido.calc_fig(fig_dict, opts=opts)), self._loop)
            try:
                return _result(future.result(timeout=self.render_timeout))
            except (concurrent.futures.TimeoutError, Exception) as error:
                future.cancel()
                self._discard()  # the next render starts a fresh browser
                self.restarts += 1
                raise ExportBusy(
                    f"image export failed ({type(error).__name__}) and was restarted; try again"
                ) from None
        finally:
            self._lock.release()

    def _start_or_busy(self) -> None:
        try:
            self._start()
        except Exception as error:  # noqa: BLE001 - any start failure is one line for the user
            self._discard()
            self.restarts += 1
            raise ExportBusy(f"the image exporter could not start its browser ({type(error).__name__}); "
                             "try again, or use CSV, JSON, NPY or HTML") from None


async def _settled(awaitable: Any) -> Any:
    """Returns the awaitable's result, or the Exception it raised. A task nobody waits for any more
    (its wait timed out) must not end in an exception: asyncio would print it, traceback and all."""
    try:
        return await awaitable
    except Exception as error:  # noqa: BLE001 - handed to the waiting thread by _result
        return error


def _result(value: Any) -> Any:
    if isinstance(value, Exception):
        raise value
    return value


def _process_tree(pid: int) -> list[int]:
    """Returns pid and its descendants (Linux /proc; elsewhere pid alone)."""
    tree, todo = [], [pid]
    while todo:
        current = todo.pop(0)
        tree.append(current)
        for children in Path(f"/proc/{current}/task").glob("*/children"):
            with contextlib.suppress(OSError, ValueError):
                todo.extend(int(x) for x in children.read_text().split())
    return tree


def _session_of(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[3])
    except (OSError, IndexError, ValueError):
        return None


def _kill_session(launcher: int, *, descendants: bool) -> None:
    """Sends SIGKILL to every process of the launcher's session, and to its descendants if asked
    (kaleido starts the launcher with start_new_session, so its session id is its pid; a browser
    process whose parent died is found there, reparented or not)."""
    pids = set(_process_tree(launcher)) if descendants else set()
    for entry in Path("/proc").glob("[0-9]*"):
        if _session_of(int(entry.name)) == launcher:
            pids.add(int(entry.name))
    pids.discard(os.getpid())  # never ourselves, whatever /proc said
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _running(pid: int) -> bool:
    """Returns whether pid runs (not gone, not a zombie, not stopped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X", "T", "t")


# One browser per process, on purpose: starting one costs seconds, and serialised renders
# through one browser keep its memory bounded (module state, like a cache).
_exporters: dict[str, ImageExporter] = {}
_exporters_lock = threading.Lock()


def _timeout_from_env() -> float | None:
    value = os.environ.get(TIMEOUT_ENV, "").strip()
    try:
        seconds = float(value) if value else None
    except ValueError:
        return None  # not a number: the built-in timeouts
    return seconds if seconds is not None and 0 < seconds < float("inf") else None


def exporter_for(browser_path: str) -> ImageExporter:
    """Returns this process's exporter for a browser (one per path), closed at exit."""
    with _exporters_lock:
        if browser_path not in _exporters:
            timeout = _timeout_from_env()
            _exporters[browser_path] = ImageExporter(browser_path, start_timeout=timeout, render_timeout=timeout)
            atexit.register(_exporters[browser_path].close)
        return _exporters[browser_path]
