"""The legend of a formula's symbols, shown under it: an expander with one row per symbol (the symbol,
what it is in plain words, its shape)."""

from __future__ import annotations

import html
from collections.abc import Sequence

import streamlit as st

from ui.i18n import translator
from viz.i18n_text import N_

Row = tuple[str, str, str]  # (symbol in LaTeX, what it is, its shape): texts marked with N_, translated here


def legend_markdown(rows: Sequence[Row], gettext) -> str:
    """Returns the rows as a markdown table, symbols as inline LaTeX, texts translated by `gettext`."""
    _ = gettext

    def cell(text: str) -> str:
        return html.escape(_(text), quote=False).replace("|", "&#124;").replace("$", r"\$")

    lines = [f"| {cell(N_('symbol'))} | {cell(N_('what it is'))} | {cell(N_('shape'))} |", "|---|---|---|"]
    bar = r"\vert "
    lines += [f"| ${symbol.replace('|', bar)}$ | {cell(what)} | {cell(shape)} |" for symbol, what, shape in rows]
    return "\n".join(lines)


def symbol_legend(rows: Sequence[Row], *, label: str | None = None) -> None:
    """Shows an expander ("What the symbols mean") holding the legend of `rows`."""
    _ = translator()
    with st.expander(label or _("What the symbols mean")):
        st.markdown(legend_markdown(rows, _))
