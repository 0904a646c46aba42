"""The image exporter never hangs: a broken browser, a dead one or a stuck render each end in
one line within a bound, the next export works, and concurrent exports each get their own image."""

import os
import signal
import threading
import time

import numpy as np
import pytest

from viz import image_export
from viz.export import ExportBusy, chromium_path, figure_bytes, record_bytes
from viz.figures import heatmap


def figure(title="t", n=6):
    return heatmap(np.random.default_rng(0).random((n, n)), list(range(n)), list(range(n)), title=title)


def test_a_browser_that_cannot_start_gives_one_line_within_a_minute(monkeypatch):
    monkeypatch.setenv("BROWSER_PATH", "/bin/false")
    outcome = {}

    def export():
        try:
            figure_bytes(figure(), "png")
        except ExportBusy as error:
            outcome["error"] = str(error)

    worker = threading.Thread(target=export, daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "the export hung"
    assert "could not start its browser" in outcome["error"] and "\n" not in outcome["error"]


def test_eight_threads_each_get_their_own_svg():
    results = {}

    def export(i):
        results[i] = figure_bytes(figure(title=f"figure number {i}"), "svg")

    workers = [threading.Thread(target=export, args=(i,)) for i in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    assert sorted(results) == list(range(8))
    for i, svg in results.items():
        assert f"figure number {i}".encode() in svg
        assert all(f"figure number {j}<".encode() not in svg for j in range(8) if j != i)


def test_a_dead_browser_is_replaced_and_a_stuck_one_times_out(monkeypatch):
    path = chromium_path()
    assert path, "the test command installs Chromium"
    exporter = image_export.ImageExporter(path)
    try:
        assert exporter.render(figure().to_dict(), "svg", 300, 300, 1).startswith(b"<svg")
        first = exporter.browser_pids()
        assert len(first) >= 2  # kaleido's launcher and Chromium under it
        os.kill(first[1], signal.SIGKILL)  # Chromium dies
        time.sleep(1)
        assert exporter.render(figure().to_dict(), "svg", 300, 300, 1).startswith(b"<svg")  # a fresh one
        assert exporter.browser_pids()[1] != first[1]
        assert exporter.restarts == 1
        monkeypatch.setattr(image_export, "RENDER_TIMEOUT", 3.0)
        stuck = exporter.browser_pids()
        helpers = stuck[2:]  # Chromium's zygotes, renderers and utilities (a renderer may have exited idle)
        assert helpers
        for pid in helpers:
            os.kill(pid, signal.SIGSTOP)  # the next render hangs: no process under the browser answers
        started = time.monotonic()
        with pytest.raises(ExportBusy, match="restarted; try again"):
            exporter.render(figure().to_dict(), "svg", 300, 300, 1)
        assert time.monotonic() - started < 20
        assert exporter.restarts == 2
        time.sleep(0.5)
        assert not any(image_export._running(pid) for pid in stuck)  # the stuck tree was killed
        assert exporter.render(figure().to_dict(), "png", 300, 300, 1).startswith(b"\x89PNG")
    finally:
        exporter.close()


def test_a_busy_exporter_answers_busy_and_data_exports_still_work(monkeypatch):
    exporter = image_export.ImageExporter("/nonexistent")
    monkeypatch.setattr(image_export, "LOCK_TIMEOUT", 0.2)
    exporter._lock.acquire()  # another render holds the exporter
    try:
        with pytest.raises(ExportBusy, match="busy; try again"):
            exporter.render({}, "png", 10, 10, 1)
    finally:
        exporter._lock.release()
    from models.record import AttentionRecord

    record = AttentionRecord("m", np.eye(2), ("query", "key"), ["a", "b"], ["a", "b"])
    assert record_bytes(record, "csv").startswith(b"query")  # never waits for the image exporter


def test_close_never_waits_forever_on_a_stuck_render(monkeypatch):
    exporter = image_export.ImageExporter("/nonexistent")
    monkeypatch.setattr(image_export, "CLOSE_TIMEOUT", 0.5)
    exporter._lock.acquire()
    started = time.monotonic()
    exporter.close()
    assert time.monotonic() - started < 3


def test_a_browser_that_hangs_at_start_is_given_up_and_its_whole_tree_killed(tmp_path):
    # What the app and the CLI share: the exporter, its start timeout and the kill of the session.
    started = tmp_path / "started"
    browser = tmp_path / "hanging-browser"
    browser.write_text(f"#!/bin/sh\necho $$ > {started}\nsleep 300 &\necho $! >> {started}\nwait\n")
    browser.chmod(0o755)
    exporter = image_export.ImageExporter(str(browser), start_timeout=2.0, render_timeout=2.0)
    began = time.monotonic()
    with pytest.raises(ExportBusy, match=r"could not start its browser \(TimeoutError\)"):
        exporter.render(figure().to_dict(), "png", 100, 100, 1)
    assert time.monotonic() - began < 30
    shell, sleeper = (int(x) for x in started.read_text().split())
    deadline = time.monotonic() + 5
    while (image_export._running(shell) or image_export._running(sleeper)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not image_export._running(shell) and not image_export._running(sleeper)
    assert exporter.browser_pids() == []  # nothing kept: the next render starts afresh
    exporter.close()


def test_the_timeout_knob_reads_seconds_from_the_environment(monkeypatch):
    monkeypatch.setenv(image_export.TIMEOUT_ENV, "2.5")
    assert image_export._timeout_from_env() == 2.5
    for bad in ("", "soon", "0", "-1", "inf", "nan"):
        monkeypatch.setenv(image_export.TIMEOUT_ENV, bad)
        assert image_export._timeout_from_env() is None  # the built-in timeouts
    exporter = image_export.ImageExporter("/nonexistent", start_timeout=1.5)
    assert exporter.start_timeout == 1.5 and exporter.render_timeout == image_export.RENDER_TIMEOUT
