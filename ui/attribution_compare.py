"""The "Compare with an attribution" switch of each model's own page: α beside one attribution method's map over
the same tokens (models/attribution, through the registry's *-attribution entries), each row drawn as its share."""

from __future__ import annotations

import numpy as np
import streamlit as st

from models.attribution.records import APPLIES, final_map
from models.explain.measures import shares
from models.record import AttentionRecord
from models.registry import get_mechanism
from models.registry_explanation import METHOD
from ui.i18n import translator
from ui.links import bound
from ui.widgets import checked, show_figure
from viz.explanation import panels_figure

ENTRIES = {"encoder": "transformer-attribution", "decoder": "lm-attribution", "encdec": "transformer-cross-attribution"}


@st.cache_resource(show_spinner=False, max_entries=8)  # shared, never mutated
def cached_attribution(architecture: str, text: str, model_dir: str, method: str) -> AttentionRecord:
    options = {"text": text, "method": method}
    if architecture != "encdec":
        options["model_dir"] = model_dir or None
    return get_mechanism(ENTRIES[architecture]).build(options)


def compare_with_attribution(architecture: str, text: str, alpha: np.ndarray, labels: tuple, key_labels: tuple, *,
                             alpha_title: str, model_dir: str = "", key: str) -> None:
    """Shows the switch; on, a method picker and α [query, key] beside the method's map (rows aligned: a decoder's
    gradient methods have no row for the last token)."""
    _ = translator()
    if not bound(st.toggle, _("Compare with an attribution"), key=f"{key}_compare",
                 help=_("α beside what an attribution method says each output owes to each input")):
        return
    methods = [m for m in METHOD.choices if APPLIES[m][architecture] is True]
    method = bound(st.selectbox, _("Attribution method"), methods, index=methods.index("norm"), key=f"{key}_method")
    with st.spinner(_("Running {method}…").format(method=method)):
        record = checked(cached_attribution, architecture, text, model_dir, method, stop=False)
    if record is None:
        return
    theirs = final_map(record)
    rows = min(len(alpha), len(theirs))
    maps = [np.asarray(alpha)[-rows:], theirs[-rows:]]
    titles = [alpha_title, method]
    shown = AttentionRecord("attribution-compare", np.stack(maps).astype(np.float32), ("method", "query", "key"),
                            tuple(labels)[-rows:], key_labels, meta={"methods": ["alpha", method], **record.meta},
                            extras={"shares": np.stack([shares(m) for m in maps]).astype(np.float32)})
    show_figure(panels_figure(maps, titles, shown.query_labels, key_labels, gettext=_), shown, key=f"{key}_compared",
                name=f"{ENTRIES[architecture]}-{method}")
    st.caption(_("{paper}. Each panel's colour is the entry's share of its row; the page “Is attention an "
                 "explanation?” scores every method against the truth where a model knows it.").format(
        paper=record.meta["paper"]))
