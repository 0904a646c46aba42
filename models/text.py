"""Texts that models/ writes and users read translated: the lazy marker N_ for texts declared in
models/ (option labels and help, mechanism names and summaries), and Notice, the one-line notices
written into records at run time.

models/ never imports viz/ or streamlit, so both live here; viz/i18n_text.py re-exports N_.
A marked text is extracted into the catalogs (tools/i18n.sh) and translated where it is shown,
`_(option.label)`: the declaration itself stays English, as the CLI and the server checks read it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["N_", "Notice"]

Part = tuple[str, Mapping[str, Any]]  # (template marked with N_, the values it is formatted with)


def N_(message: str) -> str:  # noqa: N802 (the gettext convention for a lazy marker)
    """Returns `message` unchanged: marks a module-level text for extraction; it is translated
    where it is shown, with `_(CONSTANT)`."""
    return message


class Notice(str):
    """A notice that models/ writes into a record: its English text, which it is (a str, so records,
    JSON exports, the CLI and comparisons read it unchanged), and its parts, each a (template, values)
    pair the pages render in the session's language, `_(template).format(**values)` (ui/i18n.py
    notice_text), as a notice's numbers and quoted user text differ per run.

    Notice(N_("only the first {kept} of {total} sentences are read"), kept=30, total=41) is one part;
    Notice.join gives one notice of several parts, shown joined by `separator`. A value that is a
    Notice is rendered the same way; any other value (user text, numbers) is never translated.
    Pickling and copying keep the parts (Streamlit's caches pickle records).
    """

    parts: tuple[Part, ...]
    separator: str

    def __new__(cls, template: str, /, **values: Any) -> Notice:
        return _notice(template.format(**values), ((template, values),), "; ")

    @staticmethod
    def join(notices: Iterable[str | None], separator: str = "; ") -> Notice | None:
        """Returns one notice of every part of `notices` (None and "" left out), its text theirs joined
        by `separator`; None without any. A plain str is one part that is its own template."""
        shown = [n if isinstance(n, Notice) else _plain(n) for n in notices if n]
        if not shown:
            return None
        parts = tuple(p for n in shown
                      for p in (n.parts if len(n.parts) == 1 or n.separator == separator else (("{notice}", {"notice": n}),)))
        return _notice(separator.join(shown), parts, separator)

    def restyled(self, text: str) -> Notice:
        """Returns the notice with another English text (capitalised, a full stop added…), the same parts."""
        return _notice(text, self.parts, self.separator)

    def templates(self) -> tuple[str, ...]:
        """Returns every template of the notice, those of Notice values included."""
        return tuple(t for template, values in self.parts
                     for t in (template, *(u for v in values.values() if isinstance(v, Notice) for u in v.templates())))

    def __reduce__(self) -> tuple[Any, ...]:
        return _notice, (str(self), self.parts, self.separator)


def _notice(text: str, parts: tuple[Part, ...], separator: str) -> Notice:
    # Module level, so that pickle finds it.
    notice = str.__new__(Notice, text)
    notice.parts = parts
    notice.separator = separator
    return notice


def _plain(text: str) -> Notice:
    return _notice(text, ((text.replace("{", "{{").replace("}", "}}"), {}),), "; ")


# The separator Notice.join puts between parts, as a language writes it.
SEPARATOR = N_("; ")
