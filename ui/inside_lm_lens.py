"""Section 2 of the "Inside a language model" page: the logit lens.

models/lm/lens.py reads every layer's residual stream through the model's final norm and its
unembedding; the record holds, per layer and position, the probability of the model's final answer
and every layer's top-k tokens. The page shows the chosen position's top-k per layer and the
layer × position grid of the top token (hover: the token and its probability).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from models.lm.lens import DEFAULT_TOP_K, MAX_TOP_K, lens_record
from models.record import AttentionRecord
from ui.i18n import translator
from ui.links import bound
from ui.markdown import escape_markdown
from ui.widgets import checked, index_in, show_figure
from viz.figures import heatmap


@st.cache_resource(show_spinner=False, max_entries=2)  # shared, never mutated
def cached_lens(model_dir: str, prompt: str, position: int, top_k: int) -> AttentionRecord:
    """Returns the lm-logit-lens record of a prompt (two kept per process)."""
    return lens_record(None, {"text": prompt, "model_dir": model_dir or None, "position": position, "top_k": top_k})


def _cells(tokens: np.ndarray, probs: np.ndarray) -> np.ndarray:
    # "token" per cell, for the heatmap's text; spaces made visible
    shown = np.vectorize(lambda t: t.replace(" ", "␣") if t.strip() != t or not t.strip() else t)(tokens)
    return shown.astype(object)


def lens_section(model_dir: str, prompt: str, tokens: tuple[str, ...]) -> None:
    """Shows section 2: position and k, the chosen position's top tokens per layer, and the grid."""
    _ = translator()
    st.markdown(_("Each layer's residual stream is read as if the model stopped there: **the final norm, then "
                  "the unembedding** (the model's own last two steps). Without the final norm the early layers' "
                  "logits have another scale and often another top token; with it, the last row is exactly the "
                  "model's own prediction."))
    count = len(tokens)
    left, right = st.columns([3, 1])
    position = index_in(bound(left.selectbox, _("Position"), range(count), index=count - 1, key="inside_position",
                              format_func=lambda i: f"{i}: {tokens[i]}" if 0 <= i < count else str(i)), count)
    top_k = index_in(bound(right.slider, _("Top k"), 1, MAX_TOP_K, DEFAULT_TOP_K, key="inside_lens_k"),
                     MAX_TOP_K + 1)
    if top_k < 1:
        st.error(_("Top k must be from 1 to {high}.").format(high=MAX_TOP_K), icon=":material/error:")
        st.stop()
    with st.spinner(_("Reading every layer through the lens…")):
        record = checked(cached_lens, model_dir, prompt, position, top_k)
    meta = record.meta
    if meta.get("notice"):
        st.warning(escape_markdown(str(meta["notice"])), icon=":material/info:")
    rows = record.query_labels
    top_probs = np.asarray(record.extras["top_probs"], dtype=np.float32)[:, position]  # [L + 1, k]
    top_tokens = np.asarray(record.extras["top_tokens"])[:, position]
    st.subheader(_("Position {position} ({token}): every layer's top {k} next tokens").format(
        position=position, token=meta["position_token"], k=top_k))
    st.caption(_("The model's final answer here is “{answer}”; the colour is each guess's probability.").format(
        answer=escape_markdown(str(meta["answer"]))))
    ranks = [_("#{rank}").format(rank=r + 1) for r in range(top_k)]
    fig = heatmap(top_probs, rows, ranks, title=_("Logit lens at position {position}").format(position=position),
                  query_title="", key_title=_("rank"), value_name="p")
    fig.update_traces(text=_cells(top_tokens, top_probs), texttemplate="%{text}",
                      hovertemplate="%{y} · %{x}: %{text}<br>p = %{z:.4f}<extra></extra>")
    position_record = AttentionRecord(record.mechanism, top_probs, ("layer", "rank"), rows, ranks,
                                      meta={**dict(meta)}, extras={"top_tokens": top_tokens})
    show_figure(fig, position_record, key="inside_lens_position", name=f"logit-lens-position{position}")

    st.subheader(_("Every layer × every position"))
    st.caption(_("The colour is the probability each layer gives the model's final answer at that position; "
                 "hover a cell for the layer's own top token."))
    grid_tokens = np.asarray(record.extras["top_tokens"])[:, :, 0]
    grid = heatmap(record.weights, rows, record.key_labels, title=_("Logit lens: layer × position"),
                   query_title="", key_title=_("position"), value_name=_("p(final answer)"))
    grid.update_traces(text=_cells(grid_tokens, record.weights),
                       hovertemplate=_("%{y} at %{x}<br>top token: %{text}<br>p(final answer) = %{z:.4f}")
                       + "<extra></extra>")
    show_figure(grid, record, key="inside_lens_grid", name="logit-lens-grid")
