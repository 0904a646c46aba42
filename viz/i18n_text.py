"""The message catalogs (gettext, built with Babel) and the one way figures get translated text.

Catalogs live in locales/<language>/LC_MESSAGES/messages.po, in the repository. They are read
and compiled in memory here, once per process and language: there is no .mo file to build or
to go stale, so `streamlit run app.py`, the CLI, AppTest and a read-only install all show the
catalog as committed (reading the Chinese catalog takes a few ms once; Babel's import ~40 ms).

Figure builders never import streamlit and never look up a language. A builder that writes text
of its own (a default axis title, a legend name, a hover label) takes a `gettext` keyword,
defaulting to `untranslated`, and marks its texts where they are written:

    def alignment_heatmap(record, *, gettext: Gettext = untranslated):
        _ = gettext
        x_title = _("input character")

Texts a page hands a builder (a title) are translated by the page. The page passes
`gettext=ui.i18n.translator()`; the CLI passes `catalog(language).gettext`.
"""

from __future__ import annotations

import functools
import gettext as _gettext
import io
from collections.abc import Callable
from pathlib import Path

from models.text import N_  # noqa: F401  (the lazy marker, declared where models/ can use it)

ROOT = Path(__file__).resolve().parents[1]
LOCALES = ROOT / "locales"
DOMAIN = "messages"
SOURCE_LANGUAGE = "en"
LANGUAGES = {"en": "English", "zh": "中文"}  # language code → its name in itself (the sidebar switch)

Gettext = Callable[[str], str]


def untranslated(message: str) -> str:
    """Returns `message` as written (English): the default `gettext` of every figure builder."""
    return message


def po_path(language: str) -> Path:
    """Returns the path of a language's catalog (.po)."""
    return LOCALES / language / "LC_MESSAGES" / f"{DOMAIN}.po"


@functools.cache
def catalog(language: str) -> _gettext.NullTranslations:
    """Returns the translations of `language` (gettext/ngettext/pgettext), compiled in memory from
    its .po; English (the source language) returns the texts as written.

    Raises KeyError for a language the app does not have, and FileNotFoundError when its catalog
    is missing (a broken checkout: failing loudly beats showing English silently).
    """
    if language not in LANGUAGES:
        raise KeyError(f"no language {language!r}; the app has {', '.join(LANGUAGES)}")
    if language == SOURCE_LANGUAGE:
        return _gettext.NullTranslations()
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with open(po_path(language), "rb") as po:
        messages = read_po(po, locale=language, domain=DOMAIN)
    compiled = io.BytesIO()
    write_mo(compiled, messages, use_fuzzy=False)  # a fuzzy entry is a guess: shown in English
    compiled.seek(0)
    return _gettext.GNUTranslations(compiled)


def gettext_for(language: str) -> Gettext:
    """Returns the gettext function of `language` (see catalog)."""
    return catalog(language).gettext
