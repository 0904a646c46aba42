"""Section 2 of the "Inside a language model" page: the logit lens.

models/lm/lens.py reads every layer's residual stream through the model's final norm and its
unembedding; the record holds, per layer and position, the probability of the model's final answer
and every layer's top-k tokens. The page shows the chosen position's answer layer by layer with each
layer's top k (viz/lm_lens.py's bars and a table), and the layer × position grid of the top token.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from models.record import AttentionRecord
from models.registry import get_mechanism
from ui.i18n import translator
from ui.inside_lm import mechanism_heading
from ui.inside_lm_controls import position_and_option
from ui.markdown import escape_markdown
from ui.widgets import checked, show_figure, show_notice
from viz.i18n_text import Gettext, untranslated
from viz.lm_lens import LENS_NOTE, lens_grid, lens_position_bars, row_names

LENS = get_mechanism("lm-logit-lens")


@st.cache_resource(show_spinner=False, max_entries=2)  # shared, never mutated
def cached_lens(model_dir: str, prompt: str, position: int, top_k: int) -> AttentionRecord:
    """Returns the lm-logit-lens record of a prompt (two kept per process), its options read by the registry."""
    return LENS.build({"text": prompt, "model_dir": model_dir or None, "position": position, "top_k": top_k})


def position_record(record: AttentionRecord) -> AttentionRecord:
    """Returns the record the position's bars draw: weights [layer, 1], each layer's probability of the final
    answer at the chosen position; extras top_ids, top_probs [layer, k] and top_tokens there."""
    position = int(record.meta["position"])
    return AttentionRecord(record.mechanism, record.weights[:, position: position + 1], record.axes,
                           record.query_labels, (record.key_labels[position],), meta=dict(record.meta),
                           extras={name: np.asarray(record.extras[name])[:, position]
                                   for name in ("top_ids", "top_probs", "top_tokens")})


def top_k_table(record: AttentionRecord, gettext: Gettext = untranslated) -> dict[str, list[str]]:
    """Returns the chosen position's top k per layer as table columns: the layer (named in gettext's language),
    then "token  p" per rank."""
    tokens, probs = record.meta["position_top_tokens"], record.meta["position_top_probs"]
    table = {"": row_names(record, gettext)}
    for rank in range(len(tokens[0])):
        table[f"#{rank + 1}"] = [f"“{row[rank]}”  {p[rank]:.3f}" for row, p in zip(tokens, probs)]
    return table


def lens_section(model_dir: str, prompt: str, tokens: tuple[str, ...]) -> None:
    """Shows section 2: position and k, the chosen position's answer and top tokens per layer, and the grid."""
    _ = translator()
    mechanism_heading(LENS)
    st.markdown(_("The logit lens reads each layer as if the model stopped there and predicted the next token."))
    st.info(_(LENS_NOTE), icon=":material/info:")
    position, top_k = position_and_option(tokens, [3, 1], _("Position"), "inside_position", LENS.option("top_k"),
                                          "inside_lens_k", _("Top k"))
    with st.spinner(_("Reading every layer through the lens…")):
        record = checked(cached_lens, model_dir, prompt, position, top_k)
    meta = record.meta
    show_notice(meta.get("notice"))
    show_figure(lens_position_bars(record, gettext=_), position_record(record), key="inside_lens_position",
                name=f"logit-lens-position{position}")
    st.caption(_("Every layer's top {k} next tokens after “{token}” (position {position}), with their "
                 "probabilities.").format(k=int(meta["top_k"]), token=escape_markdown(str(meta["position_token"])),
                                           position=position))
    st.dataframe(top_k_table(record, _), hide_index=True)
    st.subheader(_("Every layer × every position"))
    height = min(900, 48 * len(record.query_labels) + 260)  # rows tall enough for their token text
    show_figure(lens_grid(record, height=height, gettext=_), record, key="inside_lens_grid", name="logit-lens-grid")


