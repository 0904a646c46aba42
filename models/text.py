"""The lazy translation marker for texts declared in models/ (option labels and help, mechanism
names and summaries), which users see translated.

models/ never imports viz/ or streamlit, so the marker lives here; viz/i18n_text.py re-exports it.
A marked text is extracted into the catalogs (tools/i18n.sh) and translated where it is shown,
`_(option.label)`: the declaration itself stays English, as the CLI and the server checks read it.
"""

from __future__ import annotations

__all__ = ["N_"]


def N_(message: str) -> str:  # noqa: N802 (the gettext convention for a lazy marker)
    """Returns `message` unchanged: marks a module-level text for extraction; it is translated
    where it is shown, with `_(CONSTANT)`."""
    return message
