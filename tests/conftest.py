"""Session-wide settings of the test suite."""

import os

# Tests count compiles and must not depend on what earlier runs left in the user's cache
# (tests/models/test_compile_cache.py tests the cache in a folder of its own).
os.environ["ATTENTION_LAB_JAX_CACHE"] = "off"

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
SHIPPED_XLA_FLAGS = os.environ.get("XLA_FLAGS", "")
FAST_COMPILE_FLAG = "--xla_backend_optimization_level=0"
os.environ["ATTENTION_LAB_SHIPPED_XLA_FLAGS"] = SHIPPED_XLA_FLAGS
if os.environ.get("ATTENTION_LAB_TEST_FAST_COMPILE", "1") != "0" and FAST_COMPILE_FLAG not in SHIPPED_XLA_FLAGS:
    os.environ["XLA_FLAGS"] = f"{SHIPPED_XLA_FLAGS} {FAST_COMPILE_FLAG}".strip()
