"""Every private name of Streamlit that the app relies on, in one place.

Each one keeps a feature working that Streamlit's public API cannot give (streamlit==1.67.0):

- legacy pages/ mode: until some session has run app.py, Streamlit runs a deep link such as
  /playground as a file of `pages/` directly, with a sidebar listing every file. Its
  `PagesManager.uses_pages_directory` flag is switched off as st.navigation itself does.
- the page that runs, whether the run is a fragment's own, and whether the browser's Back or
  Forward started it: the run's ScriptRunContext.
- the seeding copy of the URL: a control bound to the URL (bind="query-params") seeds itself from
  the parameters the page was opened with, a copy kept apart from st.query_params. Back restoring
  a page, and a number box refusing "inf" in one line, write into that copy.

tests/pages/test_streamlit_private.py fails when an upgrade changes what these rely on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import get_script_run_ctx


def leave_legacy_pages_mode() -> bool:
    """Switches Streamlit's legacy pages/ mode off for this process, as st.navigation does; returns
    whether it was on (the run then has to start again, through app.py)."""
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        return True
    return False


def page_id() -> str:
    """Returns an id of the page this run shows ("" outside a run)."""
    return getattr(get_script_run_ctx(), "page_script_hash", "") or ""


def is_history_navigation() -> bool:
    """Whether the browser's Back or Forward started this run."""
    return bool(getattr(get_script_run_ctx(), "is_history_navigation", False))


def in_fragment_rerun() -> bool:
    """Whether this run is a fragment's own rerun (st.fragment), not the page's."""
    return bool(getattr(get_script_run_ctx(), "fragment_ids_this_run", None))


@contextlib.contextmanager
def seeding_query_params() -> Iterator[dict[str, list[str]]]:
    """Yields Streamlit's copy of the parameters the page was opened with ({name: [values]}), from
    which a control bound to the URL takes its value when it has none yet; changes to it hold for
    the rest of the session's runs. Yields an empty dict outside a run."""
    state = getattr(get_script_run_ctx(), "session_state", None)
    if state is None:
        yield {}
        return
    with state.query_params() as params:
        yield params._initial_query_params
