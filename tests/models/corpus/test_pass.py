"""The corpus pass against the single-input records and their numpy statistics, input by input."""

from __future__ import annotations

import numpy as np
import pytest

from models.corpus import run
from models.corpus.heads import STATISTIC_IDS
from models.heads import detectors
from models.heads import statistics as single
from models.transformer.records import load_runner
from tests.models.transformer.tiny_bert import make_tiny_bert

TEXTS = [
    "the cat sat on the mat .",
    "hello world !",
    "a dog , a cat , a dog , a cat",
    "",
    "   ",
    "the cat sat on the mat . the cat sat on the mat . the dog sat on a rug ! " * 2,
    "b",
    "cafe ( x ) = y ; z : 1 2 3",
    "the dog sat on the mat ? the dog sat ! hello world",
]


def reference(record) -> np.ndarray:
    """float64 [L, H, S]: models/heads/statistics.py and detectors.py on one record, in STATISTIC_IDS order."""
    w = record.weights.astype(np.float64)
    labels = list(record.query_labels)
    out = {s: single.head_statistic(w, labels, s) for s in single.STATISTIC_IDS}
    out["induction_score"] = detectors.head_score(w, detectors.induction_pattern(labels))
    gap = np.abs(np.arange(len(labels))[:, None] - np.arange(len(labels))[None, :])
    out["distance"] = (w * gap).sum(-1).mean(-1)
    return np.stack([np.asarray(out[s], np.float64) for s in STATISTIC_IDS], axis=-1)


@pytest.fixture(scope="module")
def tiny_runner(tmp_path_factory):
    return load_runner(make_tiny_bert(tmp_path_factory.mktemp("tiny")))


def per_input(model, texts):
    # Each text alone through the pass: its mean is its own statistics.
    return [run.corpus_statistics([t], model).mean for t in texts]


def test_statistics_equal_the_single_input_records_input_by_input(tiny_runner):
    model = run.CorpusModel(tiny_runner, max_batch_bytes=2 * 2 * 4 * 16 * 16 * 4)  # 2 rows at 16 tokens
    real = [t for t in TEXTS if t.strip()]
    records = tiny_runner.attention_batch(real)
    encodings = [tiny_runner.encode(t) for t in real]
    # The batched device function, input by input, against the numpy definitions.
    for enc, record in zip(encodings, records):
        got = model.statistics([enc])[0]
        # float32 sums over the T² pairs of a map: the distance (up to T tokens a pair) within 1e-6 of its size
        np.testing.assert_allclose(got, reference(record), atol=1e-5, rtol=1e-6)
    # And batched with others of the same bucket.
    got = model.statistics(encodings[:2])
    for row in range(2):
        np.testing.assert_allclose(got[row], reference(records[row]), atol=1e-5, rtol=1e-6)
    # The whole pass: mean and spread over inputs equal numpy's over the references.
    expected = np.stack([reference(r) for r in records])
    result = run.corpus_statistics(TEXTS, model)
    assert (result.count, result.skipped) == (len(real), len(TEXTS) - len(real))
    np.testing.assert_allclose(result.mean, expected.mean(0), atol=1e-5, rtol=1e-6)
    np.testing.assert_allclose(result.std, expected.std(0), atol=1e-5)
    assert result.tokens == sum(len(e) for e in encodings)
    # Top inputs: for each head the lowest-entropy inputs, ascending, with their texts.
    entropy = expected[..., STATISTIC_IDS.index("entropy")]  # [n, L, H]
    for layer in range(entropy.shape[1]):
        for head in range(entropy.shape[2]):
            best = np.sort(entropy[:, layer, head])[: run.TOP_K]
            np.testing.assert_allclose(result.top_entropy[layer, head], best, atol=1e-5)
            for number in result.top_index[layer, head]:
                assert result.texts[int(number)] == real[int(number)][: run.TOP_TEXT_CHARS]


def test_a_padding_row_or_a_one_token_input_changes_nothing(tiny_runner):
    model = run.CorpusModel(tiny_runner, max_batch_bytes=8 * 2 * 4 * 16 * 16 * 4)  # 8 rows: 7 padding rows
    enc = tiny_runner.encode("b")
    alone = model.statistics([enc])[0]
    np.testing.assert_allclose(alone, reference(tiny_runner.attention("b")), atol=1e-5, rtol=1e-6)
    assert np.isfinite(alone).all()


def test_batch_rows_fit_the_byte_bound_and_the_devices():
    assert run.batch_rows(128, 6, 12) == 32  # 32 × 4.7 MB ≤ 256 MB < 64 × 4.7 MB
    assert run.batch_rows(512, 6, 12) == 2
    assert run.batch_rows(16, 6, 12) == run.MAX_ROWS
    assert run.batch_rows(512, 6, 12, devices=4) == 4  # one row per device at least
    assert run.batch_rows(512, 6, 12, max_bytes=1) == 1
    for length in (16, 64, 256):
        rows = run.batch_rows(length, 6, 12, devices=3)
        assert rows % 3 == 0


def test_stop_and_limit_end_the_pass_early(tiny_runner):
    model = run.CorpusModel(tiny_runner)
    asked = []

    def stop():
        asked.append(1)
        return len(asked) > 3

    result = run.corpus_statistics(TEXTS, model, stop=stop)
    assert result.stopped and result.count == 0  # queued inputs are dropped, nothing ran
    seen = []
    result = run.corpus_statistics(iter(TEXTS), model, limit=3, progress=seen.append)
    assert not result.stopped and result.count == 3 and seen == [3]
