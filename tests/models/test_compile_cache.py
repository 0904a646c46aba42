"""The persistent compilation cache and the stored executables (models/aot.py): where they live,
and that a second process loads instead of compiling, without building the model."""

import json
import os
import subprocess
import sys
from pathlib import Path

from models import compile_cache

ROOT = Path(__file__).resolve().parents[2]

# One process: turn the cache on, decode one date with the Bahdanau model (a stored executable)
# and jit a small function (JAX's compilation cache); report cache hits, whether Flax was
# imported, and the record.
PROBE = """
import json, sys, jax, numpy as np
from models.compile_cache import enable_compilation_cache
hits = []
jax.monitoring.register_event_listener(lambda event, **kw: hits.append(event) if event.endswith("cache_hits") else None)
folder = enable_compilation_cache()
from models.registry import get_mechanism
record = get_mechanism("bahdanau").build({"text": "9 May 2018"})
flax = "flax" in sys.modules
jax.jit(lambda x: x * 2 + 1)(np.arange(3.0))
print(json.dumps({"folder": str(folder), "hits": len(hits), "sum": float(record.weights.sum()),
                  "output": record.meta.get("output"), "flax": flax}))
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


def _probe(folder: Path) -> dict:
    env = {**os.environ, compile_cache.ENV: str(folder), "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr.strip().splitlines()[-1:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_what_the_first_compiled(tmp_path):
    def probe():
        return _probe(tmp_path / "jax-cache")

    first = probe()
    assert first["folder"] == str(tmp_path / "jax-cache") and first["hits"] == 0 and first["flax"]
    assert list((tmp_path / "jax-cache" / "stored").glob("*.bin")), "the first process stored its decoder"
    second = probe()
    assert second["hits"] >= 1, "JAX's cache gave the second process the small function"
    assert not second["flax"], "the stored decoder ran without building the model"
    assert second["sum"] == first["sum"] and second["output"] == first["output"] == "2018-05-09"


def test_a_broken_stored_executable_is_compiled_again(tmp_path, monkeypatch):
    import jax.numpy as jnp
    import numpy as np

    from models.aot import StoredFunction

    monkeypatch.setenv(compile_cache.ENV, str(tmp_path))
    built = []

    def build():
        built.append(1)
        return lambda params, x: jnp.tanh(params["w"] * x)

    args = ({"w": np.float32(2.0)}, np.arange(4, dtype=np.float32))
    first = np.asarray(StoredFunction("probe", build, sources=["models/aot.py"])(*args))
    stored = list((tmp_path / "stored").glob("*.bin"))
    assert len(stored) == 1 and built == [1]
    again = np.asarray(StoredFunction("probe", build, sources=["models/aot.py"])(*args))
    assert built == [1], "a new StoredFunction loaded the executable instead of building"
    stored[0].write_bytes(b"not an executable")
    repaired = np.asarray(StoredFunction("probe", build, sources=["models/aot.py"])(*args))
    assert built == [1, 1] and np.array_equal(first, again) and np.array_equal(first, repaired)
    np.testing.assert_allclose(first, np.tanh(2 * np.arange(4)), rtol=1e-6)
    other = StoredFunction("probe", build, sources=["models/aot.py"], static="other")(*args)
    assert built == [1, 1, 1] and len(list((tmp_path / "stored").glob("*.bin"))) == 2, "static settings key apart"
    assert np.array_equal(np.asarray(other), first)


def test_an_executable_stored_after_a_persistent_cache_hit_still_runs(tmp_path):
    # After an update changes a source file, the stored executable's key changes but JAX's own
    # cache still holds the same compile. An executable JAX's cache hands back serialises without
    # some of its machine code: stored as it was, the next process failed with "NOT_FOUND:
    # Function bitcast_gather_fusion.1 not found" on every date.
    folder = tmp_path / "jax-cache"
    first = _probe(folder)
    for stored in (folder / "stored").glob("*.bin"):
        stored.unlink()  # what a changed source fingerprint amounts to
    stored_again = _probe(folder)
    loaded = _probe(folder)
    assert not loaded["flax"], "the third process ran the stored decoder"
    assert first["output"] == stored_again["output"] == loaded["output"] == "2018-05-09"
    assert first["sum"] == stored_again["sum"] == loaded["sum"]
