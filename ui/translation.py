"""The Transformer page's last section: a translation model the user brings (a Marian, T5, BART or mBART folder
under the operator's model root), shown as the survey shows Bahdanau's alignment: cross-attention between the
target's queries and the source, per layer and head and as their mean, its best-aligned pairs and the source pieces
no output piece attends to (models/translation/records.py, through the transformer-cross entry)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from models.model_folders import model_root
from models.record import AttentionRecord
from models.registry import get_mechanism
from ui.i18n import translator
from ui.links import bound
from ui.model_folder import TRANSLATION_FOLDER, model_folder
from ui.widgets import checked, index_in, show_figure, show_notice
from viz.figures import heatmap

SOURCE = "The cat sat on the mat."
MAX_SOURCE = 1_000
MAX_TARGET = 2_000


@st.cache_resource(show_spinner=False, max_entries=8)  # shared, never mutated
def cached_cross(model_dir: str, source: str, target: str) -> AttentionRecord:
    return get_mechanism("transformer-cross").build({"text": source, "model_dir": model_dir, "target": target or None})


def mean_record(record: AttentionRecord) -> AttentionRecord:
    """Returns the head-mean alignment [target, source] of a cross-attention record, as its own record."""
    return AttentionRecord(record.mechanism, np.asarray(record.extras["alignment"], np.float32), ("query", "key"),
                           record.query_labels, record.key_labels, meta=dict(record.meta))


def translation_section() -> None:
    """Shows the section where the operator set a model root; nothing otherwise."""
    if model_root() is None:
        return
    _ = translator()
    st.header(_("Your translation model"))
    st.markdown(_("The survey's own example is translation, English to Chinese: attention between the target's "
                  "queries and every element of the source. Name a translation folder to see it on a real model."))
    model_dir = model_folder(TRANSLATION_FOLDER, key="tf_model_dir")
    if not model_dir:
        st.info(_("Name a translation folder above to see its cross-attention."), icon=":material/folder_open:")
        return
    source = st.text_input(_("Source sentence"), SOURCE, key="tf_source", max_chars=MAX_SOURCE)[:MAX_SOURCE]
    target = st.text_input(_("Target (optional: empty = the model's own translation)"), "", key="tf_target",
                           max_chars=MAX_TARGET)[:MAX_TARGET]
    if not source.strip():
        st.info(_("Type a source sentence above."), icon=":material/edit:")
        return
    with st.spinner(_("Translating…")):
        record = checked(cached_cross, model_dir, source, target.strip(), stop=False)
    if record is None:
        return
    for notice in record.meta.get("notices", []):
        show_notice(notice)
    read = _("read with teacher forcing") if record.meta.get("teacher_forced") else _("the model's own greedy output")
    st.markdown(_("**Target** ({how}): `{output}`").format(how=read, output=record.meta["output"]))
    mean = mean_record(record)
    show_figure(heatmap(mean.weights, mean.query_labels, mean.key_labels, gettext=_, query_title=_("target piece"),
                        key_title=_("source piece"),
                        title=_("Cross-attention, mean over every layer and head")), mean,
                key="tf_translation_mean", name="translation-cross-mean", fit_phone=True)
    layers, heads = record.weights.shape[:2]
    left, right = st.columns(2)
    layer = index_in(bound(left.selectbox, _("Layer"), range(layers), index=layers - 1, key="tf_tr_layer"), layers)
    head = index_in(bound(right.selectbox, _("Head"), range(heads), key="tf_tr_head"), heads)
    one = AttentionRecord(record.mechanism, np.asarray(record.weights[layer, head]), ("query", "key"),
                          record.query_labels, record.key_labels, meta={**record.meta, "layer": layer, "head": head})
    show_figure(heatmap(one.weights, one.query_labels, one.key_labels, gettext=_, query_title=_("target piece"),
                        key_title=_("source piece"),
                        title=_("Cross-attention: layer {layer}, head {head}").format(layer=layer, head=head)), one,
                key="tf_translation_head", name=f"translation-cross-layer{layer}-head{head}", fit_phone=True)
    pairs = record.meta.get("aligned_pairs", [])
    if pairs:
        st.markdown(_("**Best-aligned pairs** (head mean):"))
        st.dataframe([{_("target piece"): p[0], _("source piece"): p[1], _("weight"): round(float(p[2]), 3)}
                      for p in pairs[:12]], hide_index=True)
    unattended = record.meta.get("unattended_source", [])
    if unattended:
        st.caption(_("Source pieces no target piece attends to most: {pieces}").format(
            pieces=", ".join(f"“{p[0]}”" for p in unattended[:20])))
