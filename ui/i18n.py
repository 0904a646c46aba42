"""The session's language: English or 中文, and its gettext function for the pages.

The language is chosen once per full run by app.py, before the page runs (`choose_language`):
1. a link's `?lang=zh` / `?lang=en` (a value the app does not have gets one line, and is ignored);
2. else the language already chosen in this session (the sidebar switch, an earlier link);
3. else, on a first visit, the browser's language (`st.context.locale`): Chinese for zh-*, else English.
It is kept in session state, and app.py writes it back into the URL after every full run where it
differs from the browser's language or the URL names one (`keep_language_in_url`), so a link made
then carries it; Streamlit empties the URL's parameters on a page switch.

A page looks its functions up once per rerun:

    _ = translator()
    st.title(_("Seq2seq alignment"))
    st.caption(_("{count} tokens").format(count=n))   # whole sentences, named placeholders

A notice that models/ wrote into a record (a Notice, models/text.py) is shown with
`notice_text(notice, _)`, never formatted by the page itself.

Catalogs and figures' texts: viz/i18n_text.py. Updating the catalogs: tools/i18n.sh.
"""

from __future__ import annotations

import streamlit as st

from models.text import Notice
from ui.markdown import escape_markdown
from viz.i18n_text import LANGUAGES, SOURCE_LANGUAGE, Gettext, catalog, gettext_for

__all__ = ["LANG_PARAM", "LANGUAGES", "choose_language", "current_language", "keep_language_in_url",
           "language_changed", "language_of_locale", "language_switch", "notice_text", "plural_translator", "translator"]

LANG_PARAM = "lang"
_LANGUAGE = "_i18n_language"  # session state: the session's language code
_SWITCH = "_i18n_switch"  # the sidebar control's own state
_REFUSED = "_i18n_refused"  # a link's language value this run did not take
_LAST_RUN = "_i18n_last_run"  # the language the session's previous full run showed
_CHANGED = "_i18n_changed"  # whether this full run's language differs from that


def language_of_locale(locale: str | None) -> str:
    """Returns the app language for a browser's language tag: "zh" for zh, zh-CN, zh-Hans-CN, zh_TW…,
    else "en" (also for None: AppTest, or a browser that sends none)."""
    tag = (locale or "").strip().lower().replace("_", "-")
    return "zh" if tag == "zh" or tag.startswith("zh-") else SOURCE_LANGUAGE


def choose_language() -> str:
    """Returns the session's language, decided from the link, the session and the browser, in that
    order, and stored in session state. app.py calls it once per full run, before the page."""
    st.session_state.pop(_REFUSED, None)
    asked = st.query_params.get_all(LANG_PARAM)
    if asked:
        value = asked[-1].strip().lower()
        if value in LANGUAGES:
            st.session_state[_LANGUAGE] = value
        else:
            st.session_state[_REFUSED] = asked[-1][:40]
    if st.session_state.get(_LANGUAGE) not in LANGUAGES:
        st.session_state[_LANGUAGE] = language_of_locale(st.context.locale)
    language = st.session_state[_LANGUAGE]
    st.session_state[_CHANGED] = st.session_state.get(_LAST_RUN, language) != language
    st.session_state[_LAST_RUN] = language
    return language


def language_changed() -> bool:
    """Whether the language changed since the session's previous full run (the switch, a link): the
    run in which every choice control must be given back its option (ui/links.py, choice)."""
    return bool(st.session_state.get(_CHANGED, False))


def current_language() -> str:
    """Returns the session's language (choose_language's, or the browser's if it has not run)."""
    language = st.session_state.get(_LANGUAGE)
    return language if language in LANGUAGES else language_of_locale(st.context.locale)


def translator() -> Gettext:
    """Returns the gettext function of the session's language (one catalog per language and process)."""
    return gettext_for(current_language())


def plural_translator():
    """Returns ngettext(singular, plural, n) of the session's language."""
    return catalog(current_language()).ngettext


def notice_text(notice: str, _: Gettext) -> str:
    """Returns a notice that models/ wrote into a record in the language of `_`: a Notice part by part,
    `_(template).format(**values)` (Notice values rendered alike, other values as they are), its parts
    joined by `_(separator)`; a plain str as `_(notice)`. Where `_` translates none of its templates
    (English), the notice's own English text."""
    if not isinstance(notice, Notice):
        return _(notice) if notice else notice
    if all(_(template) == template for template in notice.templates()):
        return str(notice)
    shown = [_(template).format(**{name: notice_text(value, _) if isinstance(value, Notice) else value
                                   for name, value in values.items()})
             for template, values in notice.parts]
    return _(notice.separator).join(shown)


def _switched() -> None:
    # on_change of the sidebar switch: the URL's value goes too, or the next run would read it back.
    chosen = st.session_state.get(_SWITCH)
    if chosen in LANGUAGES:
        st.session_state[_LANGUAGE] = chosen
        st.query_params[LANG_PARAM] = chosen


def language_switch() -> None:
    """Shows the sidebar's English / 中文 switch (its label in both languages), and the one line of a
    link's language value the app does not have."""
    _ = translator()
    language = current_language()
    st.session_state[_SWITCH] = language  # the switch shows the session's language, however it was chosen
    st.segmented_control("Language · 语言", list(LANGUAGES), format_func=LANGUAGES.get, key=_SWITCH,
                         required=True, on_change=_switched)
    refused = st.session_state.get(_REFUSED)
    if refused:
        st.warning(_("The link's language “{given}” is not one this app has; it shows {language}.").format(
            given=escape_markdown(refused), language=LANGUAGES[language]), icon=":material/translate:")


def keep_language_in_url() -> None:
    """Writes the session's language into the URL (`?lang=`) when it is not the one the browser's language
    gives, or the URL names one already, so that a link made then carries it.

    A page's bare address is left bare otherwise: ui/links.py reopens a page as it was left when Back
    lands on its address without parameters, and a language written into every address defeated that
    (tests/e2e/test_links_browser.py, Back).
    """
    language = current_language()
    named = st.query_params.get_all(LANG_PARAM)
    if (named or language != language_of_locale(st.context.locale)) and named != [language]:
        st.query_params[LANG_PARAM] = language
