"""What every training loop here shares: the jitted step, progress reports and stop requests.

- ``make_train_step(loss_fn, optimizer)`` returns one jitted optax step over a pure loss.
- A ``Progress`` receives (step, total, metrics) after every step: ``TqdmProgress`` in a
  terminal, the app's st.progress adapter (ui/widgets.py) in the browser, ``NO_PROGRESS``
  in tests.
- A ``StopRequest`` is a flag the loop checks between steps. Ctrl-C and SIGUSR1 set it in
  the CLI (``with stop.on_signals():``); the app's Stop button calls ``request()``. A loop
  that sees it stops after the current step and keeps what it has learnt.

- A ``TrainingService`` runs the app's trainings in background threads, at most a few at
  once, each within a step and time budget (in-app "train your own").

Families keep what is their own (REINFORCE, L-BFGS, warm starts, snapshots) in their
train.py; only these repeated parts live here.
"""

from __future__ import annotations

import contextlib
import secrets
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import jax
import optax

from models.checkpoint import CHECKPOINT_ROOT

# Where training runs write by default: beside the committed checkpoints, ignored by git.
RUNS_ROOT = CHECKPOINT_ROOT.parent / "runs"


def make_train_step(
    loss_fn: Callable[..., Any], optimizer: optax.GradientTransformation, *, has_aux: bool = False,
    donate: bool = True, static_argnames: tuple[str, ...] = (),
) -> Callable[..., tuple]:
    """Returns jit(step(params, opt_state, *batch) -> (params, opt_state, loss, aux)).

    loss_fn(params, *batch) returns the scalar loss, or (loss, aux) with has_aux. aux is
    None without has_aux. donate: params and opt_state buffers are reused in place (the
    caller must not read the old ones after the call).
    """

    def step(params, opt_state, *batch, **static):
        if has_aux:
            (loss, aux), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, *batch, **static)
        else:
            loss, grads = jax.value_and_grad(loss_fn)(params, *batch, **static)
            aux = None
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss, aux

    return partial(jax.jit, donate_argnums=(0, 1) if donate else (), static_argnames=static_argnames)(step)


class Progress(Protocol):
    """Receives one report per training step."""

    def update(self, step: int, total: int, **metrics: float) -> None: ...

    def close(self) -> None: ...


class _NoProgress:
    def update(self, step: int, total: int, **metrics: float) -> None:
        pass

    def close(self) -> None:
        pass


NO_PROGRESS: Progress = _NoProgress()


class TqdmProgress:
    """A tqdm bar in the terminal; metrics appear after the bar, refreshed every `every` steps."""

    def __init__(self, desc: str, total: int, *, unit: str = "step", every: int = 1):
        from tqdm import tqdm

        self._bar = tqdm(total=total, desc=desc, unit=unit, dynamic_ncols=True, mininterval=0.5)
        self._every = max(1, int(every))

    def update(self, step: int, total: int, **metrics: float) -> None:
        if self._bar.total != total:
            self._bar.total = total
        self._bar.update(step - self._bar.n)
        if metrics and (step % self._every == 0 or step == total):
            self._bar.set_postfix({k: f"{v:.4f}" for k, v in metrics.items()}, refresh=False)

    def write(self, text: str) -> None:
        self._bar.write(text)

    def close(self) -> None:
        self._bar.close()


class StopRequest:
    """A thread-safe "stop after this step" flag."""

    def __init__(self) -> None:
        self._event = threading.Event()

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    def request(self) -> None:
        """Asks the loop to stop after its current step."""
        self._event.set()

    @contextlib.contextmanager
    def on_signals(self, signals: tuple[int, ...] = (signal.SIGINT, signal.SIGUSR1)) -> Iterator[StopRequest]:
        """Within the block, the first Ctrl-C or SIGUSR1 requests a stop (main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {sig: signal.signal(sig, lambda signum, frame: self.request()) for sig in signals}
        try:
            yield self
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def output_folder(
    requested: Path | None, committed: Path, names: Iterable[str], *, overwrite_committed: bool = False
) -> Path:
    """Returns the folder a training run writes `names` into; SystemExit with one line if it
    would replace a committed checkpoint without --overwrite-committed.

    requested None: the committed folder with --overwrite-committed, else runs/<family>/.
    """
    if requested is None:
        return committed if overwrite_committed else RUNS_ROOT / committed.name
    folder = Path(requested)
    inside = folder.resolve().is_relative_to(CHECKPOINT_ROOT.resolve())
    clashes = [n for n in names if (folder / n).exists()]
    if inside and clashes and not overwrite_committed:
        raise SystemExit(
            f"{folder / clashes[0]} is a committed checkpoint; pass --overwrite-committed to replace it, "
            "or --out another folder"
        )
    return folder


def output_file(requested: Path | None, committed: Path, *, overwrite_committed: bool = False) -> Path:
    """Returns the file a training run writes; the same rule as output_folder for one file."""
    default = None if requested is None else Path(requested).parent
    folder = output_folder(default, committed.parent, [committed.name if requested is None else Path(requested).name],
                           overwrite_committed=overwrite_committed)
    return folder / (committed.name if requested is None else Path(requested).name)


# ------------------------------------------------------------------ training jobs for the app


@dataclass
class Job:
    """One training run submitted by a user of the app.

    status: "queued", "running", "done", "stopped" (asked, or at the budget) or "failed".
    step/total/metrics: the latest progress report; message: one line for the user.
    """

    id: str
    label: str
    status: str = "queued"
    step: int = 0
    total: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    message: str = ""
    result: Any = None
    stop: StopRequest = field(default_factory=StopRequest)
    submitted: float = field(default_factory=time.monotonic)
    started: float | None = None
    finished: float | None = None

    @property
    def active(self) -> bool:
        return self.status in ("queued", "running")


class JobProgress:
    """The Progress a job's function reports to; it also enforces the job's budget."""

    def __init__(self, job: Job, max_steps: int, max_seconds: float):
        self._job, self._max_steps, self._max_seconds = job, max_steps, max_seconds
        self._start = time.monotonic()
        self.budget_note = ""  # why the budget stopped the job, if it did

    @property
    def stop(self) -> StopRequest:
        return self._job.stop

    @property
    def job_id(self) -> str:
        return self._job.id

    def update(self, step: int, total: int, **metrics: float) -> None:
        job = self._job
        job.step, job.total, job.metrics = step, total, dict(metrics)
        if job.stop.requested:
            return
        if step >= self._max_steps:
            self.budget_note = f"stopped at the budget of {self._max_steps:,} steps per training"
            job.stop.request()
        elif time.monotonic() - self._start > self._max_seconds:
            self.budget_note = f"stopped at the budget of {self._max_seconds / 60:g} minutes per training"
            job.stop.request()

    def note(self, text: str) -> None:
        """Sets the one-line status shown to the user (e.g. "encoding the documents")."""
        self._job.message = text

    def close(self) -> None:
        pass


class TrainingService:
    """Runs training jobs in background threads: at most `limit` at once, the others waiting in
    submission order, each within a step and wall-clock budget. A job's function receives a
    JobProgress (report steps, read .stop) and returns its result.

    The app keeps one per process (st.cache_resource), so twenty students pressing Train at
    once cannot start twenty trainings on two cores: two run, the rest see their place in line.
    Finished jobs are kept for `keep` more submissions, then dropped from memory.
    """

    def __init__(self, limit: int = 2, *, max_steps: int = 10_000, max_seconds: float = 600.0, keep: int = 64):
        self.limit, self.max_steps, self.max_seconds, self.keep = limit, max_steps, max_seconds, keep
        self._jobs: dict[str, Job] = {}
        self._waiting: list[str] = []
        self._running = 0
        self._cond = threading.Condition()

    def submit(self, fn: Callable[[JobProgress], Any], *, label: str) -> Job:
        """Queues fn and returns its Job at once; fn runs in its own thread when a slot is free."""
        job = Job(id=secrets.token_urlsafe(9), label=label)
        with self._cond:
            self._jobs[job.id] = job
            self._waiting.append(job.id)
            self._forget_old()
        threading.Thread(target=self._run, args=(job, fn), name=f"training-{job.id}", daemon=True).start()
        return job

    def get(self, job_id: str) -> Job | None:
        with self._cond:
            return self._jobs.get(job_id)

    def position(self, job: Job) -> int:
        """Returns 0 for a running (or finished) job, else its place in the line (1 = next)."""
        with self._cond:
            return self._waiting.index(job.id) + 1 if job.id in self._waiting else 0

    def running(self) -> int:
        with self._cond:
            return self._running

    def _run(self, job: Job, fn: Callable[[JobProgress], Any]) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._waiting[0] == job.id and self._running < self.limit or job.stop.requested)
            self._waiting.remove(job.id)
            self._cond.notify_all()
            if job.stop.requested:  # stopped while waiting
                job.status, job.finished, job.message = "stopped", time.monotonic(), "stopped before it started"
                return
            self._running += 1
            job.status, job.started = "running", time.monotonic()
        try:
            job.result = fn(JobProgress(job, self.max_steps, self.max_seconds))
            job.status = "stopped" if job.stop.requested else "done"
        except Exception as error:  # noqa: BLE001 - a failed training is one line for its user
            job.status, job.message = "failed", str(error).splitlines()[0] if str(error) else type(error).__name__
        finally:
            with self._cond:
                job.finished = time.monotonic()
                self._running -= 1
                self._cond.notify_all()

    def cancel(self, job: Job) -> None:
        """Asks a job to stop (a waiting job leaves the line)."""
        job.stop.request()
        with self._cond:
            self._cond.notify_all()

    def _forget_old(self) -> None:
        finished = [j for j in self._jobs.values() if not j.active]
        for job in sorted(finished, key=lambda j: j.finished or 0)[: max(0, len(finished) - self.keep)]:
            del self._jobs[job.id]
