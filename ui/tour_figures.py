"""The records and figures of the guided tour's steps (ui/tour.py): each step's control value in,
the record its full page would build and the figure drawn from it out. No streamlit."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from models.record import AttentionRecord
from models.registry import get_mechanism
from viz.i18n_text import N_, Gettext

DATES = ("Wednesday, May 9, 2018", "9 May 2018", "2018-5-9", "2018年5月9日")
SENTENCE = "The cat sat on the mat because it was tired."
DOCUMENTS = {
    "negative": "We went there on a Friday evening with my sister. The table by the window was free. "
    "The waiter forgot our order twice and was rude when we asked about it. We took the bus home afterwards.",
    "positive": "We went there on a Friday evening with my sister. The table by the window was free. "
    "The waiter was friendly and brought our order quickly. We took the bus home afterwards.",
}
# The Transformer page's views: id (its tf_view) and name, as pages/transformer.py names them.
KINDS = {"encoder": N_("Encoder self-attention"), "decoder": N_("Decoder masked self-attention"),
         "cross": N_("Cross-attention")}


def seq2seq_record(variant: str, text: str) -> AttentionRecord:
    return get_mechanism(variant).build({"text": text})


def seq2seq_figure(title: str) -> Callable[[AttentionRecord, str, Gettext], go.Figure]:
    def figure(record: AttentionRecord, value: str, _: Gettext) -> go.Figure:
        from viz.seq2seq import alignment_heatmap

        return alignment_heatmap(record, title=_(title), height=380, gettext=_)

    return figure


def last_state_record(record: AttentionRecord, output: str | None = None) -> AttentionRecord:
    """Returns what the decoder of an encoder–decoder without attention reads, drawn on a seq2seq
    record's characters: c = h_T for every output character, i.e. all weight on the last input
    character. output: the no-attention model's output, where it was trained; else the record has
    none (the attention model's output is not this decoder's)."""
    weights = np.zeros_like(record.weights)
    weights[:, -1] = 1.0
    meta = {k: v for k, v in record.meta.items() if k != "output"}
    meta["context"] = "c = h_T (the last encoder state) at every output step"
    if output is not None:
        meta["output"] = output
    return AttentionRecord(mechanism="no-attention", weights=weights, axes=record.axes,
                           query_labels=record.query_labels, key_labels=record.key_labels, meta=meta)


def no_attention_output(text: str) -> str | None:
    """Returns the output of the encoder–decoder trained here without attention (registry id
    no-attention), or None where it is not registered or not trained."""
    from models.checkpoint import MissingCheckpoint

    try:
        return get_mechanism("no-attention").build({"text": text}).meta.get("output")
    except (KeyError, MissingCheckpoint):
        return None


def bottleneck_record(value: str) -> AttentionRecord:
    record = seq2seq_record("bahdanau", DATES[0])
    return last_state_record(record, no_attention_output(DATES[0])) if value == "last" else record


@lru_cache(maxsize=2)
def scene() -> np.ndarray:
    from models.captioner.task import SceneObject, build_scene, render_clean

    # The images page's default scene (one red circle, 18 px, at x = 8, y = 20), so that its link opens the same.
    return render_clean(build_scene([SceneObject("circle", "red", 8, 20, 18)]))


def caption_record(value: str) -> AttentionRecord:
    return get_mechanism(value).build({"image": scene()})


def caption_figure(record: AttentionRecord, value: str, _: Gettext) -> go.Figure:
    from viz.images import caption_figure

    return caption_figure(scene(), record, gettext=_)


def feedforward_record(value: str) -> AttentionRecord:
    from models.feedforward.records import stacked_record

    records = [get_mechanism(m).build({"length": int(value)}) for m in ("feedforward", "feedforward-unbounded")]
    return stacked_record(records, ["paper", "unbounded"])


def feedforward_figure(record: AttentionRecord, value: str, _: Gettext) -> go.Figure:
    from viz.feedforward import alpha_over_time

    return alpha_over_time(record, title=_("α over {length} steps").format(length=f"{int(value):,}"),
                           row_titles=[_("Paper form: e_t = tanh(·)"), _("Unbounded score: e_t = wᵀh_t + b")],
                           height=380, gettext=_)


def han_figure(record: AttentionRecord, value: str, _: Gettext) -> go.Figure:
    from viz.han import sentence_word_bars

    # Bars, not the HAN page's sentences × words map: in the tour's narrow column that map's cells were
    # ~30 px, and the words ran into each other.
    return sentence_word_bars(record, title=_("Where the network looked"), gettext=_)


def clearest_previous_token_head(record: AttentionRecord, layer: int) -> int:
    """Returns the head of `layer` with the highest previous-token score (models/heads/statistics.py):
    a head with a pattern one can read, picked by a measured statistic."""
    from models.heads.statistics import head_statistic

    scores = head_statistic(record.weights[layer], record.query_labels, "previous_score", exclude_special=True)
    return int(np.argmax(scores))


def self_attention_record(value: str) -> AttentionRecord:
    from models.heads.statistics import matrix_record

    record = get_mechanism("transformer").build({"text": SENTENCE})
    layer = int(value)
    head = clearest_previous_token_head(record, layer)
    return matrix_record(record, record.weights[layer, head], layer=layer, head=head)


def self_attention_figure(record: AttentionRecord, value: str, _: Gettext) -> go.Figure:
    from viz.figures import heatmap

    return heatmap(record.weights, record.query_labels, record.key_labels, height=380,
                   title=_("Layer {layer}, head {head}").format(layer=record.meta["layer"], head=record.meta["head"]),
                   query_title=_("query token"), key_title=_("key token"), gettext=_)


def transformer_record(value: str) -> AttentionRecord:
    from models.encdec.records import best_cross_head, head_record

    layer, head = best_cross_head()
    return head_record(get_mechanism(f"transformer-{value}").build({"text": DATES[1]}), layer, head)


def transformer_figure(record: AttentionRecord, value: str, _: Gettext) -> go.Figure:
    from models.encdec.records import best_cross_head
    from viz.encdec import attention_map

    layer, head = best_cross_head()
    return attention_map(record, height=380, gettext=_, title=_("{kind}: layer {layer}, head {head}").format(
        kind=_(KINDS[value]), layer=layer, head=head))


def qkv_record(value: str) -> AttentionRecord:
    return get_mechanism("qkv-dot").build({"temperature": float(value)})


def qkv_figure(record: AttentionRecord, value: str, _: Gettext) -> go.Figure:
    from viz.figures import weight_bars

    return weight_bars(record.weights[0], record.key_labels, title=_("α at τ = {tau}").format(tau=value), value_name="α",
                       gettext=_)


def transformer_params(value: str) -> dict[str, str]:
    from models.encdec.records import best_cross_head

    layer, head = best_cross_head()
    return {"tf_view": value, "tf_layer": str(layer), "tf_head": str(head), "tf_text": DATES[1]}


def self_attention_params(value: str) -> dict[str, str]:
    record = self_attention_record(value)
    return {"sa_view": "head", "sa_text": SENTENCE, "sa_layer": value, "sa_head": str(record.meta["head"])}


# The 2019 tests the tour's explanation step shows (pages/explanation.py's ex_test): id and name.
TESTS_2019 = {"adversary": N_("Adversarial α̃"), "uniform": N_("Uniform α")}


def explanation_record(value: str) -> AttentionRecord:
    return get_mechanism(f"bahdanau-{value}").build({"text": DATES[0]})


def explanation_figure(record: AttentionRecord, value: str, _: Gettext) -> go.Figure:
    from viz.explanation import panels_figure

    second = _("α̃: output {output}").format(output=record.meta.get("output_tilde", record.meta.get("output_uniform")))
    return panels_figure([record.weights[0], record.weights[1]],
                         [_("α: output {output}").format(output=record.meta["output"]), second],
                         record.query_labels, record.key_labels, gettext=_)
