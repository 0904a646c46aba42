"""The training entry point on a tiny made-up documentation folder: it writes a GPT-2 folder that the
loader reads back to the same outputs, a training log with every head's scores, and stops when asked."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from models.lm import quality, task, train
from models.training import StopRequest

WORDS = "the for statement iterates over items of any sequence list string in order that they appear".split()


def _sources(root):
    # Ten training pages and three held-out ones (the split is by page name: task.split_of).
    rng = np.random.default_rng(0)
    names = [f"library/page{i}" for i in range(200)]
    chosen = [n for n in names if task.split_of(n) == "train"][:10] + [n for n in names if task.split_of(n) == "heldout"][:3]
    for name in chosen:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        paragraphs = [" ".join(rng.choice(WORDS, size=30)) + "." for _ in range(6)]
        (root / f"{name}.rst.txt").write_text(f"{name}\n=======\n\n" + "\n\n".join(paragraphs) + "\n")
    return root


def _args(tmp_path, **overrides):
    parser = argparse.ArgumentParser()
    train.add_arguments(parser)
    args = parser.parse_args(["--steps", "8", "--batch", "2", "--layers", "2", "--heads", "2", "--width", "16",
                              "--context", "16", "--vocab", "300", "--source", str(_sources(tmp_path / "src")),
                              "--out", str(tmp_path / "model"), "--sample-out", str(tmp_path / "sample.json")])
    for key, value in overrides.items():
        setattr(args, key, value)
    return args


def test_a_tiny_run_writes_a_gpt2_folder_the_loader_reads_back(tmp_path):
    from models.lm.loader import load_folder
    from models.lm.model import run

    args = _args(tmp_path)
    assert train.run(args) == 0
    folder = tmp_path / "model"
    info = json.loads((folder / quality.LOG_FILE).read_text())
    log = info["log"]
    assert log["step"] == list(range(9)) and info["steps"] == 8  # 8 steps, 20 log points at most: every step
    assert np.shape(log["prefix_matching"][-1]) == (2, 2) and log["loss"][0] is None
    assert info["heldout"]["perplexity"] > 1 and info["heldout"]["bigram_perplexity"] > 1
    assert info["command"].startswith("python -m models.train lm --steps 8")
    assert info["repeat"]["share"] == 0.25 and info["repeat"]["span"] is None and "real text" in info["repeat"]["text"]
    lm = load_folder(folder)
    assert lm.config.num_layers == 2 and lm.config.max_positions == 16 and lm.config.bos_token_id == 0
    ids = lm.tokenizer.encode("the for statement iterates").ids
    assert ids[0] == 0
    logits, maps = run(lm.graphdef, lm.state, np.asarray([ids]))
    assert np.isfinite(logits).all() and maps.shape == (2, 1, 2, len(ids), len(ids))
    sample = json.loads((tmp_path / "sample.json").read_text())
    assert sample["texts"] and sample["bigram"]["vocab"] == lm.config.vocab_size


def test_the_loop_stops_when_asked_and_keeps_the_log(tmp_path):
    args = _args(tmp_path, steps=50)
    data = train.prepare_data(args.vocab, args.source)
    stop = StopRequest()
    stop.request()
    _, _, _, log = train.train(args, data, stop)
    assert log["step"] == [0]  # the untrained model measured, nothing after


def test_learning_rate_warms_up_then_decays_to_a_tenth():
    schedule = train.learning_rate(1e-3, 1000)
    assert float(schedule(0)) == 0.0
    assert float(schedule(train.WARMUP)) == pytest.approx(1e-3)
    assert float(schedule(1000)) == pytest.approx(1e-4, rel=1e-3)


def test_a_run_continued_from_a_folder_starts_from_its_weights_and_extends_its_log(tmp_path):
    from flax import nnx

    from models.lm.loader import load_folder

    first = _args(tmp_path)
    assert train.run(first) == 0
    before = load_folder(tmp_path / "model")
    second = _args(tmp_path, steps=4, init_from=tmp_path / "model", out=tmp_path / "more", sample_out=None)
    data = train.prepare_data(second.vocab, second.source, second.init_from)
    assert data[0].to_str() == before.tokenizer.to_str()  # the folder's tokenizer, not a new one
    cfg, graphdef, params, log = train.train(second, data, stop=_stop_now())
    # Stopped before its first step: the weights are the folder's and the log is the folder's.
    flat = {path: np.asarray(v) for path, v in nnx.to_flat_state(params)}
    loaded = {path: np.asarray(v) for path, v in nnx.to_flat_state(before.state)}
    assert flat.keys() == loaded.keys() and all(np.array_equal(flat[k], loaded[k]) for k in flat)
    assert log["step"] == list(range(9))
    assert train.run(second) == 0
    info = json.loads((tmp_path / "more" / quality.LOG_FILE).read_text())
    assert info["log"]["step"] == list(range(9)) + [9, 10, 11, 12] and info["steps"] == 12
    assert info["log"]["seconds"][9] >= info["log"]["seconds"][8]
    assert " && " in info["command"] and "--init-from" in info["command"] and info["earlier"]["steps"] == 8


def _stop_now() -> StopRequest:
    stop = StopRequest()
    stop.request()
    return stop
