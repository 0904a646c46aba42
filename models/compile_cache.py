"""JAX's persistent compilation cache, kept in a user cache folder.

Every new input shape costs an XLA compile (0.3–3 s on 2 cores). With the cache on, a process
that compiles a function another process has already compiled loads the executable from disk
instead: the CLI's second run, the app after a restart, a training started again. Tracing
still happens; compiling does not.

Folder: $ATTENTION_LAB_JAX_CACHE if set ("off" turns the cache off), else
$XDG_CACHE_HOME/attention-lab/jax (~/.cache/attention-lab/jax). The cache is bounded to
MAX_CACHE_BYTES: JAX deletes the least recently used entries beyond it.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV = "ATTENTION_LAB_JAX_CACHE"
OFF = ("", "0", "off", "none", "false")
MAX_CACHE_BYTES = 1 << 30


def cache_folder() -> Path | None:
    """Returns the folder the compilation cache uses, or None when it is turned off."""
    value = os.environ.get(ENV)
    if value is not None:
        return None if value.strip().lower() in OFF else Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attention-lab" / "jax"


def enable_compilation_cache() -> Path | None:
    """Returns the cache folder after pointing JAX at it (None: turned off or not writable).

    Call before the first jit compile; later calls change nothing."""
    folder = cache_folder()
    if folder is None:
        return None
    import jax

    if jax.config.jax_compilation_cache_dir is not None:  # already on (app.py calls this on every rerun)
        return Path(jax.config.jax_compilation_cache_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    if not os.access(folder, os.W_OK):
        return None
    jax.config.update("jax_compilation_cache_dir", str(folder))
    # JAX caches only compiles over 1 s by default; ours are often shorter but add up.
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_compilation_cache_max_size", MAX_CACHE_BYTES)
    return folder
