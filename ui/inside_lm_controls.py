"""The control row the sections of the "Inside a language model" page share: a token position, then one option."""

from __future__ import annotations

from typing import Any

import streamlit as st

from models.options import Option
from ui.links import bound
from ui.widgets import index_in, option_slider


def position_and_option(
    tokens: tuple[str, ...],
    widths: list[int],
    position_label: str,
    position_key: str,
    option: Option,
    option_key: str,
    option_label: str,
) -> tuple[int, Any]:
    """Returns (the chosen token position, the option's value): a box of the prompt's positions (default the last)
    and the option's slider beside it, in columns of `widths`."""
    count = len(tokens)
    left, right = st.columns(widths)
    position = index_in(bound(left.selectbox, position_label, range(count), index=count - 1, key=position_key,
                              format_func=lambda i: f"{i}: {tokens[i]}" if 0 <= i < count else str(i)), count)
    with right:
        value = option_slider(option, key=option_key, label=option_label)
    return position, value
