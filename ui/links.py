"""Links that reopen a view.

Every control that defines what a figure shows is bound to the URL (Streamlit's
bind="query-params": its key is the parameter's name, a default value leaves the URL). Texts
travel too, up to LINK_TEXT_MAX characters, through st.query_params. Next to every Export menu
a Link box (ui/link_box.py) shows the page's current URL, read in the browser, with a copy button.

A link is checked like the widgets: Streamlit drops a value its control does not take (out of
range, an unknown choice); on the run that opens the link, each such value gets one line
saying so, and the control shows its default.

The language (`?lang=`, ui/i18n.py) is app-wide, not a control of the page: the Link box writes the
session's language into the link it shows, and an address holding only the language is a bare
address for Back (start_run).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import streamlit as st

from ui.i18n import LANG_PARAM, language_changed, translator
from ui.markdown import escape_markdown
from ui.streamlit_private import in_fragment_rerun, is_history_navigation, page_id, seeding_query_params

LINK_TEXT_MAX = 1000
BIND = "query-params"
_OPENED = "_links_opened_pages"
_RAW = "_links_opening_params"
_SEEN = "_links_last_seen_params"  # page → {parameter: values} as its last run left them


def start_run() -> None:
    """Remembers the URL's parameters when a page runs for the first time in a session (the run
    that opens a link); on later runs there is nothing to check.

    The browser's Back (or Forward) to a page of this session whose address holds no parameters
    reopens the page as it was last seen, as its link would: Streamlit writes a control's changes
    into the page's address without a history entry, so the entry Back returns to is the page's
    address before them, and Streamlit sets every control that address leaves out to its default.
    """
    opened = st.session_state.setdefault(_OPENED, set())
    page = page_id()
    if page in opened:
        last = st.session_state.get(_SEEN, {}).get(page)
        if last and is_history_navigation() and not any(name != LANG_PARAM for name in st.query_params):
            _reopen(last)
            st.session_state[_RAW] = last
            return
        st.session_state[_RAW] = {}
        return
    opened.add(page)
    st.session_state[_RAW] = {name: list(st.query_params.get_all(name)) for name in st.query_params}


def _reopen(params: dict[str, list[str]]) -> None:
    # Into the URL, and into the copy the controls seed themselves from.
    for name, values in params.items():
        st.query_params[name] = values if len(values) > 1 else values[0]
    with seeding_query_params() as seeding:
        seeding.clear()
        seeding.update({name: list(values) for name, values in params.items()})


def _remember(key: str) -> None:
    # The page's parameter as this run leaves it, for a later Back to the page (start_run).
    seen = st.session_state.setdefault(_SEEN, {}).setdefault(page_id(), {})
    values = st.query_params.get_all(key)
    if values:
        seen[key] = list(values)
    else:
        seen.pop(key, None)


def _opening_value(key: str) -> list[str] | None:
    # A fragment's own rerun (st.fragment) never opens a link: the page ran before it.
    if in_fragment_rerun():
        return None
    return st.session_state.get(_RAW, {}).get(key)


def _shows(raw: list[str], value: Any, format_func: Callable[[Any], Any] | None) -> bool:
    # Whether the URL's raw value is what the control shows (Streamlit drops a value equal to
    # the default from the URL, so "missing now" alone does not mean "refused").
    values = value if isinstance(value, (list, tuple)) else [value]
    if len(raw) != len(values):
        return False
    for text, item in zip(raw, values, strict=True):
        forms = {str(item), str(item).lower()}
        if format_func is not None:
            forms.add(str(format_func(item)))
        if text in forms or text.lower() in forms:
            continue
        try:
            if isinstance(item, (int, float)) and not isinstance(item, bool) and math.isclose(float(text), item):
                continue
        except ValueError:
            pass
        return False
    return True


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def report_refused(key: str, label: str, value: Any, format_func: Callable[[Any], Any] | None = None) -> None:
    """Shows one line when the opened link's value for a bound control was not taken."""
    raw = _opening_value(key)
    if raw is None or st.query_params.get_all(key) == raw or _shows(raw, value, format_func):
        return
    shown = format_func(value) if format_func is not None and not isinstance(value, (list, tuple)) else value
    warn_refused(label, ", ".join(raw), shown)


def warn_refused(label: str, given: str, shown: Any) -> None:
    """Shows the one line of a link's value that a control does not take (`given`, as the URL has it)."""
    _ = translator()
    st.warning(_("The link's value for {control}, “{given}”, is not one this control takes; it shows {shown}.").format(
        control=escape_markdown(label), given=escape_markdown(_clip(given)), shown=escape_markdown(_clip(str(shown)))),
        icon=":material/link_off:")


def bound(widget: Callable[..., Any], label: str, *args: Any, key: str, **kwargs: Any) -> Any:
    """Returns widget(label, *args, key=key, bind="query-params", **kwargs): the control's value
    lives in the URL, and a value the link gave it that it refused is reported in one line.

    A choice among options (radio, selectbox, segmented control, pills, select slider, multiselect)
    goes through `choice` instead: its URL value is the option's id, never its shown label."""
    if getattr(widget, "__name__", "") in CHOICE_WIDGETS:
        return choice(widget, label, *args, key=key, **kwargs)
    if getattr(widget, "__name__", "") == "number_input":
        _drop_infinite(key)
    value = widget(label, *args, key=key, bind=BIND, **kwargs)
    report_refused(key, label, value, kwargs.get("format_func"))
    _remember(key)
    return value


def _drop_infinite(key: str) -> None:
    # Streamlit's number box turns a URL's value into int(float(text)) before checking its range, so
    # "inf" or "1e400" raised OverflowError from inside the widget: such a value leaves the URL first,
    # and report_refused then says so in one line, like any value the box does not take.
    for text in st.query_params.get_all(key):
        try:
            finite = math.isfinite(float(text))
        except ValueError:
            continue
        if not finite and text.strip().lower() not in ("nan", "+nan", "-nan"):  # NaN is refused by the widget
            st.query_params.pop(key, None)
            with seeding_query_params() as seeding:  # the box seeds itself from the URL as the page was opened
                seeding.pop(key, None)
            return


CHOICE_WIDGETS = frozenset({"radio", "selectbox", "segmented_control", "pills", "select_slider", "multiselect"})
# The keyword that gives each choice widget its starting value, and that value when it is not given.
_START = {"radio": ("index", 0), "selectbox": ("index", 0), "select_slider": ("value", None),
          "segmented_control": ("default", None), "pills": ("default", None), "multiselect": ("default", None)}


def choice_id(option: Any) -> str:
    """Returns the id an option travels under in a link: the option itself as text (a mechanism id,
    a view id, a number), whatever language its label is shown in."""
    return str(option)


def _many(name: str, kwargs: Mapping[str, Any]) -> bool:
    return name == "multiselect" or kwargs.get("selection_mode") == "multi"


def _starting_value(name: str, options: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
    # What the control shows before anyone touched it: the option its start keyword names.
    keyword, missing = _START[name]
    given = kwargs.get(keyword, missing)
    if keyword == "index":
        return options[given] if isinstance(given, int) and 0 <= given < len(options) else None
    if name == "select_slider" and given is None:
        return options[0] if options else None
    if _many(name, kwargs):
        return list(given) if isinstance(given, (list, tuple)) else [] if given is None else [given]
    return given


def _options_of(ids: Sequence[str], options: Sequence[Any], labels: Callable[[Any], Any] | None) -> list[Any] | None:
    # The options a link names, by id (any case) or, for a link made before links held ids, by the
    # label the session's language shows; None if one of them is no option.
    found = []
    for text in ids:
        match = next((o for o in options if choice_id(o) == text), None)
        if match is None:
            match = next((o for o in options if choice_id(o).lower() == text.strip().lower()), None)
        if match is None and labels is not None:
            match = next((o for o in options if str(labels(o)) == text), None)
        if match is None:
            return None
        found.append(match)
    return found


def _valid(value: Any, options: Sequence[Any], many: bool) -> bool:
    try:
        return all(v in options for v in value) if many else value in options
    except TypeError:  # a value the browser sent that cannot be compared with the options
        return False


def choice(widget: Callable[..., Any], label: str, options: Sequence[Any], *args: Any, key: str,
           linked: bool = True, **kwargs: Any) -> Any:
    """Returns the option(s) a choice widget shows, the same whatever language its labels are in.

    Streamlit keeps a choice widget's value as its shown label (format_func's text) and writes that
    label into a bound URL. Here the value is the option itself: a link holds its id (`choice_id`;
    linked=False keeps it out of the URL), a link's value no option has gets one line, and after a
    language switch each control is given back the option it had, which Streamlit would otherwise lose
    (the old language's label is no option of the new one).
    """
    name = getattr(widget, "__name__", "")
    options = list(options)
    many = _many(name, kwargs)
    labels = kwargs.get("format_func")
    start = _starting_value(name, options, kwargs)
    raw = _opening_value(key) if linked else None
    if linked and raw is None and key not in st.session_state:
        # A control with no state (its view was not shown, Back returned to the page's address) shows
        # what the address says, as a control Streamlit binds to the URL seeds itself from it.
        raw = st.query_params.get_all(key) or None
    if raw:
        given = _options_of(raw, options, labels)
        if given is not None and (many or len(given) == 1):
            st.session_state[key] = given if many else given[0]
        else:
            st.session_state.pop(key, None)
            shown = [labels(v) if labels else v for v in (start or [])] if many else \
                (labels(start) if labels and start is not None else start)
            warn_refused(label, ", ".join(raw), ", ".join(map(str, shown)) if many else shown)
    elif key in st.session_state:
        # Read with the last run's labels, so after a language switch this is the option, not the old label.
        value = st.session_state[key]
        if value is not None and not _valid(value, options, many):
            del st.session_state[key]
        elif language_changed():
            st.session_state[key] = value
    if key in st.session_state and st.session_state[key] is not None:
        kwargs.pop(_START[name][0], None)  # the value is set: a start value beside it would be ignored
    value = widget(label, options, *args, key=key, **kwargs)
    if value is not None and not _valid(value, options, many):
        value = start  # a label that is no option (Streamlit hands one back as it is); None is the page's to check
    if linked:
        ids = [choice_id(v) for v in value] if many else None if value is None else choice_id(value)
        start_ids = [choice_id(v) for v in start] if many else None if start is None else choice_id(start)
        if ids == start_ids or ids is None or ids == []:
            st.query_params.pop(key, None)
        else:
            st.query_params[key] = ids
        _remember(key)
    return value


def linked_text(widget: Callable[..., Any], label: str, default: str, *, key: str, max_chars: int, **kwargs: Any) -> str:
    """Returns the text of a text box whose content travels in the URL when it is short enough.

    A link's text longer than max_chars is refused in one line (the default is shown); a text
    over LINK_TEXT_MAX characters stays out of the URL, with a caption saying so.
    """
    raw = _opening_value(key)
    kept = f"_links_kept_text_{key}"
    _ = translator()
    if raw and len(raw[-1]) > max_chars:
        st.warning(_("The link's text has {count} characters, more than this box takes ({limit}); the default text "
                     "is shown.").format(count=f"{len(raw[-1]):,}", limit=f"{max_chars:,}"), icon=":material/link_off:")
    elif raw:
        st.session_state[key] = raw[-1]
    elif key in st.session_state:
        # Sent again on every run: the browser forgets a box's value when a run ends without the box
        # (a view not shown, a stop above it) and, when the box comes back, shows "" unless the run
        # sends its value, while the server may still hold the old text and draw from it.
        st.session_state[key] = st.session_state[key]
    elif kept in st.session_state:  # the server forgot it too (a full run without the box)
        st.session_state[key] = st.session_state[kept]
    if key not in st.session_state:
        st.session_state[key] = default
    text = widget(label, key=key, max_chars=max_chars, **kwargs)
    st.session_state[kept] = text
    if text == default:
        st.query_params.pop(key, None)
    elif len(text) <= LINK_TEXT_MAX:
        st.query_params[key] = text
    else:
        st.query_params.pop(key, None)
        st.caption(_("Links carry texts of up to {limit} characters: a link made now opens this view with the "
                     "default text.").format(limit=f"{LINK_TEXT_MAX:,}"))
    _remember(key)
    return text


def linked_index(widget: Callable[..., Any], label: str, top: int, default: int, *, key: str, **kwargs: Any) -> int:
    """Returns a whole-number box over 0…top whose value is always in the URL, for a control whose
    default moves with another control (the query patch: the centre of a grid the patch size sets).
    A bound control leaves the URL while it equals its default, and stays out after the default
    moved away from it, so a link made then would reopen somewhere else.

    A link's value that is not a whole number in 0…top gets the one line of any refused value.
    """
    raw = _opening_value(key)
    if raw:
        try:
            number = float(raw[-1])
            given = int(number) if number.is_integer() else None
        except (ValueError, OverflowError):
            given = None
        if given is not None and 0 <= given <= top:
            st.session_state[key] = given
        else:
            st.session_state.pop(key, None)
            warn_refused(label, raw[-1], default)
    start = {} if key in st.session_state else {"value": default}  # a set value is not given twice
    value = int(widget(label, min_value=0, max_value=top, key=key, **start, **kwargs))
    st.query_params[key] = str(value)
    _remember(key)
    return value


def unlink(*keys: str) -> None:
    """Takes these controls' values out of the URL (linked_index ones, while their view is not shown)."""
    for key in keys:
        st.query_params.pop(key, None)
        _remember(key)


def _link_cell(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return str(value)
    if not math.isfinite(number):
        return None
    return float(str(np.float32(number))) if abs(number) < 3e38 else number
