"""Quality of the committed GPT (checkpoints/lm/), read through the loader a user's GPT-2 folder takes:
lower perplexity than the add-k bigram on held-out text, an induction head and a previous-token head, a log
of every head's scores in which the induction head forms; and the measurement helpers against loop oracles.

The held-out text is the committed sample (tests/fixtures/lm_heldout_sample.json: held-out pages of
the Python documentation and the training split's bigram counts of every pair it predicts), so these
tests need no Debian package."""

from __future__ import annotations

import numpy as np
import pytest

from models.heads import detectors as hd
from models.lm import quality, task
from models.lm.tokenizer import EOT_ID

# ------------------------------------------------------------------ helpers against oracles


def test_bigram_nll_matches_a_loop_oracle():
    stream = np.array([0, 3, 1, 3, 1, 2, 0, 3, 3, 1, 0])
    counts = quality.bigram_counts(stream, 4)
    assert counts.sum() == len(stream) - 1 and counts[3, 1] == 3 and counts[0, 3] == 2
    windows = np.array([[0, 3, 1, 2], [0, 2, 2, 3]])
    k = 0.1
    want = []
    for row in windows:
        for a, b in zip(row[:-1], row[1:]):
            c_ab = sum(1 for x, y in zip(stream[:-1], stream[1:]) if x == a and y == b)
            c_a = sum(1 for x in stream[:-1] if x == a)
            want.append(-np.log((c_ab + k) / (c_a + 4 * k)))
    prev, nxt = quality.predicted_pairs(windows)
    got = quality.bigram_nll(counts[prev, nxt], counts.sum(1)[prev], 4, k)
    np.testing.assert_allclose(got, want)
    perplexity, best_k = quality.best_bigram(counts, windows)
    every = {kk: np.exp(quality.bigram_nll(counts[prev, nxt], counts.sum(1)[prev], 4, kk).mean()) for kk in quality.K_GRID}
    assert best_k == min(every, key=every.get) and perplexity == pytest.approx(every[best_k])


def test_sample_counts_give_the_same_bigram_as_the_full_table():
    rng = np.random.default_rng(0)
    stream = rng.integers(0, 12, size=400)
    counts = quality.bigram_counts(stream, 12)
    windows = task.eval_windows(rng.integers(0, 12, size=60).astype(np.int32), 8, bos=0)
    prev, nxt = quality.predicted_pairs(windows)
    sample = {"bigram": {"vocab": 12, "k": 0.03, "rows": {str(a): int(counts[a].sum()) for a in set(prev.tolist())},
                         "pairs": {f"{a},{b}": int(counts[a, b]) for a, b in set(zip(prev.tolist(), nxt.tolist()))}}}
    want = np.exp(quality.bigram_nll(counts[prev, nxt], counts.sum(1)[prev], 12, 0.03).mean())
    assert quality.sample_bigram_perplexity(sample, windows) == pytest.approx(want)


def test_next_token_nll_matches_a_loop_oracle():
    rng = np.random.default_rng(1)
    logits, windows = rng.normal(size=(2, 5, 7)), rng.integers(0, 7, size=(2, 5))
    got = quality.next_token_nll(logits, windows)
    for b in range(2):
        for t in range(4):
            z = logits[b, t] - logits[b, t].max()
            assert got[b, t] == pytest.approx(-(z[windows[b, t + 1]] - np.log(np.exp(z).sum())))


def test_first_token_share_and_previous_token_score_match_loops():
    rng = np.random.default_rng(2)
    maps = rng.random((3, 2, 6, 6)) * np.tri(6)
    maps /= maps.sum(-1, keepdims=True)
    first = quality.first_token_share(maps)
    previous = quality.previous_token_score(maps)
    for i in range(3):
        for h in range(2):
            assert first[i, h] == pytest.approx(np.mean([maps[i, h, q, 0] for q in range(1, 6)]))
            hit = sum(maps[i, h, q, q - 1] for q in range(1, 6))
            assert previous[i, h] == pytest.approx(hit / maps[i, h].sum(), rel=1e-6)


def test_repeated_probe_is_bos_then_one_random_half_twice():
    probe = quality.repeated_probe(50, bos=7, half=9, count=5, seed=3)
    assert probe.shape == (5, 19) and (probe[:, 0] == 7).all()
    assert (probe[:, 1:] != 7).all() and ((probe[:, 1:] >= 0) & (probe[:, 1:] < 50)).all()
    np.testing.assert_array_equal(probe[:, 1:10], probe[:, 10:])
    assert len(np.unique(probe[:, 1:])) >= 25  # spread over the vocabulary (45 draws of 49 ids)
    assert quality.probe_half(128) == quality.HALF and quality.probe_half(32) == 15


# ------------------------------------------------------------------ the committed model


@pytest.fixture(scope="module")
def model():
    from models.lm.loader import load_folder

    return load_folder(quality.CHECKPOINT_DIR)


@pytest.fixture(scope="module")
def sample_windows(model):
    from models.lm.tokenizer import encode_plain

    sample = quality.load_sample()
    stream = task.token_stream(encode_plain(model.tokenizer, sample["texts"]), EOT_ID)
    return sample, task.eval_windows(stream, model.config.max_positions, EOT_ID)


def test_the_checkpoint_is_a_small_gpt2_folder():
    files = {p.name: p.stat().st_size for p in quality.CHECKPOINT_DIR.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", quality.LOG_FILE} <= set(files)
    assert sum(files.values()) <= 12_000_000


def test_perplexity_on_held_out_text_is_below_the_bigram(model, sample_windows):
    sample, windows = sample_windows
    assert windows.size > 4_000 and all(task.split_of(name) == "heldout" for name in sample["pages"])
    ours = quality.perplexity(model.graphdef, model.state, windows)
    bigram = quality.sample_bigram_perplexity(sample, windows)
    assert ours < 0.9 * bigram, (ours, bigram)


def test_an_induction_head_and_a_previous_token_head(model, sample_windows):
    # docs/models/lm.md: L1H3 matches prefixes at 0.56 on [BOS] + r + r (a content-blind head ≈ 0.014),
    # reading the previous-token head L0H0 (0.35) of the layer below.
    _, windows = sample_windows
    half = quality.probe_half(model.config.max_positions)
    probe = quality.repeated_probe(model.config.vocab_size, EOT_ID, half=half)
    scores = quality.head_scores(model.graphdef, model.state, windows[:16], probe, half)
    (layer, head), best = scores.best("prefix_matching")
    assert layer == 1 and best >= quality.GOAL and best > 20 * scores.random_baseline
    logged = np.max(quality.load_log()["log"]["prefix_matching"][-1])
    assert best == pytest.approx(logged, abs=0.005)  # the same probe as the log's
    assert scores.best("previous")[0][0] == 0 and scores.best("previous")[1] >= 0.25
    first = scores.first_token
    assert first.shape == (model.config.num_layers, model.config.num_heads) and ((0 <= first) & (first <= 1)).all()


def test_the_training_log_records_every_head(model):
    info = quality.load_log()
    log = info["log"]
    steps = log["step"]
    assert 15 <= len(steps) <= 45 and steps[0] == 0 and steps == sorted(steps)
    shape = (model.config.num_layers, model.config.num_heads)
    for name in quality.SCORES:
        assert all(np.shape(entry) == shape for entry in log[name])
    assert np.max(log["prefix_matching"][0]) < 0.1  # the untrained model has no induction head
    # The induction head formed during training (step 7,600 of 22,000, docs/models/lm.md), not at the start.
    emerged = quality.emergence_step(log)
    assert emerged is not None and steps[0] < emerged < steps[-1]
    assert np.max(log["previous"][-1]) > 5 * np.max(log["previous"][0])  # a previous-token head grew
    assert log["heldout_loss"][-1] < log["heldout_loss"][0] - 2
    assert info["heldout"]["perplexity"] < info["heldout"]["bigram_perplexity"]
    record = quality.training_record()
    assert record.weights.shape == (len(quality.SCORES), shape[0] * shape[1], len(steps))
    np.testing.assert_allclose(record.weights[0, :, -1], np.ravel(log["prefix_matching"][-1]), atol=1e-6)


def test_head_scores_use_the_shared_detectors():
    rng = np.random.default_rng(4)
    maps = rng.random((2, 2, 3, 9, 9)) * np.tri(9)
    maps /= maps.sum(-1, keepdims=True)
    np.testing.assert_allclose(quality.previous_token_score(maps),
                               hd.head_score(maps, hd.previous_token_pattern(9)), rtol=1e-6)
