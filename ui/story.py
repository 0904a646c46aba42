"""A full page's place in the story the guided tour tells (ui/tour.py's steps): "Step n of m ·
← previous · next →" and one sentence naming the survey's idea the page shows.

The steps a page holds are the tour's steps whose full page it is (the seq2seq page holds steps 1–2 and
4–5: the tour follows the order the ideas appeared, and hard and soft attention came between);
← previous opens the tour at the step just before the first of them, → next at the first step after it
that is not this page's, in the session's language. A page the tour does not visit gets its sentence and a link to the tour's start.
"""

from __future__ import annotations

import streamlit as st

from models.entry import Page
from models.pages import START_HERE
from ui.i18n import LANG_PARAM, current_language, translator
from ui.tour import STEPS
from ui.tour_ideas import IDEAS


def steps_of(page_file: str) -> list[int]:
    """Returns the tour's step numbers (1-based) whose full page is `page_file`, in order."""
    return [number for number, step in enumerate(STEPS, start=1) if step.page == page_file]


def _runs(numbers: list[int]) -> list[tuple[int, int]]:
    """Returns the runs of consecutive numbers in `numbers` (sorted) as (first, last) pairs."""
    runs: list[tuple[int, int]] = []
    for number in numbers:
        if runs and number == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    return runs


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
            runs = _runs(numbers)
            if len(runs) > 1:
                st.markdown(_("**Steps {steps} of {count}**").format(
                    steps=", ".join(f"{a}–{b}" if a != b else str(a) for a, b in runs), count=len(STEPS)))
            else:
                st.markdown((_("**Step {number} of {count}**") if first == last else
                             _("**Steps {first}–{last} of {count}**")).format(number=first, first=first, last=last,
                                                                             count=len(STEPS)))
            after = runs[0][1] + 1  # the tour's next step once this page's first steps are read
            if first > 1:
                st.page_link(START_HERE.file, label=_("← previous: {title}").format(title=_(STEPS[first - 2].title)),
                             query_params={"step": str(first - 1), **language})
            if after <= len(STEPS):
                st.page_link(START_HERE.file, label=_("next →: {title}").format(title=_(STEPS[after - 1].title)),
                             query_params={"step": str(after), **language})
    st.caption(idea)


def page_header(page: Page, intro: str | None = None, *, title: str | None = None) -> None:
    """Shows a full page's title (default: its name in the sidebar), its place in the tour with the idea it
    shows (ui/tour_ideas.py's IDEAS), and `intro`, the paragraph that opens it (texts translated)."""
    _ = translator()
    st.title(title or _(page.title))
    story_place(page.file, _(IDEAS[page.file]))
    if intro:
        st.markdown(intro)
