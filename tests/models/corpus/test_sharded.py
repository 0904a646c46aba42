"""The corpus pass sharded over two forced host devices equals the unsharded pass.

XLA_FLAGS must be set before jax starts, so the sharded run is a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from models.corpus import run
from models.transformer.records import load_runner
from tests.models.corpus.test_pass import TEXTS
from tests.models.transformer.tiny_bert import make_tiny_bert

ROOT = Path(__file__).resolve().parents[3]
SHARDED = """
import json, sys
import jax
import numpy as np
from models.corpus import run
from models.transformer.records import load_runner
folder, out, texts = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
model = run.CorpusModel(load_runner(folder), max_batch_bytes=int(sys.argv[4]))
stats = run.corpus_statistics(texts, model)
np.savez(out, mean=stats.mean, std=stats.std, count=stats.count, devices=model.devices,
         shards=min(len(p.sharding.device_set) for p in model.params.values()))
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_tiny_bert(tmp_path_factory.mktemp("tiny"))


def test_two_forced_host_devices_give_the_unsharded_statistics(folder, tmp_path):
    texts = TEXTS * 3
    budget = 4 * 2 * 4 * 32 * 32 * 4  # 4 rows at 32 tokens, 16 at 16: several batches, padding rows too
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=2", "JAX_PLATFORMS": "cpu"}
    out = tmp_path / "sharded.npz"
    subprocess.run([sys.executable, "-c", SHARDED, str(folder), str(out), json.dumps(texts), str(budget)],
                   cwd=ROOT, env=env, check=True, timeout=300)
    sharded = np.load(out)
    assert int(sharded["devices"]) == 2 and int(sharded["shards"]) == 2  # really two devices, params on both
    model = run.CorpusModel(load_runner(folder), max_batch_bytes=budget)
    assert model.devices == 1
    alone = run.corpus_statistics(texts, model)
    assert int(sharded["count"]) == alone.count == sum(1 for t in texts if t.strip())
    np.testing.assert_allclose(sharded["mean"], alone.mean, atol=1e-5)
    np.testing.assert_allclose(sharded["std"], alone.std, atol=1e-5)
