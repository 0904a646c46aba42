"""A full page's place in the story the guided tour tells (ui/tour.py's steps): "Step n of m ·
← previous · next →" and one sentence naming the survey's idea the page shows.

The steps a page holds are the tour's steps whose full page it is (the seq2seq page holds steps 1–4);
← previous and → next open the tour at the steps just before and after them, in the session's
language. A page the tour does not visit gets its sentence and a link to the tour's start.
"""

from __future__ import annotations

import streamlit as st

from models.pages import START_HERE
from ui.i18n import LANG_PARAM, current_language, translator
from ui.tour import STEPS


def steps_of(page_file: str) -> list[int]:
    """Returns the tour's step numbers (1-based) whose full page is `page_file`, in order."""
    return [number for number, step in enumerate(STEPS, start=1) if step.page == page_file]


def story_place(page_file: str, idea: str) -> None:
    """Shows the page's place in the tour and `idea` (already translated): one line, under the title."""
    _ = translator()
    language = {LANG_PARAM: current_language()}
    numbers = steps_of(page_file)
    with st.container(horizontal=True, vertical_alignment="center", key="story_place"):
        if not numbers:
            st.markdown(_("Beside the guided tour of {count} steps.").format(count=len(STEPS)))
            st.page_link(START_HERE.file, label=_("Start the tour"), query_params={"step": "1", **language})
        else:
            first, last = numbers[0], numbers[-1]
            st.markdown((_("**Step {number} of {count}**") if first == last else
                         _("**Steps {first}–{last} of {count}**")).format(number=first, first=first, last=last,
                                                                         count=len(STEPS)))
            if first > 1:
                st.page_link(START_HERE.file, label=_("← previous: {title}").format(title=_(STEPS[first - 2].title)),
                             query_params={"step": str(first - 1), **language})
            if last < len(STEPS):
                st.page_link(START_HERE.file, label=_("next →: {title}").format(title=_(STEPS[last].title)),
                             query_params={"step": str(last + 1), **language})
    st.caption(idea)
