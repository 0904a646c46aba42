"""What every training loop here shares: the jitted step, progress reports and stop requests.

- ``make_train_step(loss_fn, optimizer)`` returns one jitted optax step over a pure loss.
- A ``Progress`` receives (step, total, metrics) after every step: ``TqdmProgress`` in a
  terminal, the app's st.progress adapter (ui/widgets.py) in the browser, ``NO_PROGRESS``
  in tests.
- A ``StopRequest`` is a flag the loop checks between steps. Ctrl-C and SIGUSR1 set it in
  the CLI (``with stop.on_signals():``); the app's Stop button calls ``request()``. A loop
  that sees it stops after the current step and keeps what it has learnt.

Families keep what is their own (REINFORCE, L-BFGS, warm starts, snapshots) in their
train.py; only these repeated parts live here.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
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
