"""Session-wide settings of the test suite."""

import atexit
import os
import shutil
import tempfile

from hypothesis import settings

# Hypothesis draws the same examples on every run (derandomize): a property that fails, fails every time,
# and CI never meets an example no earlier run saw. HYPOTHESIS_PROFILE=explore draws new ones, to look for more.
settings.register_profile("ci", derandomize=True, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# JAX's compilation cache (models/compile_cache.py) in a folder of this run's own, made empty when
# the run starts and removed when it ends: the suite never depends on what earlier runs or the user's
# cache left, while the processes of one run share what they compile (the pytest-xdist workers, which
# inherit the folder from the process that starts them, the CLI runs and the app servers the tests
# start). tests/models/test_compile_cache.py tests the cache in folders of its own.
RUN_CACHE = "ATTENTION_LAB_TEST_RUN_CACHE"
if RUN_CACHE not in os.environ:
    os.environ[RUN_CACHE] = tempfile.mkdtemp(prefix="attention-lab-test-jax-")
    atexit.register(shutil.rmtree, os.environ[RUN_CACHE], True)
os.environ["ATTENTION_LAB_JAX_CACHE"] = os.environ[RUN_CACHE]

# Pages warm their other variants in a background thread (ui.widgets.warm_in_background). In the
# suite that thread would compile while other tests run: it is off here, and tests/pages/test_warm.py
# runs it on purpose.
os.environ["ATTENTION_LAB_WARM"] = "0"

# The suite compiles hundreds of small functions and runs each a few times, so compiling is most of
# its time. XLA's CPU backend at LLVM -O0 compiles them about 3 × faster. It is the same HLO and the
# same IEEE arithmetic (no fast-math at any level; matmuls and convolutions are library calls either
# way); only the machine code is less tuned. ATTENTION_LAB_TEST_FAST_COMPILE=0 runs the suite with the
# shipped settings. The browser tests' servers always run as shipped (tests/e2e/conftest.py), and
# tests/models/transformer/test_parity.py checks MiniLM against Hugging Face under both.
# The shipped flags are read once, in the process that starts the run: a pytest-xdist worker inherits
# both variables, its XLA_FLAGS already holding the fast-compile flag.
SHIPPED_XLA_FLAGS = os.environ.setdefault("ATTENTION_LAB_SHIPPED_XLA_FLAGS", os.environ.get("XLA_FLAGS", ""))
FAST_COMPILE_FLAG = "--xla_backend_optimization_level=0"
if os.environ.get("ATTENTION_LAB_TEST_FAST_COMPILE", "1") != "0" and FAST_COMPILE_FLAG not in SHIPPED_XLA_FLAGS:
    os.environ["XLA_FLAGS"] = f"{SHIPPED_XLA_FLAGS} {FAST_COMPILE_FLAG}".strip()
