"""The persistent compilation cache: where it lives, and that a second process loads instead of compiling."""

import json
import os
import subprocess
import sys
from pathlib import Path

from models import compile_cache

ROOT = Path(__file__).resolve().parents[2]

# One process: turn the cache on, compile the Bahdanau date model's decode for one input, report
# the cache hits and the weights' checksum.
PROBE = """
import json, jax
from models.compile_cache import enable_compilation_cache
hits = []
jax.monitoring.register_event_listener(lambda event, **kw: hits.append(event) if event.endswith("cache_hits") else None)
folder = enable_compilation_cache()
from models.registry import get_mechanism
record = get_mechanism("bahdanau").build({"text": "9 May 2018"})
print(json.dumps({"folder": str(folder), "hits": len(hits), "sum": float(record.weights.sum()),
                  "output": record.meta.get("output")}))
"""


def test_the_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(compile_cache.ENV, str(tmp_path / "c"))
    assert compile_cache.cache_folder() == tmp_path / "c"
    for off in ("off", "0", ""):
        monkeypatch.setenv(compile_cache.ENV, off)
        assert compile_cache.cache_folder() is None
    monkeypatch.delenv(compile_cache.ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert compile_cache.cache_folder() == tmp_path / "attention-lab" / "jax"


def test_a_second_process_loads_what_the_first_compiled(tmp_path):
    env = {**os.environ, compile_cache.ENV: str(tmp_path / "jax-cache"), "JAX_PLATFORMS": "cpu"}

    def probe():
        done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=300, check=True)
        return json.loads(done.stdout.strip().splitlines()[-1])

    first = probe()
    assert first["folder"] == str(tmp_path / "jax-cache") and first["hits"] == 0
    entries = list((tmp_path / "jax-cache").iterdir())
    assert entries, "the first process wrote its executables"
    second = probe()
    assert second["hits"] >= 1, "the second process loaded at least one executable"
    assert second["sum"] == first["sum"] and second["output"] == first["output"] == "2018-05-09"
