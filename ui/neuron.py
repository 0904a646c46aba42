"""The neuron view as a reusable page section: pick a layer, a head, a query and a key token, see q, k,
q ⊙ k, the scores and their softmax (viz/lm_inside.py's neuron_view), with its Export menu.

The Inside-a-language-model page passes models.lm.neuron.neuron_parts bound to its model and text;
the MiniLM page passes models.transformer.neuron.neuron_parts bound to its runner and text. Both
return objects with q, k, product, scores, visible, weights, scale and kv_head.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import streamlit as st

from models.record import AttentionRecord
from ui.i18n import translator
from ui.links import bound
from ui.markdown import escape_markdown
from ui.widgets import checked, index_in, show_figure
from viz.labels import safe_label
from viz.lm_inside import neuron_view

PartsFn = Callable[[int, int, int], Any]  # (layer, head, query) -> parts (models/lm/neuron.py NeuronParts)


def parts_record(parts: Any, tokens: Sequence[str], layer: int, head: int, query: int, *,
                 mechanism: str, meta: dict | None = None) -> AttentionRecord:
    """Returns the record of one neuron view: weights [T] (the softmax row), extras q, k, product, scores, visible."""
    return AttentionRecord(
        mechanism=mechanism, weights=np.asarray(parts.weights, np.float32), axes=("key",),
        query_labels=(tokens[query],), key_labels=tuple(tokens),
        meta={**(meta or {}), "layer": layer, "head": head, "kv_head": int(parts.kv_head), "query": query,
              "scale": float(parts.scale)},
        extras={"q": parts.q, "k": parts.k, "product": parts.product, "scores": parts.scores,
                "visible": np.asarray(parts.visible, bool)},
    )


def neuron_section(parts_fn: PartsFn, tokens: Sequence[str], layers: int, heads: int, key_prefix: str, *,
                   default_query: int | None = None, mechanism: str = "lm-neuron", meta: dict | None = None) -> None:
    """Shows the layer, head, query and key pickers, the neuron view of the chosen query and the arithmetic
    of the chosen key's weight. default_query: the query shown first (default: the last token)."""
    _ = translator()
    count = len(tokens)
    choices = list(range(count))
    shown = [f"{i}: {t}" for i, t in enumerate(tokens)]
    cols = st.columns(4)
    layer = index_in(bound(cols[0].selectbox, _("Layer"), range(layers), index=layers - 1, key=f"{key_prefix}_layer"),
                     layers)
    head = index_in(bound(cols[1].selectbox, _("Head"), range(heads), index=0, key=f"{key_prefix}_head"), heads)
    first = count - 1 if default_query is None else default_query
    query = index_in(bound(cols[2].selectbox, _("Query token"), choices, index=first, key=f"{key_prefix}_query",
                           format_func=shown.__getitem__), count)
    key = index_in(bound(cols[3].selectbox, _("Key token"), choices, index=0, key=f"{key_prefix}_key",
                         format_func=shown.__getitem__), count)
    parts = checked(parts_fn, layer, head, query)
    score, weight = float(parts.scores[key]), float(parts.weights[key])
    product_sum = float(np.sum(parts.product[key]))
    if parts.visible[key]:
        st.markdown(_("Query **{query}** · key **{key}**: Σ q ⊙ k = {total:.4f}; × {scale:.4g} = score {score:.4f}; "
                      "softmax over the keys it may see: weight **{weight:.4f}**.").format(
            query=escape_markdown(tokens[query]), key=escape_markdown(tokens[key]), total=product_sum,
            scale=parts.scale, score=score, weight=weight))
    else:
        st.markdown(_("Query **{query}** may not see key **{key}** (a later token, or outside the window): "
                      "its score {score:.4f} is masked and its weight is 0.").format(
            query=escape_markdown(tokens[query]), key=escape_markdown(tokens[key]), score=score))
    if int(parts.kv_head) != head:
        st.caption(_("Head {head} reads the keys of key/value head {kv_head} (grouped-query attention).").format(
            head=head, kv_head=int(parts.kv_head)))
    fig = neuron_view(parts.q, parts.k, parts.product, parts.scores, parts.weights, tokens, query,
                      visible=parts.visible, key=key, scale=parts.scale,
                      title=_("Layer {layer}, head {head}: query {token}").format(
                          layer=layer, head=head, token=safe_label(tokens[query])), gettext=_)
    record = parts_record(parts, tokens, layer, head, query, mechanism=mechanism, meta=meta)
    show_figure(fig, record, key=f"{key_prefix}_figure", name=f"{mechanism}-layer{layer}-head{head}-query{query}")
