"""Section 5 of the "Inside a language model" page: attention sinks.

models/lm/sinks.py: each head's first-token share (mean attention on key 0 over query rows 1..T−1)
on the prompt, the model's sink rate (the share of heads above ε = 0.3, Gu et al., ICLR 2025), and,
for the model trained here, the same rate over its training log's snapshots.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from models.lm.sinks import SINK_EPSILON, sink_record, training_sinks
from models.record import AttentionRecord
from models.registry import get_mechanism
from ui.i18n import translator
from ui.markdown import escape_markdown
from ui.widgets import checked, show_figure, show_notice
from viz.figures import heatmap
from viz.lm_lens import SINK_TEXT, sink_grid, sink_rate_curve


@st.cache_resource(show_spinner=False, max_entries=2)  # shared, never mutated
def cached_sinks(model_dir: str, prompt: str) -> AttentionRecord:
    """Returns the sink record (first-token share per head) of the prompt's attention in every layer: the lm
    mechanism's record, its options read by the registry."""
    return sink_record(get_mechanism("lm").build({"text": prompt, "model_dir": model_dir or None}))


def even_share(tokens: int) -> float:
    """Returns the first-token share of a head that attends evenly to every key it may see: the mean of
    1/(i + 1) over the queries i = 1..T−1 (0 for a single token)."""
    return float(np.mean(1.0 / (np.arange(1, tokens) + 1))) if tokens > 1 else 0.0


@st.cache_data(show_spinner=False)
def _history():
    return training_sinks()


def sinks_section(model_dir: str, prompt: str) -> None:
    """Shows section 5: the paragraph, the prompt's per-head shares and sink rate, and (for the model
    trained here) the sink rate over training."""
    _ = translator()
    st.markdown(_(SINK_TEXT))
    with st.spinner(_("Running the model on the prompt…")):
        record = checked(cached_sinks, model_dir, prompt)
    meta = record.meta
    show_notice(meta.get("notice"))
    heads = record.weights.size
    sinks = int(np.sum(record.weights > SINK_EPSILON))
    cols = st.columns(2)
    cols[0].metric(_("Sink rate"), f"{meta['sink_rate']:.0%}",
                   help=_("share of heads whose first-token share exceeds ε = {epsilon}").format(epsilon=SINK_EPSILON))
    cols[1].metric(_("Sink heads"), f"{sinks} / {heads}")
    tokens = len(record.extras["input_ids"])
    st.caption(_("On this prompt of {count} tokens, whose first token is “{token}”. A head that spread its attention "
                 "evenly would put 1/(i + 1) on the first token at query i, {chance:.2f} on average here: on a short "
                 "prompt the share is large by chance.").format(
        count=tokens, token=escape_markdown(str(meta["first_token"])), chance=even_share(tokens)))
    show_figure(sink_grid(record, gettext=_), record, key="inside_sinks", name="lm-sinks")
    if model_dir:
        return
    history = checked(_history, stop=False)
    if history is None:
        return
    st.subheader(_("Over training"))
    st.caption(_("The same measure on held-out text windows of the documentation, at every logged step of the "
                 "training run of the model trained here."))
    steps = [f"{int(s):,}" for s in history.steps]
    flat = history.shares.reshape(len(steps), -1)
    curves = np.stack([history.rates, flat.max(1)]).astype(np.float32)
    rate_record = AttentionRecord(record.mechanism, curves, ("measure", "step"),
                                  ("sink rate", "largest first-token share"), steps,
                                  meta={"epsilon": history.epsilon}, extras={"steps": history.steps})
    show_figure(sink_rate_curve(history.steps, history.shares, epsilon=history.epsilon, gettext=_), rate_record,
                key="inside_sink_rate", name="lm-sink-rate")
    layers, heads_per_layer = history.shares.shape[1:]
    names = [f"L{layer} H{head}" for layer in range(layers) for head in range(heads_per_layer)]
    shares = history.shares.reshape(len(steps), -1).T.astype(np.float32)  # [head, step]
    share_record = AttentionRecord(record.mechanism, shares, ("head", "step"), names, steps,
                                   meta={"epsilon": history.epsilon}, extras={"steps": history.steps})
    show_figure(heatmap(shares, names, steps, title=_("Each head's first-token share during training"), zmax=1.0,
                        query_title="", key_title=_("training step"), value_name=_("share"), gettext=_),
                share_record, key="inside_sink_history", name="lm-sink-history")
