"""PNG, SVG and PDF through one watched Chromium (kaleido) per process.

kaleido's own sync server waits on a queue with no timeout: if its Chromium dies, every later
export from every session hangs, holding the lock, and shutdown deadlocks on it. Here:
- one thread runs an asyncio loop that owns one kaleido.Kaleido (one browser); each render
  is a coroutine submitted to that loop and waited for with RENDER_TIMEOUT;
- a render that times out or fails, or a browser that died, gets the browser replaced: the
  old loop is abandoned (its process killed), the next render starts a fresh one;
- the lock that serialises renders is taken with LOCK_TIMEOUT: a busy exporter raises
  ExportBusy (one line, "try again"), never a hang; data exports (CSV, JSON, NPY, HTML)
  never touch it;
- close() at exit waits CLOSE_TIMEOUT at most.
MathJax is off and plotly.js comes from the plotly package, so no render reaches the network.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import os
import signal
import threading
from pathlib import Path
from typing import Any

RENDER_TIMEOUT = 45.0  # seconds for one image (a 512×512 heatmap renders in under a second)
START_TIMEOUT = 45.0  # seconds for the browser to start
LOCK_TIMEOUT = 20.0  # seconds a request waits for the exporter before it says "busy"
CLOSE_TIMEOUT = 5.0


class ExportUnavailable(RuntimeError):
    """Image export cannot run here (no Chromium); the message says what to install."""


class ExportBusy(RuntimeError):
    """The image exporter is busy or was restarted; the message says to try again."""


class ImageExporter:
    """Renders plotly figure dicts to image bytes in one long-lived, watched browser."""

    def __init__(self, browser_path: str):
        self._path = browser_path
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._kaleido: Any = None
        self.restarts = 0

    # ------------------------------------------------------------------ lifecycle

    def _start(self) -> None:
        import kaleido

        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, name="image-export", daemon=True).start()

        async def open_browser():
            k = kaleido.Kaleido(n=1, timeout=RENDER_TIMEOUT, mathjax=False, path=self._path)
            await k.open()
            return k

        future = asyncio.run_coroutine_threadsafe(open_browser(), loop)
        try:
            self._kaleido = future.result(timeout=START_TIMEOUT)
        except BaseException:
            future.cancel()
            loop.call_soon_threadsafe(loop.stop)
            raise
        self._loop = loop

    def browser_pids(self) -> list[int]:
        """Returns the pids of the browser's process tree (kaleido's launcher first, then Chromium's)."""
        process = getattr(self._kaleido, "subprocess", None)
        return [] if process is None else _process_tree(process.pid)

    def _discard(self) -> None:
        """Abandons the current browser: kills its whole process tree and stops its loop, waiting for nothing."""
        pids = self.browser_pids()
        loop = self._loop
        self._kaleido, self._loop = None, None
        for pid in reversed(pids):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
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
            future = asyncio.run_coroutine_threadsafe(self._kaleido.calc_fig(fig_dict, opts=opts), self._loop)
            try:
                return future.result(timeout=RENDER_TIMEOUT)
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


def exporter_for(browser_path: str) -> ImageExporter:
    """Returns this process's exporter for a browser (one per path), closed at exit."""
    with _exporters_lock:
        if browser_path not in _exporters:
            _exporters[browser_path] = ImageExporter(browser_path)
            atexit.register(_exporters[browser_path].close)
        return _exporters[browser_path]
