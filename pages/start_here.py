"""Start here: a guided tour of attention in ten steps (ui/tour.py holds the steps' content)."""

import streamlit as st

from models.registry import PAGES
from ui.i18n import LANG_PARAM, current_language
from ui.links import choice
from ui.markdown import escape_markdown
from ui.router import start_page
from ui.tour import STEPS
from ui.tour_ideas import ADVANTAGES, IDEAS, NEXT_PAGES
from ui.widgets import checked, show_figure
from viz.formulas import formula_lines

_ = start_page()

STEP_PARAM = "step"  # ?step=3: the step travels in the page's link
STEP_KEY = "tour_step"  # the session's step, for a return to the page from elsewhere
BY_KEY = {step.key: step for step in STEPS}
PAGE_TITLES = {page.file: page.title for page in PAGES}


def go_to(number: int) -> None:
    """on_click of ← previous / next →: the step, into the session and the URL."""
    st.session_state[STEP_KEY] = number
    st.query_params[STEP_PARAM] = str(number)


def current_step() -> int:
    """Returns the step shown (1…len(STEPS)): the link's, else the session's, else 1. A link's value
    that is no step gets one line, and the step the session had (or 1) is shown."""
    asked = st.query_params.get_all(STEP_PARAM)
    if asked:
        text = asked[-1].strip()
        if text.isascii() and text.isdigit() and 1 <= int(text) <= len(STEPS):
            st.session_state[STEP_KEY] = int(text)
        else:
            st.warning(_("The link's step “{given}” is not one of 1 to {count}; the tour shows step {shown}.").format(
                given=escape_markdown(text[:40]), count=len(STEPS), shown=st.session_state.get(STEP_KEY, 1)),
                icon=":material/link_off:")
    number = st.session_state.get(STEP_KEY, 1)
    st.query_params[STEP_PARAM] = str(number)
    return number


@st.cache_data(show_spinner=False, max_entries=64)
def step_record(step_key: str, value: str):
    return BY_KEY[step_key].record(value)


def navigation(number: int, *, where: str) -> None:
    """Shows "Step n of m · ← previous · next →"."""
    with st.container(horizontal=True, vertical_alignment="center", key=f"tour_nav_{where}"):
        st.markdown(_("**Step {number} of {count}**").format(number=number, count=len(STEPS)))
        st.button(_("← previous"), key=f"tour_previous_{where}", on_click=go_to, args=(number - 1,),
                  disabled=number == 1)
        st.button(_("next →"), key=f"tour_next_{where}", on_click=go_to, args=(number + 1,),
                  disabled=number == len(STEPS), type="primary")


def control_value(step) -> str:
    """Shows the step's one control; returns its value, checked on the server."""
    control = step.control
    labels = {choice: _(control.labels[choice]) if choice in control.labels else choice for choice in control.choices}
    key = f"tour_{step.key}_control"
    # ui.links.choice: the value stays the choice's id through a language switch.
    if control.kind == "select_slider":
        value = choice(st.select_slider, _(control.label), control.choices, value=control.default,
                       format_func=labels.get, key=key, linked=False)
    else:
        value = choice(st.radio, _(control.label), control.choices, index=control.choices.index(control.default),
                       format_func=labels.get, horizontal=True, key=key, linked=False)
    return control.read(value)


st.title(_("Start here"))
st.caption(_("The story of attention in ten steps, in the order the ideas appeared: from the encoder–decoder's "
             "bottleneck to the general view of attention as a Query over Keys and Values. Every figure comes from "
             "a model that runs on this machine."))

number = current_step()
step = STEPS[number - 1]
if number == 1:  # why attention at all, before the story begins
    st.caption(_(ADVANTAGES))
navigation(number, where="top")
st.progress(number / len(STEPS))
st.header(_("{number}. {title}").format(number=number, title=_(step.title)))

text_col, figure_col = st.columns([2, 3], gap="large")
with text_col:
    st.markdown(_(step.body))
    st.latex(formula_lines(step.formula))  # one clause per line: the column is narrow
    rows = "\n".join(f"| ${symbol}$ | {_(meaning)} |" for symbol, meaning in step.legend)
    symbol_title, meaning_title = _("Symbol"), _("Meaning")  # not inside the f-string: Babel would not see them
    st.markdown(f"| {symbol_title} | {meaning_title} |\n|---|---|\n{rows}")

with figure_col:
    value = control_value(step)
    try:
        record = checked(step_record, step.key, value)
    except (FileNotFoundError, OSError) as error:  # a model file missing from this install
        st.error(_("This step's model could not be loaded: {error}").format(error=escape_markdown(str(error))),
                 icon=":material/error:")
        record = None
    if record is not None and "output" in record.meta:  # the date models' answer
        st.markdown(_("**Output:** `{output}`").format(output=record.meta["output"]))
    if record is not None:
        show_figure(step.figure(record, value, _), record, key=f"tour_{step.key}", name=f"tour-{number}-{step.key}",
                    fit_phone=step.fits_phone)
    st.markdown(_("**What you should see:** {text}").format(text=_(step.see)))
    with st.expander(_("Question: {question}").format(question=_(step.question)), icon=":material/help:"):
        st.markdown(_(step.answer))
    st.page_link(step.page, label=_("Open the full page: {title}").format(title=_(PAGE_TITLES[step.page])),
                 icon=":material/open_in_new:",
                 query_params={**step.page_params(value), LANG_PARAM: current_language()})

if number == len(STEPS):  # the tour's end: where to go from here
    st.subheader(_("What next"))
    for page in NEXT_PAGES:
        st.page_link(page.file, label=_(page.title), icon=page.icon, query_params={LANG_PARAM: current_language()})
        st.caption(_(IDEAS[page.file]))

navigation(number, where="bottom")
