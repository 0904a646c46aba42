"""Load on the server alone: N sessions that speak Streamlit's websocket protocol, render nothing.

    .venv/bin/python bench/load_protocol.py [--sessions 16] [--seconds 180] [--json FILE]
    .venv/bin/python bench/load_protocol.py --app bench/floor_app.py ...          # the floor, same load
    .venv/bin/python bench/load_protocol.py --url http://127.0.0.1:8501 --server-pids 1234 ...

Browsers on the server's own 2 cores take the cores themselves, so they cannot tell the server's
capacity. Here each session is one websocket to /_stcore/stream (subprotocol "streamlit";
no Origin header, so no XSRF cookie is needed) that sends the BackMsgs a browser sends and reads
the ForwardMsgs, rendering nothing, all in one asyncio loop: a class where each student has their
own machine. Without --url it starts `streamlit run --app` on a free loopback port (with the glibc
tunables `make run` sets) and reads that process tree's memory and CPU; with --url (127.0.0.1 only) it reads the process
trees of --server-pids.

Sessions arrive over --ramp seconds and loop until --seconds are up: visit a random page (the first
by URL, ClientState.page_name; later by sidebar click, page_script_hash from the `navigation`
ForwardMsg), think (--think MIN MAX), move one control one step (slider or select_slider right, left
at the end; select box or radio the next choice, skipping choices that open an uploader), think, and
one visit in --type-every set a text box to one of ODD_TEXTS (cut to max_chars, as
the browser does). Like the browser, a rerun carries every widget value of the page (defaults, and
values the script set through session state), the page's query string, and the fragment id when the
control sits in an st.fragment (--full-reruns: rerun the whole page, the more expensive choice).

Settle = BackMsg sent → the script_finished of the run it caused (FINISHED_EARLY_FOR_RERUN, after
st.rerun or an interrupted run, means another run follows). Counted: exceptions (st.exception
elements, compile errors; deprecation warnings apart), st.error boxes, hangs (no settle within
--hang-seconds: the session reconnects as a new one), moves that changed a plotly figure, bytes
received per interaction (decompressed) and the server's RSS / PSS / CPU summed over its process tree. A warm-up
visits every page once before the clock (--no-warmup: skip). Every wait is bounded; it never
asserts a time; only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import os
import random
import resource
import sys
import time
import urllib.parse
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import websockets
from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.AppPage_pb2 import AppPage
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.WidgetStates_pb2 import WidgetState

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ui_latency import SKIPPED_CHOICE, median, streamlit_server, wait_healthy  # noqa: E402

DONE = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR,
        ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}  # FINISHED_EARLY_FOR_RERUN: another run follows
MOVABLE = ("slider", "selectbox", "radio")  # a select_slider is a Slider proto of type SELECT_SLIDER
TEXTS = ("text_input", "text_area")
WIDGETS = (*MOVABLE, *TEXTS, "checkbox", "number_input")  # others (buttons, uploaders…) the server keeps


# ----------------------------------------------------------------------------- shared with the sessions

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


def first_line(error: BaseException) -> str:
    return (str(error).splitlines() or [type(error).__name__])[0][:160]


def p95(values: list[float]) -> float | None:
    """Returns the nearest-rank 95th percentile."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def seconds(ms: float | None) -> str:
    return "—" if ms is None else f"{ms / 1000:.2f} s"


def loopback_only(url: str) -> str:
    """Returns `url` without a trailing slash; refuses a host other than 127.0.0.1 / localhost."""
    host = urllib.parse.urlparse(url).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit(f"--url must be a loopback address, not {host}")
    return url.rstrip("/")


# ----------------------------------------------------------------------------- widget values


def initial_state(kind: str, w) -> WidgetState | None:
    """Returns the value the browser holds for a widget element it just received (None: no value)."""
    state = WidgetState(id=w.id)
    if kind == "slider" and w.type == Slider.SELECT_SLIDER:
        state.string_array_value.data[:] = list(w.raw_value) if w.set_value else [w.options[int(i)] for i in w.default]
    elif kind == "slider":
        state.double_array_value.data[:] = list(w.value) if w.set_value else list(w.default)
    elif kind == "checkbox":
        state.bool_value = w.value if w.set_value else w.default
    elif kind in ("selectbox", "radio"):  # the value travels as the option's label
        if not w.HasField("raw_value" if w.set_value else "default") or not w.options:
            return None
        state.string_value = w.raw_value if w.set_value else w.options[w.default]
    elif kind in (*TEXTS, "number_input"):  # value / default unset: the box is empty (None)
        if not w.HasField("value" if w.set_value else "default"):
            return None
        value = w.value if w.set_value else w.default
        if kind != "number_input":
            state.string_value = value
        elif w.data_type == NumberInput.INT:
            state.int_value = int(value)
        else:
            state.double_value = value
    else:
        return None
    return state


def stepped(kind: str, w, state: WidgetState) -> WidgetState | None:
    """Returns `state` moved one step (None if the control cannot move)."""
    new = WidgetState()
    new.CopyFrom(state)
    if kind == "slider" and w.type == Slider.SELECT_SLIDER:
        values, options = list(state.string_array_value.data), list(w.options)
        if not values or values[-1] not in options or len(options) < 2:
            return None
        i = options.index(values[-1])
        values[-1] = options[i + 1 if i + 1 < len(options) else i - 1]
        new.string_array_value.data[:] = values
    elif kind == "slider":
        values = list(state.double_array_value.data)
        if not values or w.data_type not in (Slider.INT, Slider.FLOAT) or w.step <= 0:
            return None
        value = values[-1] + w.step if values[-1] + w.step <= w.max + 1e-9 else values[-1] - w.step
        values[-1] = round(value, 9)
        new.double_array_value.data[:] = values
    else:  # selectbox, radio: the next usable choice
        usable = [o for o in w.options if not SKIPPED_CHOICE.search(o)]
        if len(usable) < 2:
            return None
        now = state.string_value
        new.string_value = usable[(usable.index(now) + 1) % len(usable)] if now in usable else usable[0]
    return new


# ----------------------------------------------------------------------------- one websocket session


@dataclass
class Outcome:
    """What one interaction brought back."""

    ms: float | None = None  # None: a hang
    nbytes: int = 0
    runs: int = 0  # script runs started (st.rerun and interrupted runs count too)
    exceptions: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # st.error boxes
    figures: int = 0
    figures_changed: int = 0
    auto_reruns: int = 0


class Client:
    """One Streamlit session over one websocket, holding what the browser would hold."""

    def __init__(self, url: str, hang_s: float, full_reruns: bool = False) -> None:
        self.url, self.hang_s = url.replace("http://", "ws://", 1) + "/_stcore/stream", hang_s
        self.full_reruns = full_reruns  # never send a fragment id
        self.ws = None
        self.pages: list = []  # AppPage protos of the last `navigation` message
        self.page_hash = ""
        self.query = ""
        self.widgets: dict[str, tuple[str, object, str]] = {}  # id -> (kind, proto, fragment id)
        self.values: dict[str, WidgetState] = {}
        self.figures: dict[tuple, str] = {}  # delta path -> hash of the figure's spec

    async def connect(self) -> None:
        self.ws = await websockets.connect(self.url, subprotocols=["streamlit"], max_size=None,
                                           ping_interval=None, open_timeout=self.hang_s)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self.ws = None

    async def visit(self, page, *, by_url: bool) -> Outcome:
        """Opens a page: by its URL (a session's first request) or by a sidebar click."""
        state = ClientState(page_name=page.url_pathname) if by_url else ClientState(page_script_hash=page.page_script_hash)
        return await self.rerun(state)  # the page's own widgets start from their defaults

    async def change(self, new: WidgetState) -> Outcome:
        """Sends one widget's new value with every other widget's current one, as the browser does."""
        self.values[new.id] = new
        state = ClientState(page_script_hash=self.page_hash, query_string=self.query,
                            fragment_id="" if self.full_reruns else self.widgets[new.id][2])
        state.widget_states.widgets.extend(self.values.values())
        return await self.rerun(state)

    async def rerun(self, state: ClientState) -> Outcome:
        """Sends a rerun_script BackMsg; returns once the run it caused has finished (or hung)."""
        info = state.context_info
        info.timezone, info.timezone_offset, info.locale, info.color_scheme = "UTC", 0, "en-US", "light"
        info.url, info.is_embedded = self.url, False
        out, seen = Outcome(), set()
        start = time.monotonic()
        await self.ws.send(BackMsg(rerun_script=state).SerializeToString())
        while True:
            left = start + self.hang_s - time.monotonic()
            try:
                data = await asyncio.wait_for(self.ws.recv(), timeout=max(left, 0.001))
            except TimeoutError:
                return out
            out.nbytes += len(data)
            msg = ForwardMsg()
            msg.ParseFromString(data)
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                out.runs += 1
                seen = set()
                self.page_hash = msg.new_session.page_script_hash
            elif kind == "navigation":
                self.pages = [p for p in msg.navigation.app_pages if not p.is_hidden]
                self.page_hash = msg.navigation.page_script_hash or self.page_hash
            elif kind == "page_info_changed":
                self.query = msg.page_info_changed.query_string
            elif kind == "auto_rerun":
                out.auto_reruns += 1
            elif kind == "session_event" and msg.session_event.HasField("script_compilation_exception"):
                error = msg.session_event.script_compilation_exception
                out.exceptions.append(f"{error.type}: {first_line(Exception(error.message))}")
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                self.element(msg, seen, out)
            elif kind == "script_finished" and msg.script_finished in DONE:
                if msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:  # a full run: what it showed is the page
                    self.widgets = {k: v for k, v in self.widgets.items() if k in seen}
                    self.values = {k: v for k, v in self.values.items() if k in seen}
                out.ms = (time.monotonic() - start) * 1000
                return out

    def element(self, msg: ForwardMsg, seen: set, out: Outcome) -> None:
        """Notes one element: a widget's value, a figure, an exception or error box."""
        element = msg.delta.new_element
        kind = element.WhichOneof("type")
        if kind in WIDGETS:
            w = getattr(element, kind)
            seen.add(w.id)
            self.widgets[w.id] = (kind, w, msg.delta.fragment_id)
            if w.id not in self.values or w.set_value:
                state = initial_state(kind, w)
                if state is not None:
                    self.values[w.id] = state
        elif kind == "plotly_chart":
            path, digest = tuple(msg.metadata.delta_path), hashlib.sha1(element.plotly_chart.spec.encode()).hexdigest()
            out.figures += 1
            out.figures_changed += self.figures.get(path) != digest
            self.figures[path] = digest
        elif kind == "exception":
            text = f"{element.exception.type}: {first_line(Exception(element.exception.message))}"
            (out.warnings if element.exception.is_warning else out.exceptions).append(text)
        elif kind == "alert" and element.alert.format == Alert.ERROR:
            out.errors.append(first_line(Exception(element.alert.body)))

    def controls(self, kinds: tuple[str, ...]) -> list[tuple[str, object]]:
        """Returns (kind, proto) of the page's enabled controls of these kinds that have a value."""
        return [(kind, w) for wid, (kind, w, _) in self.widgets.items()
                if kind in kinds and wid in self.values and not w.disabled and not w.form_id]


# ----------------------------------------------------------------------------- the sessions


@dataclass
class Tally:
    """Everything the sessions saw (one asyncio thread: no locks)."""

    visits: int = 0
    runs: int = 0
    settles: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))  # action -> ms
    nbytes: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))  # action -> bytes
    by_page: dict[str, dict[str, list[float]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    moves: Counter = field(default_factory=Counter)  # control kind -> moves
    moves_with_figure: int = 0
    moves_changing_figure: int = 0
    exceptions: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    bench_errors: list[str] = field(default_factory=list)
    auto_reruns: int = 0


def note(tally: Tally, action: str, where: str, out: Outcome) -> bool:
    """Records one interaction; returns False on a hang."""
    tally.runs += out.runs
    tally.auto_reruns += out.auto_reruns
    tally.exceptions += [f"{where}, {action}: {text}" for text in out.exceptions]
    tally.warnings += [f"{where}, {action}: {text}" for text in out.warnings]
    tally.errors += [f"{where}, {action}: {text}" for text in out.errors]
    if out.ms is None:
        tally.hangs.append(f"{action} on {where}")
        return False
    tally.settles[action].append(round(out.ms, 1))
    tally.nbytes[action].append(out.nbytes)
    tally.by_page[where][action].append(round(out.ms, 1))
    return True


class Hung(Exception):
    """An interaction that did not settle in --hang-seconds: the session reconnects as a new one."""


async def session(number: int, url: str, pages: list, args, deadline: float, tally: Tally) -> None:
    """One student: visit, think, move, think, sometimes type; until the deadline."""
    rng = random.Random(args.seed * 10_007 + number)

    async def act(action: str, where: str, pending) -> Outcome:
        out = await pending
        if not note(tally, action, where, out):
            raise Hung
        await asyncio.sleep(rng.uniform(*args.think))
        return out

    await asyncio.sleep(rng.random() * args.ramp)
    client, current = None, None
    while time.monotonic() < deadline:
        page = rng.choice([p for p in pages if p.page_script_hash != current] or pages)
        where = page.url_pathname or "home"
        try:
            fresh = client is None
            if fresh:
                client = Client(url, args.hang_seconds, args.full_reruns)
                await client.connect()
            if fresh or len(pages) > 1:  # a one-page app (the floor): nowhere to go, move its slider
                await act("first visit" if fresh else "visit", where, client.visit(page, by_url=fresh))
                tally.visits += 1
                current = page.page_script_hash
            controls = client.controls(MOVABLE)
            kind, w = rng.choice(controls) if controls else (None, None)
            new = stepped(kind, w, client.values[w.id]) if controls else None
            if time.monotonic() < deadline and new is not None:
                out = await act("move", where, client.change(new))
                tally.moves["select_slider" if kind == "slider" and w.type == Slider.SELECT_SLIDER else kind] += 1
                tally.moves_with_figure += out.figures > 0
                tally.moves_changing_figure += out.figures_changed > 0
            boxes = client.controls(TEXTS)
            if time.monotonic() < deadline and boxes and rng.randrange(args.type_every) == 0:
                kind, w = rng.choice(boxes)
                text = rng.choice(ODD_TEXTS)
                text = text[: w.max_chars] if w.max_chars else text  # the browser's box takes no more
                if text != client.values[w.id].string_value:
                    await act("type", where, client.change(WidgetState(id=w.id, string_value=text)))
        except Hung:
            await client.close()
            client = None
        except (OSError, websockets.ConnectionClosed, KeyError, ValueError) as error:
            tally.bench_errors.append(f"{where}: {type(error).__name__}: {first_line(error)}")
            client = None
            await asyncio.sleep(0.5)
    if client is not None:
        await client.close()


async def warm_up(url: str, args) -> tuple[list, Tally]:
    """Visits home twice (a fresh server's first session may see the legacy pages/ listing), then
    every page once, so models load before the clock; returns the pages and what it saw."""
    seen, client = Tally(), Client(url, max(args.hang_seconds, 300))
    await client.connect()
    home = AppPage()  # url_pathname "": the main page
    for _ in range(2):
        note(seen, "visit", "home", await client.visit(home, by_url=True))
    pages = list(client.pages) or [home]
    if not args.no_warmup:
        for page in pages:
            print(f"warm-up: {page.page_name}", file=sys.stderr)
            seen.visits += note(seen, "visit", page.url_pathname or "home", await client.visit(page, by_url=False))
    await client.close()
    return pages, seen


async def drive(url: str, roots: list[int], args) -> dict:
    """Returns the run's figures: warm-up, then args.sessions sessions for args.seconds."""
    report: dict = {"url": url, "sessions": args.sessions, "seconds": args.seconds, "cpus": os.cpu_count(),
                    "ramp": args.ramp, "think": list(args.think), "full_reruns": args.full_reruns}
    report["usage_start"] = tree_usage(roots) if roots else None
    pages, report["warmup"] = await warm_up(url, args)
    report["pages"] = [p.url_pathname or "home" for p in pages]
    tally = Tally()
    report["usage_before"] = tree_usage(roots) if roots else None
    report["loadavg_before"] = os.getloadavg()
    client_cpu = resource.getrusage(resource.RUSAGE_SELF)
    started = time.monotonic()
    await asyncio.gather(*(session(i, url, pages, args, started + args.seconds, tally) for i in range(args.sessions)))
    report["wall_s"] = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    report["client_cpu_s"] = after.ru_utime + after.ru_stime - client_cpu.ru_utime - client_cpu.ru_stime
    report["usage_after"] = tree_usage(roots) if roots else None
    report["loadavg_after"] = os.getloadavg()
    report["tally"] = tally
    return report


# ----------------------------------------------------------------------------- printing


def print_report(report: dict) -> None:
    """Prints the run as markdown tables: the totals, then settle times per page."""
    tally: Tally = report["tally"]
    warmup: Tally = report["warmup"]
    moves = sum(tally.moves.values())
    rows = [
        ("server", report["url"]),
        ("sessions × seconds", f"{report['sessions']} × {report['seconds']:.0f} s (ran {report['wall_s']:.0f} s)"),
        ("arrivals / think time / reruns", f"over {report['ramp']:.0f} s / {report['think'][0]:g}–{report['think'][1]:g} s "
         f"after each action / {'full' if report['full_reruns'] else 'fragment when the control is in one'}"),
        ("load average before / after", f"{report['loadavg_before'][0]:.2f} / {report['loadavg_after'][0]:.2f} ({report['cpus']} CPUs)"),
        ("warm-up (each page once, before the clock)", f"{warmup.visits} visits, {len(warmup.exceptions)} exceptions, "
         f"{len(warmup.hangs)} hangs, first-visit settle max {seconds(max(warmup.settles['visit'], default=None))}"),
        ("visits", tally.visits),
        ("moves", f"{moves} ({', '.join(f'{k} {v}' for k, v in sorted(tally.moves.items()))}); "
         f"{tally.moves_changing_figure} changed a figure, {tally.moves_with_figure} redrew one"),
        ("texts typed", len(tally.settles.get("type", []))),
        ("script runs started (incl. st.rerun / interrupted)", tally.runs),
        ("exceptions (st.exception, compile errors)", len(tally.exceptions)),
        ("st.error boxes", len(tally.errors)),
        (f"hangs (no settle in {report['hang_seconds']:.0f} s)", len(tally.hangs)),
    ]
    for action in ("first visit", "visit", "move", "type"):
        values, sizes = tally.settles.get(action, []), tally.nbytes.get(action, [])
        rows.append((f"settle median / p95, {action}", f"{seconds(median(values))} / {seconds(p95(values))} (n = {len(values)}); "
                     f"median {(median(sizes) or 0) / 1024:.0f} KiB received"))
    start, before, after = report["usage_start"], report["usage_before"], report["usage_after"]
    if before and after:
        rows.append(("server RSS start / after warm-up / end", f"{start['rss_mb']:.0f} / {before['rss_mb']:.0f} / "
                     f"{after['rss_mb']:.0f} MB (PSS end {after['pss_mb']:.0f} MB; {after['processes']} processes)"))
        cpu, interactions = after["cpu_s"] - before["cpu_s"], sum(len(v) for v in tally.settles.values())
        rows.append(("server CPU", f"{cpu:.1f} s in {report['wall_s']:.0f} s ({cpu / report['wall_s']:.2f} cores); "
                     f"**{cpu / max(tally.visits, 1):.2f} s per visit**, {cpu / max(interactions, 1):.2f} s per interaction"))
    else:
        rows.append(("server RSS / CPU", "not read (give --server-pids)"))
    rows.append(("client CPU (this process)", f"{report['client_cpu_s']:.1f} s ({report['client_cpu_s'] / report['wall_s']:.2f} cores)"))
    rows.append(("auto-rerun requests seen (not followed)", tally.auto_reruns))
    rows.append(("bench errors", len(tally.bench_errors)))
    print("| figure | value |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")
    print("\n| page | visits: n, median, p95 | moves: n, median, p95 | typed: n, median |\n|---|---|---|---|")
    for page in sorted(tally.by_page):
        row = tally.by_page[page]
        visits = row.get("visit", []) + row.get("first visit", [])
        cells = [f"{len(v)}, {seconds(median(v))}, {seconds(p95(v))}" for v in (visits, row.get("move", []))]
        print(f"| {page} | {cells[0]} | {cells[1]} | {len(row.get('type', []))}, {seconds(median(row.get('type', [])))} |")
    for name, items in (("warm-up exceptions", warmup.exceptions), ("exceptions", tally.exceptions),
                        ("warnings", tally.warnings), ("st.error boxes", tally.errors), ("hangs", tally.hangs),
                        ("bench errors", tally.bench_errors)):
        if items:
            print(f"\n{name}: " + "; ".join(f"{text} (×{n})" for text, n in Counter(items).most_common(5)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=16, help="websocket sessions (default 16)")
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
    parser.add_argument("--full-reruns", action="store_true", help="rerun the whole page even for a control in a fragment")
    args = parser.parse_args(argv)
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
