"""The shared training seams: the jitted step, stop requests and where runs write."""

import os
import signal

import jax.numpy as jnp
import numpy as np
import optax
import pytest

from models.checkpoint import CHECKPOINT_ROOT
from models.training import RUNS_ROOT, StopRequest, make_train_step, output_file, output_folder


def test_the_step_applies_the_optimizer_to_the_gradient_and_reports_the_loss():
    def loss(params, x, y):
        return jnp.mean((params["w"] * x - y) ** 2), params["w"]

    step = make_train_step(loss, optax.sgd(0.1), has_aux=True)
    params = {"w": jnp.asarray(2.0)}
    x, y = jnp.asarray([1.0, 2.0]), jnp.asarray([1.0, 2.0])
    new, _, value, aux = step(params, optax.sgd(0.1).init(params), x, y)
    grad = np.mean(2 * (2.0 * np.array([1, 2]) - np.array([1, 2])) * np.array([1, 2]))  # d/dw of the mean square
    assert float(value) == pytest.approx(2.5) and float(aux) == 2.0
    assert float(new["w"]) == pytest.approx(2.0 - 0.1 * grad)


def test_a_signal_requests_a_stop_only_inside_the_block():
    stop = StopRequest()
    before = signal.getsignal(signal.SIGUSR1)
    with stop.on_signals():
        assert not stop.requested
        os.kill(os.getpid(), signal.SIGUSR1)
        assert stop.requested
    assert signal.getsignal(signal.SIGUSR1) is before
    other = StopRequest()
    other.request()
    assert other.requested


def test_runs_never_replace_a_committed_checkpoint_unless_asked(tmp_path):
    committed = CHECKPOINT_ROOT / "seq2seq"
    assert output_folder(None, committed, ["bahdanau.safetensors"]) == RUNS_ROOT / "seq2seq"
    assert output_folder(None, committed, ["x"], overwrite_committed=True) == committed
    with pytest.raises(SystemExit, match="committed checkpoint; pass --overwrite-committed"):
        output_folder(committed, committed, ["bahdanau.safetensors"])
    assert output_folder(tmp_path, committed, ["bahdanau.safetensors"]) == tmp_path
    han = CHECKPOINT_ROOT / "han" / "han.safetensors"
    assert output_file(None, han) == RUNS_ROOT / "han" / "han.safetensors"
    with pytest.raises(SystemExit):
        output_file(han, han)
    assert output_file(tmp_path / "mine.safetensors", han) == tmp_path / "mine.safetensors"


def test_the_service_runs_at_most_its_limit_at_once_in_submission_order():
    import threading
    import time

    from models.training import TrainingService

    service = TrainingService(limit=2, max_steps=10**6, max_seconds=60)
    lock, running, peak, order = threading.Lock(), [0], [0], []
    release = threading.Event()

    def stub(progress):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
            order.append(progress.job_id)
        release.wait(10)
        with lock:
            running[0] -= 1
        return progress.job_id

    jobs = [service.submit(stub, label=f"job {i}") for i in range(6)]
    deadline = time.time() + 10
    while service.running() < 2 and time.time() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # nobody else may start while two run
    assert service.running() == 2 and peak[0] == 2
    assert [service.position(j) for j in jobs[2:]] == [1, 2, 3, 4]
    service.cancel(jobs[5])  # a waiting job can leave the line
    release.set()
    for job in jobs:
        while job.active and time.time() < deadline:
            time.sleep(0.01)
    assert peak[0] == 2 and order == [j.id for j in jobs[:5]]  # first come, first served
    assert [j.status for j in jobs] == ["done"] * 5 + ["stopped"] and jobs[0].result == jobs[0].id


def test_a_job_stops_at_its_step_budget_and_a_failure_is_one_line():
    import time

    from models.training import TrainingService

    service = TrainingService(limit=1, max_steps=5, max_seconds=60)
    budgets = {}

    def counting(progress):
        step = 0
        while not progress.stop.requested:
            step += 1
            progress.update(step, 100, loss=1.0 / step)
        budgets["note"] = progress.budget_note
        return step

    def failing(progress):
        raise ValueError("the CSV went away\nsecond line")

    ok, bad = service.submit(counting, label="a"), service.submit(failing, label="b")
    deadline = time.time() + 10
    while (ok.active or bad.active) and time.time() < deadline:
        time.sleep(0.01)
    assert ok.status == "stopped" and ok.result == 5 and ok.step == 5 and ok.total == 100
    assert budgets["note"] == "stopped at the budget of 5 steps per training"
    assert bad.status == "failed" and bad.message == "the CSV went away"
