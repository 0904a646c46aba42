"""What ui/streamlit_private.py relies on in Streamlit: fails loudly when an upgrade changes it."""

import dataclasses
import re
from pathlib import Path

import streamlit
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext
from streamlit.testing.v1 import AppTest

from ui import streamlit_private

REQUIREMENTS = Path(__file__).resolve().parents[2] / "requirements.txt"


def test_streamlit_is_the_pinned_version():
    pinned = re.search(r"^streamlit==(\S+)", REQUIREMENTS.read_text(), re.M).group(1)
    assert streamlit.__version__ == pinned


def test_a_pages_folder_turns_the_legacy_mode_on_and_leaving_it_turns_it_off(tmp_path):
    (tmp_path / "pages").mkdir()
    saved = PagesManager.uses_pages_directory
    try:
        PagesManager.uses_pages_directory = None
        PagesManager(str(tmp_path / "app.py"))  # Streamlit sets the class flag from the folder
        assert PagesManager.uses_pages_directory is True
        assert streamlit_private.leave_legacy_pages_mode() is True
        assert PagesManager.uses_pages_directory is False
        assert streamlit_private.leave_legacy_pages_mode() is False
    finally:
        PagesManager.uses_pages_directory = saved


def test_the_run_context_has_what_the_interface_reads():
    fields = {f.name for f in dataclasses.fields(ScriptRunContext)}
    assert {"is_history_navigation", "fragment_ids_this_run", "session_state"} <= fields
    assert isinstance(ScriptRunContext.page_script_hash, property)


def test_outside_a_run_the_interface_answers_plainly():
    assert streamlit_private.page_id() == ""
    assert streamlit_private.is_history_navigation() is False
    assert streamlit_private.in_fragment_rerun() is False
    with streamlit_private.seeding_query_params() as seeding:
        assert seeding == {}


def _seeded_app():
    import json

    import streamlit as st

    from ui import streamlit_private as private

    with private.seeding_query_params() as seeding:
        st.text(json.dumps(seeding, sort_keys=True))
        seeding["n"] = ["7"]  # a control bound to the URL takes its first value from this copy
    st.text(f"page {private.page_id()!r} back {private.is_history_navigation()} fragment {private.in_fragment_rerun()}")
    st.number_input("n", 0, 10, 1, key="n", bind="query-params")


def test_a_bound_control_seeds_itself_from_the_copy_the_interface_reaches():
    at = AppTest.from_function(_seeded_app)
    at.query_params["m"] = "2"
    at.run()
    assert not at.exception
    assert at.text[0].value == '{"m": ["2"]}'  # the parameters the page was opened with
    page, back, fragment = re.fullmatch(r"page '(\w+)' back (\w+) fragment (\w+)", at.text[1].value).groups()
    assert page and back == "False" and fragment == "False"
    assert at.number_input[0].value == 7  # from the copy, though the URL never held n
