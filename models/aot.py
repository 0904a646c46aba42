"""Compiled functions kept on disk, so that a short process (the CLI) neither traces, nor
compiles, nor builds the model.

JAX's persistent compilation cache (models/compile_cache.py) saves the XLA compile, but a new
process still imports Flax, builds the nnx module and traces the function before it can look
the compile up: about a second on 2 cores, more than a one-input export itself takes. A
`StoredFunction` keeps the compiled executable of each input signature in the cache folder
(jax.experimental.serialize_executable); a later process loads it and calls it directly, and the
function and the model are built only when no executable is stored yet.

Arguments are pytrees of arrays in plain containers (dicts, lists, tuples): parameters travel as
{name: array}, so no Flax type is needed to call a stored executable. An executable is stored
under a key made of the function's name, its static settings, a fingerprint of the source
files it is built from, the argument signature, JAX's version, the device and the CPU's
instruction-set flags; one that fails to load, or fails on its first call, is deleted and
compiled again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from models.compile_cache import cache_folder

ROOT = Path(__file__).resolve().parents[1]
# Part of every key: format 2 is compiled with JAX's persistent cache off (see _compile_and_store);
# files stored before it are never looked up again and age out.
STORE_FORMAT = "stored-executable 2"
MAX_STORED = 512  # executables kept; the least recently used beyond this are deleted
_CACHE_SWITCH = threading.Lock()


def _cpu_flags() -> str:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()


def sources_fingerprint(paths: Sequence[str]) -> str:
    """Returns a hash of the contents of these source files (relative to the repository)."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.encode())
        digest.update((ROOT / path).read_bytes())
    return digest.hexdigest()[:16]


def _signature(args: tuple) -> str:
    import jax

    leaves, treedef = jax.tree_util.tree_flatten(args)
    return repr(treedef) + ";" + ";".join(f"{np.dtype(x.dtype).str}{tuple(x.shape)}" for x in leaves)


class StoredFunction:
    """A jitted pure function whose compiled executables are kept on disk, one per signature.

    build() returns the pure function; it runs (and may import Flax and build the model) only
    when an executable has to be compiled. static: settings the function closes over (they are
    part of the key). sources: the files the function is made from (their contents are too).
    """

    def __init__(self, name: str, build: Callable[[], Callable[..., Any]], *, sources: Sequence[str],
                 static: Any = None):
        self.name = name
        self._build = build
        self._sources = tuple(sources)
        self._static = repr(static)
        self._function: Callable[..., Any] | None = None
        self._loaded: dict[tuple, Callable[..., Any]] = {}
        self._prefix: str | None = None

    def _key(self, signature: str) -> str:
        if self._prefix is None:
            import jax

            device = jax.devices()[0]
            self._prefix = "\n".join([STORE_FORMAT, self.name, self._static, sources_fingerprint(self._sources), jax.__version__,
                                      device.platform, getattr(device, "device_kind", ""), _cpu_flags(),
                                      os.environ.get("XLA_FLAGS", "")])
        return hashlib.sha256((self._prefix + "\n" + signature).encode()).hexdigest()[:40]

    def _jitted(self) -> Callable[..., Any]:
        if self._function is None:
            import jax

            self._function = jax.jit(self._build())
        return self._function

    def __call__(self, *args: Any) -> Any:
        folder = cache_folder()
        if folder is None:  # caching turned off: an ordinary jit
            return self._jitted()(*args)
        import jax

        leaves, treedef = jax.tree_util.tree_flatten(args)
        # cheap, hashable; an array's own dtype (np.result_type of an array is deprecated in NumPy 2.4)
        seen = (treedef, tuple((np.shape(x), np.dtype(x.dtype) if hasattr(x, "dtype") else np.result_type(x))
                               for x in leaves))
        executable = self._loaded.get(seen)
        if executable is not None:
            return executable(*args)
        path = folder / "stored" / f"{self._key(_signature(args))}.bin"
        loaded = _load(path)
        if loaded is not None:
            try:  # the first call of a loaded executable is checked: a broken one is compiled again
                out = jax.block_until_ready(loaded(*args))
                self._loaded[seen] = loaded
                return out
            except Exception:  # noqa: BLE001 - e.g. "NOT_FOUND: Function … not found" from a bad file
                path.unlink(missing_ok=True)
        executable = self._compile_and_store(path, args)
        self._loaded[seen] = executable
        return executable(*args)

    def _compile_and_store(self, path: Path, args: tuple) -> Callable[..., Any]:
        from jax.experimental.serialize_executable import serialize

        # An executable that JAX's persistent cache handed back serialises without the machine
        # code of some of its functions: it loads, then fails with "Function … not found". So
        # the executable that is stored is compiled with that cache off.
        lowered = self._jitted().lower(*args)
        with _persistent_cache_off():
            compiled = lowered.compile()
        folder = path.parent
        try:
            from models.checkpoint import write_atomic

            folder.mkdir(parents=True, exist_ok=True)
            write_atomic(path, pickle.dumps(serialize(compiled)))
            _trim(folder)
        except (OSError, ValueError, TypeError, pickle.PicklingError):
            pass  # storing is an optimisation: the compiled function works either way
        return compiled


def _load(path: Path) -> Callable[..., Any] | None:
    """Returns the executable stored at `path`, or None (a missing, stale or broken file is deleted)."""
    if not path.is_file():
        return None
    from jax.experimental.serialize_executable import deserialize_and_load

    try:
        payload, in_tree, out_tree = pickle.loads(path.read_bytes())
        executable = deserialize_and_load(payload, in_tree, out_tree)
    except Exception:  # noqa: BLE001 - a stale or broken file is compiled again
        path.unlink(missing_ok=True)
        return None
    os.utime(path)  # recently used
    return executable


@contextlib.contextmanager
def _persistent_cache_off():
    """JAX's persistent cache off for the compiles inside: briefly and for the whole process
    (its "is the cache used" answer is memoised per process, so a per-thread switch is not
    enough). A compile in another thread meanwhile just compiles instead of reading the cache."""
    import jax
    from jax.experimental.compilation_cache.compilation_cache import reset_cache

    with _CACHE_SWITCH:
        was = jax.config.jax_enable_compilation_cache
        jax.config.update("jax_enable_compilation_cache", False)
        reset_cache()
        try:
            yield
        finally:
            jax.config.update("jax_enable_compilation_cache", was)
            reset_cache()


def _trim(folder: Path, keep: int = MAX_STORED) -> None:
    files = sorted(folder.glob("*.bin"), key=lambda f: f.stat().st_mtime, reverse=True)
    for stale in files[keep:]:
        stale.unlink(missing_ok=True)
