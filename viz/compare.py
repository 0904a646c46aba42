"""The difference view of two inputs: α_B − α_A on a diverging scale centred on 0."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from models.compare import ONLY_A, ONLY_B
from models.record import AttentionRecord
from viz.figures import MAX_TICKS, heatmap, heatmap_height
from viz.i18n_text import Gettext, untranslated
from viz.labels import safe_label, unique_labels

DIVERGING = "RdBu_r"  # blue: A attends more, red: B attends more, white: no change
MARK_COLOURS = {ONLY_A: "#1f5fa8", ONLY_B: "#b2182b"}


MAX_TICK_CHARS = 24  # a longer label (a document's sentence) is cut on the axis; its hover shows it whole


def _short(label: str) -> str:
    # The label cut to MAX_TICK_CHARS with an ellipsis, keeping a "(A only)" / "(B only)" mark.
    mark = next((f" ({source})" for source in MARK_COLOURS if label.endswith(f" ({source})")), "")
    body = label[: len(label) - len(mark)]
    return label if len(body) <= MAX_TICK_CHARS else body[: MAX_TICK_CHARS - 1].rstrip() + "…" + mark


def _tick_text(labels: tuple[str, ...]) -> list[str]:
    # Tokens only one input has are drawn in that input's colour (the label also says which).
    out = []
    for label in labels:
        colour = next((c for source, c in MARK_COLOURS.items() if label.endswith(f"({source})")), None)
        shown = safe_label(_short(label))  # escaped; the tick values (unique_labels) keep the whole label
        out.append(f'<span style="color:{colour}">{shown}</span>' if colour else shown)
    return out


def difference_heatmap(record: AttentionRecord, *, title: str, query_title: str | None = None,
                       key_title: str | None = None, gettext: Gettext = untranslated) -> go.Figure:
    """Returns the heatmap of a difference record (models/compare.py): NaN cells (a token only
    one input has) stay blank; the colour scale is symmetric around 0. Axis titles left None are
    "query token" and "key token" in gettext's language."""
    _ = gettext
    query_title = _("query token") if query_title is None else query_title
    key_title = _("key token") if key_title is None else key_title
    diff = record.weights
    finite = diff[np.isfinite(diff)]
    bound = max(float(np.abs(finite).max()) if finite.size else 0.0, 1e-6)
    fig = heatmap(diff, record.query_labels, record.key_labels, title=title, colorscale=DIVERGING,
                  query_title=query_title, key_title=key_title, value_name="α_B − α_A", gettext=gettext)
    fig.update_traces(
        zmin=-bound, zmax=bound, zmid=0.0, hoverongaps=False,
        hovertemplate=(f"{query_title}: %{{y}}" if query_title else "%{y}")
        + f"<br>{key_title}: %{{x}}<br>α_B − α_A = %{{z:+.4f}}<extra></extra>",
    )
    fig.update_layout(plot_bgcolor="#e8e8e8")  # blank (undefined) cells show grey, not "no change" white
    if max(len(record.query_labels), len(record.key_labels)) <= MAX_TICKS:  # else every k-th tick, as heatmap()
        fig.update_layout(
            xaxis={"tickvals": unique_labels(record.key_labels), "ticktext": _tick_text(record.key_labels)},
            yaxis={"tickvals": unique_labels(record.query_labels), "ticktext": _tick_text(record.query_labels)},
            height=heatmap_height(len(record.query_labels), _tick_text(record.key_labels), titled=bool(title)),
        )
    return fig
