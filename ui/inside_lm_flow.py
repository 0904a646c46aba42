"""Section 6 of the "Inside a language model" page: the information-flow graph (models/flow/, the registry's
"flow" entry). One forward pass splits every sum of the residual stream into its parts; the route is traced back
from the chosen prediction through the edges above the threshold (viz/flow.py draws it)."""

from __future__ import annotations

import streamlit as st

from models.record import AttentionRecord
from models.registry import get_mechanism
from ui.i18n import translator
from ui.inside_lm import mechanism_heading
from ui.inside_lm_controls import position_and_option
from ui.markdown import escape_markdown
from ui.widgets import checked, show_figure, show_notice
from viz.flow import flow_figure, head_weights_figure

FLOW = get_mechanism("flow")


@st.cache_resource(show_spinner=False, max_entries=4)  # shared, never mutated
def cached_flow(model_dir: str, prompt: str, position: int, threshold: float) -> AttentionRecord:
    """Returns the flow record of a prompt, its options read by the registry."""
    return FLOW.build({"text": prompt, "model_dir": model_dir or None, "position": position, "threshold": threshold})


def flow_section(model_dir: str, prompt: str, tokens: tuple[str, ...]) -> None:
    """Shows section 6: the prediction and threshold, the route, and every head's total edge weight."""
    _ = translator()
    mechanism_heading(FLOW)
    st.markdown(_("Each edge is a part of a sum in the residual stream — one token through the heads of a layer, "
                  "the residual itself, or the feed-forward network — weighed by how much of the sum it makes. "
                  "Only the edges above the threshold that lead to the chosen prediction are drawn. Hover an edge "
                  "to see the heads that carry it."))
    position, threshold = position_and_option(tokens, [3, 2], _("Prediction after"), "inside_flow_position",
                                              FLOW.option("threshold"), "inside_flow_threshold", _("Threshold"))
    with st.spinner(_("Splitting every sum into its parts…")):
        record = checked(cached_flow, model_dir, prompt, position, threshold)
    meta = record.meta
    show_notice(meta.get("notice"))
    st.caption(_("The model predicts “{token}” (p = {p:.3f}) after position {position}. Heads on the route: "
                 "{heads}.").format(token=escape_markdown(str(meta["prediction"])),
                                    p=meta["prediction_probability"], position=position,
                                    heads=", ".join(meta["route_heads"]) or _("none")))
    show_figure(flow_figure(record, title=_("The route to the prediction"), gettext=_), record,
                key="inside_flow_graph", name=f"flow-position{position}")
    show_figure(head_weights_figure(record, title=_("Each head's total edge weight (outlined: on the route)"),
                                    gettext=_), record, key="inside_flow_heads", name="flow-heads")
