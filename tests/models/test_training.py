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
