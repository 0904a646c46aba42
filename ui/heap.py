"""Keeps garbage collection cheap in a server whose heap is mostly modules and models.

A full collection walks every container object the process tracks: with JAX, Flax, plotly and the
models loaded that is about 200,000 objects and 100–190 ms on this machine, and the collector holds
the GIL all that time, so every session's messages wait behind it. Streamlit ran one after every
script run (its hidden `runner.postScriptGC` option): under 16 sessions that was 57 % of the
server's CPU (docs/PERFORMANCE.md, "Garbage collection"). .streamlit/config.toml turns it off;
Python's own generational collector still runs, a full collection each time the long-lived heap
has grown by a quarter.

Almost all of those objects live as long as the process: modules, classes, functions, the loaded
models. `gc.freeze()` moves everything alive at that moment into a permanent generation that
collections skip. Done once after the imports and once after each page's first run (which loads
its models), the collector's full collections walk only what the sessions made since. Frozen
objects are still freed by reference counting; only a reference cycle that was alive at a freeze
is never collected, which bounds what this can keep to what existed at a dozen moments.
"""

from __future__ import annotations

import gc

import streamlit as st


@st.cache_resource(show_spinner=False, max_entries=64)
def freeze_long_lived(stage: str) -> int:
    """Returns the number of frozen objects after collecting garbage and freezing what is alive,
    once per `stage` in this process (a name such as "imports" or a page's url path)."""
    gc.collect()  # what is garbage now must not become permanent
    gc.freeze()
    return gc.get_freeze_count()
