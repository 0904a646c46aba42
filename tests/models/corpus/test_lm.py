"""The decoder-LM corpus pass against single-input lm records and numpy statistics, input by input; sharded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from models.corpus import run
from models.corpus.heads import LM_STATISTIC_IDS
from models.corpus.lm import LMCorpusModel, is_punctuation_label
from models.lm.records import load_runner

ROOT = Path(__file__).resolve().parents[3]
TEXTS = [
    "The for statement iterates over the items of any sequence.",
    "",
    "x = 1; y = 2; x = 1; y = 2; x = 1; y = 2",
    "print(x)",
    "a",
    "The list is a sequence. The list is a sequence. The list is a sequence, in order!" * 2,
    "   ",
    "Modules can import other modules, and the names are placed in the importing module's global table.",
]


def reference(record) -> np.ndarray:
    """float64 [L, H, S] in LM_STATISTIC_IDS order, from one record's causal maps [L, H, T, T] (numpy loops)."""
    w = record.weights.astype(np.float64)
    ids = np.asarray(record.extras["input_ids"])
    t = w.shape[-1]
    q, k = np.meshgrid(np.arange(t), np.arange(t), indexing="ij")
    punct = np.array([is_punctuation_label(label) for label in record.query_labels])
    if record.meta["special_first"]:
        punct[0] = False
    duplicate = (ids[:, None] == ids[None, :]) & (k < q)
    after_copy = np.zeros((t, t), bool)  # key k right after an earlier copy (at k - 1) of the query's token
    after_copy[:, 1:] = duplicate[:, :-1]
    total = w.sum((-2, -1))
    out = {
        "entropy": -(np.where(w > 0, w * np.log(np.where(w > 0, w, 1)), 0)).sum(-1).mean(-1),
        "first": w[..., :, 0].mean(-1),
        "self": np.diagonal(w, axis1=-2, axis2=-1).mean(-1),
        "previous": np.diagonal(w, offset=-1, axis1=-2, axis2=-1).mean(-1) if t > 1 else np.zeros(w.shape[:2]),
        "punctuation": w[..., punct].sum(-1).mean(-1),
        "previous_score": (w * (k == q - 1)).sum((-2, -1)) / total,
        "duplicate_score": (w * duplicate).sum((-2, -1)) / total,
        "induction_score": (w * after_copy).sum((-2, -1)) / total,
        "distance": (w * np.abs(q - k)).sum(-1).mean(-1),
    }
    return np.stack([out[s] for s in LM_STATISTIC_IDS], axis=-1)


@pytest.fixture(scope="module")
def runner():
    return load_runner()


def test_lm_statistics_equal_the_single_input_records_input_by_input(runner):
    cfg = runner.config
    model = LMCorpusModel(runner, max_batch_bytes=2 * cfg.num_layers * cfg.num_heads * 32 * 32 * 4)  # 2 rows at 32
    real = [t for t in TEXTS if t.strip()]
    records = [runner.attention(t) for t in real]
    assert np.abs(np.triu(records[0].weights, 1)).max() == 0  # causal maps: nothing above the diagonal
    encodings = [model.encode(t) for t in real]
    for enc, record in zip(encodings, records):
        np.testing.assert_allclose(model.statistics([enc])[0], reference(record), atol=1e-5, rtol=1e-6)
    expected = np.stack([reference(r) for r in records])
    result = run.corpus_statistics(TEXTS, model)
    assert result.statistics == LM_STATISTIC_IDS
    assert (result.count, result.skipped) == (len(real), len(TEXTS) - len(real))
    assert result.tokens == sum(len(e.ids) for e in encodings)
    np.testing.assert_allclose(result.mean, expected.mean(0), atol=1e-5, rtol=1e-6)
    np.testing.assert_allclose(result.std, expected.std(0), atol=1e-5)
    entropy = expected[..., 0]
    np.testing.assert_allclose(result.top_entropy, np.sort(np.moveaxis(entropy, 0, -1), -1)[..., : run.TOP_K],
                               atol=1e-5)


SHARDED = """
import json, sys
import jax
import numpy as np
from models.corpus import run
from models.corpus.lm import LMCorpusModel
from models.lm.records import load_runner
out, texts, budget = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
model = LMCorpusModel(load_runner(), max_batch_bytes=budget)
stats = run.corpus_statistics(texts, model)
np.savez(out, mean=stats.mean, std=stats.std, count=stats.count, devices=model.devices,
         shards=min(len(p.sharding.device_set) for p in jax.tree.leaves(model.params)))
"""


def test_lm_pass_on_two_forced_host_devices_equals_the_unsharded_pass(runner, tmp_path):
    cfg = runner.config
    budget = 4 * cfg.num_layers * cfg.num_heads * 32 * 32 * 4
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=2", "JAX_PLATFORMS": "cpu"}
    out = tmp_path / "sharded.npz"
    subprocess.run([sys.executable, "-c", SHARDED, str(out), json.dumps(TEXTS * 2), str(budget)],
                   cwd=ROOT, env=env, check=True, timeout=300)
    sharded = np.load(out)
    assert int(sharded["devices"]) == 2 and int(sharded["shards"]) == 2
    alone = run.corpus_statistics(TEXTS * 2, LMCorpusModel(runner, max_batch_bytes=budget))
    assert int(sharded["count"]) == alone.count
    np.testing.assert_allclose(sharded["mean"], alone.mean, atol=1e-5)
    np.testing.assert_allclose(sharded["std"], alone.std, atol=1e-5)
