"""Streamlit helpers of the MiniLM pages: cached runner and records, the head the page opens on,
click-to-open a head, and the notice that MiniLM reads English."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import streamlit as st

from models.heads.rollout import rollout_of_record
from models.heads.statistics import head_statistic
from models.record import AttentionRecord
from models.registry import get_mechanism
from models.transformer.records import shared_runner
from models.transformer.word_pieces import merge_matrix, merge_word_pieces
from ui.i18n import translator
from ui.widgets import clicked_points

# The statistic that picks the head a page opens on: a previous-token head draws one clear diagonal.
OPENING_STATISTIC = "previous_score"

# The default text (24 tokens) and most sentences fit the 32-token bucket: compile it while
# the model loads; other buckets compile on first use (about a second each on 2 idle cores).
WARMUP_BUCKETS = (32,)


@st.cache_resource(show_spinner=False, max_entries=2)
def warmed_runner(model_dir: str):
    """Returns the shared runner of a folder ("" = the installed default model) with its attention
    forward compiled for WARMUP_BUCKETS (once)."""
    runner = shared_runner(model_dir or None)
    runner.warmup(WARMUP_BUCKETS)
    return runner


# Records of 512 tokens weigh 75 MB: st.cache_data would unpickle a copy on every rerun
# (~0.5 s measured here), so records are cached as resources and never mutated.
@st.cache_resource(show_spinner=False, max_entries=6)
def cached_record(model_dir: str, text: str, text_pair: str, merge: bool) -> AttentionRecord:
    """Returns the attention record of a text (or pair), word pieces merged if asked."""
    warmed_runner(model_dir)
    record = get_mechanism("transformer").build({"text": text, "text_pair": text_pair or None, "model_dir": model_dir})
    return merge_word_pieces(record) if merge else record


# Flow of 40 tokens takes about 2 s on 2 cores: cache it like the records.
@st.cache_resource(show_spinner=False, max_entries=6)
def cached_rollout(model_dir: str, text: str, text_pair: str, merge: bool, method: str, fusion: str) -> AttentionRecord:
    """Returns the rollout or flow record of a text (or pair), computed over word pieces and then
    merged into words if asked (rows mean, columns sum, as in the head views).

    Raises InputError when flow is asked for more than MAX_FLOW_TOKENS tokens.
    """
    tokens = cached_record(model_dir, text, text_pair, False)
    record = rollout_of_record(tokens, method=method, fusion=fusion, mechanism="transformer-rollout")
    if not merge:
        return record
    merged = merge_word_pieces(record)
    if "raw" not in record.extras:
        return merged
    index = merged.extras["token_to_word"]
    return replace(merged, extras={**merged.extras, "raw": merge_matrix(record.extras["raw"], index)})


@st.cache_resource(show_spinner=False, max_entries=4)
def opening_head(model_dir: str, text: str) -> tuple[int, int, float]:
    """Returns (layer, head, score) of the head with the highest previous-token score (TransformerLens's
    Σ A·P / Σ A with P at k = q − 1, [CLS] and [SEP] left out of both sums) on `text`: measured, so that
    the page opens on a head with a clear pattern whatever the model folder."""
    record = cached_record(model_dir, text, "", False)
    values = head_statistic(record.weights, record.query_labels, OPENING_STATISTIC, exclude_special=True)
    layer, head = np.unravel_index(int(np.argmax(values)), values.shape)
    return int(layer), int(head), float(values[layer, head])


def english_model_notice() -> None:
    """Says, up front, that MiniLM is an English model (the self-attention and sentence-alignment pages)."""
    _ = translator()
    st.info(_("MiniLM (all-MiniLM-L6-v2) is an **English** model: its vocabulary and its training are English. "
              "Chinese is cut into single characters, some of them [UNK], and its attention says little about "
              "how the model reads Chinese."), icon=":material/translate:")


def head_from_selection(state: Mapping[str, Any] | None) -> tuple[int, int] | None:
    """Returns (layer, head) of the first clicked cell of the statistics heatmap, else None.

    state: the plotly chart's event state ({"selection": {"points": [...]}}). The clickable
    trace's points have y = "layer i" and x = "head j"; Streamlit may pass customdata as a
    list or as a dict keyed by position, so the axis labels are read first.
    """
    for point in clicked_points(state):
        found = _cell_from_labels(point.get("y"), point.get("x")) or _cell_from_custom(point.get("customdata"))
        if found is not None:
            return found
    return None


def _cell_from_labels(y: Any, x: Any) -> tuple[int, int] | None:
    layer = re.fullmatch(r"layer (\d+)", str(y or ""))
    head = re.fullmatch(r"head (\d+)", str(x or ""))
    return (int(layer.group(1)), int(head.group(1))) if layer and head else None


def _cell_from_custom(custom: Any) -> tuple[int, int] | None:
    if isinstance(custom, Mapping):
        custom = [custom.get(k, custom.get(str(k))) for k in range(2)]
    try:
        return int(custom[0]), int(custom[1])
    except (TypeError, ValueError, OverflowError, IndexError, KeyError):  # OverflowError: ±inf
        return None


def open_clicked_head(chart_key: str, layer_key: str, head_key: str, opened: Mapping[str, Any]) -> None:
    """on_select callback: sets the layer and head pickers to the clicked cell.

    opened: further session-state values to set when a cell was clicked (e.g. the view).
    """
    picked = head_from_selection(st.session_state.get(chart_key))
    if picked is not None:
        st.session_state[layer_key], st.session_state[head_key] = picked
        for key, value in opened.items():
            st.session_state[key] = value
