"""Session-wide settings of the test suite."""

import os

# Tests count compiles and must not depend on what earlier runs left in the user's cache
# (tests/models/test_compile_cache.py tests the cache in a folder of its own).
os.environ["ATTENTION_LAB_JAX_CACHE"] = "off"
