"""Transformer: the three kinds of attention of an encoder–decoder trained here on the date task."""

import streamlit as st

from models.encdec.quality import head_table_rows, measured_quality
from models.encdec.records import (
    best_cross_head,
    decoding_step_record,
    encoder_rollout_record,
    head_record,
    random_example,
    snapshot_steps,
)
from models.registry import TRANSFORMER, get_mechanism, mechanisms_on_page
from ui.links import bound, linked_text, warn_refused
from ui.router import ensure_router
from ui.widgets import checked, escape_markdown, index_in, option_radio, show_figure, show_panels, view_switch
from viz.encdec import attention_map, decoding_step_figure, head_grid, rollout_figure
from viz.plotly_json import side_by_side
from viz.seq2seq import alignment_heatmap

ensure_router()

KINDS = {"encoder": "Encoder self-attention", "decoder": "Decoder masked self-attention", "cross": "Cross-attention"}
EXPLAIN = {
    "encoder": "Inside the **source**: every input character attends to every input character (padding gets 0).",
    "decoder": "Inside the **target**: the character being written (row) attends to what the decoder has read so "
    "far — `<s>`, then the characters already written. Everything above the diagonal is masked: exactly 0, "
    "drawn blank.",
    "cross": "**Between them**: the query of the output character being written against the encoded input "
    "characters (keys and values).",
}
mechanisms = {m.variant: m for m in mechanisms_on_page(TRANSFORMER.file)}
text_option = mechanisms["cross"].option("text")

st.title("Transformer: three kinds of attention")
st.markdown(
    "A small Transformer encoder–decoder (Vaswani et al., 2017: 2 encoder and 2 decoder layers, 4 heads, "
    "width 64, sinusoidal positions), trained here on the same character-level date task as the seq2seq page, "
    "turns a free-form date into `YYYY-MM-DD`. Its attention happens in three places: inside the source, "
    "inside the target (masked, so a position sees only the past) and between a target query and the source."
)


@st.cache_data(show_spinner=False, max_entries=256)
def _record(kind: str, text: str, step: int | None):
    return get_mechanism(f"transformer-{kind}").build({"text": text, "step": step})


@st.cache_data(show_spinner=False, max_entries=64)
def _bahdanau(text: str):
    return get_mechanism("bahdanau").build({"text": text})


@st.cache_data(show_spinner=False, max_entries=64)
def _rollout(text: str, method: str, fusion: str):
    return encoder_rollout_record(get_mechanism("transformer-encoder"), text, method=method, fusion=fusion)


def _draw_random():
    st.session_state.tf_seed = st.session_state.get("tf_seed", 0) + 1
    example = random_example(2000 + st.session_state.tf_seed)
    st.session_state.tf_text = example.source
    st.session_state.tf_truth = {"source": example.source, "spans": [list(s) for s in example.spans]}


typed, random_col = st.columns([4, 1], vertical_alignment="bottom")
text = linked_text(typed.text_input, "Date to normalise (or anything)", mechanisms["cross"].example["text"], key="tf_text",
                   max_chars=text_option.max_chars)
random_col.button("Random example", on_click=_draw_random, icon=":material/casino:", key="tf_random",
                  help="Draws a generated date and outlines its true alignment on the cross-attention maps.")
truth_state = st.session_state.get("tf_truth")
truth = truth_state["spans"] if truth_state and truth_state["source"] == text else None

records = {kind: checked(_record, kind, text, None) for kind in KINDS}
cross = records["cross"]
st.markdown(f"**Output:** `{cross.meta['output']}`")
for notice in cross.meta["notices"]:
    st.warning(escape_markdown(notice), icon=":material/info:")


# Links made before the views shared their pickers carried one layer and head per view
# (tf_cross_head=2): they open with the shown view's values in the shared pickers.
shown_kind = next((k for k, t in KINDS.items() if t == st.query_params.get("tf_view")), "encoder")
for part, count in zip(("layer", "head"), cross.weights.shape[:2]):
    old_values = {kind: st.query_params.pop(f"tf_{kind}_{part}") for kind in KINDS if f"tf_{kind}_{part}" in st.query_params}
    if shown_kind not in old_values or f"tf_{part}" in st.session_state or f"tf_{part}" in st.query_params:
        continue
    if old_values[shown_kind] in {str(i) for i in range(count)}:
        st.session_state[f"tf_{part}"] = int(old_values[shown_kind])
        st.query_params[f"tf_{part}"] = old_values[shown_kind]
    else:
        warn_refused(part.capitalize(), old_values[shown_kind], 0)


# The three formulas, typeset once here, outside the fragment below: one inside would be typeset
# again by the browser on every switch of the view (docs/PERFORMANCE.md, "The page").
st.latex(r"\begin{aligned}" + r" \\ ".join(
    mechanisms[kind].formula.replace("=", "&=", 1) + rf"&&\text{{{title.lower()}}}" for kind, title in KINDS.items()
) + r"\end{aligned}")


# Each section whose controls change only its own figures is a fragment (st.fragment): moving
# them reruns that section alone. The Link boxes read the browser's address, which Streamlit
# updates on a fragment's rerun too, so the boxes of the other sections stay right.
# The three views share their Layer and Head pickers and their charts' keys (the three kinds have
# the same layers and heads): a switch of the view updates the pickers and charts the browser has,
# rather than mounting new ones.
@st.fragment
def kinds_section(records: dict, truth) -> None:
    chosen = view_switch(list(KINDS.values()), key="tf_view")
    kind, title = next((k, t) for k, t in KINDS.items() if t == chosen)
    record = records[kind]
    layers, heads = record.weights.shape[:2]
    st.markdown(EXPLAIN[kind])
    pick_layer, pick_head = st.columns(2)
    layer = index_in(bound(pick_layer.selectbox, "Layer", range(layers), key="tf_layer"), layers)
    head = index_in(bound(pick_head.selectbox, "Head", range(heads), key="tf_head"), heads)
    one = head_record(record, layer, head)
    fig = attention_map(one, title=f"{title}: layer {layer}, head {head}", truth=truth if kind == "cross" else None)
    show_figure(fig, one, key="tf_map", name=f"transformer-{kind}-layer{layer}-head{head}")
    grid = head_grid(record, title=f"{title}: every layer and head")
    show_figure(grid, record, key="tf_grid", name=f"transformer-{kind}-heads")


kinds_section(records, truth)

st.header("Decoding, one character at a time")


@st.fragment
def decoding_section(records: dict) -> None:
    output_labels = records["cross"].query_labels
    position = bound(st.slider, "Decoding step t", 0, len(output_labels) - 1, 0, key="tf_position",
                     help="Greedy decoding writes one output character per step.")
    st.markdown(
        f"While writing output character **t = {position}** (`{escape_markdown(output_labels[position])}`), every "
        f"head of the decoder looks back over what it has read so far (`<s>` and the {position} characters already "
        "written) and, through cross-attention, over the input. Later positions do not exist yet: the mask gives "
        "them exactly 0."
    )
    # Both maps in one figure (one redraw per step, not two), each panel with its own Export menu.
    panels = []
    for kind, what in (("decoder", "over the output so far"), ("cross", "over the input")):
        step_record = decoding_step_record(records[kind], position)
        step_fig = decoding_step_figure(step_record, title=f"Step {position}: {KINDS[kind].lower()} {what}")
        panels.append((step_fig, step_record, f"tf_step_{kind}", f"transformer-{kind}-step{position}",
                       f"Export {'decoder' if kind == 'decoder' else 'cross-attention'}"))
    show_panels(side_by_side([p[0] for p in panels], share_y=True, gap=0.06), panels, chart_key="tf_step_chart")


decoding_section(records)

st.header("Beside Bahdanau's RNN attention")
best_layer, best_head = best_cross_head()
measured = measured_quality()
st.markdown(
    f"The same input under Bahdanau's additive attention (seq2seq page) and under the Transformer's best-aligned "
    f"cross-attention head (layer {best_layer}, head {best_head}, picked on validation dates)."
    + (f" On the 1,000 held-out dates, {measured['best_head_alignment']:.1%} of this head's output digits have "
       f"their attention argmax inside the true span." if measured else "")
)
left, right = st.columns(2, gap="medium")
with left:
    rnn = checked(_bahdanau, text)
    st.markdown(f"**Bahdanau output:** `{rnn.meta['output']}`")
    show_figure(alignment_heatmap(rnn, truth=truth, title="Bahdanau (RNN): α over the input", height=380), rnn,
                key="tf_bahdanau", name="bahdanau")
with right:
    best = head_record(cross, best_layer, best_head)
    st.markdown(f"**Transformer output:** `{cross.meta['output']}`")
    best_fig = attention_map(best, truth=truth, title=f"Transformer: layer {best_layer}, head {best_head}", height=380)
    show_figure(best_fig, best, key="tf_best_head", name=f"transformer-cross-layer{best_layer}-head{best_head}")
rows = head_table_rows()
if rows:
    st.markdown(
        "**The heads split the work.** Measured on the 1,000 held-out dates: the share of output digits whose "
        "argmax falls inside the true span, per head and per field. The month's first digit is where heads differ "
        "most: many look at the separator after the month (`/`, `-`, `.`, `月`), which tells a one-digit month "
        "from a two-digit one — outside the span, so it counts as a miss."
    )
    st.dataframe(rows, hide_index=True)

st.header("Encoder rollout")
st.markdown(
    "Attention rollout (Abnar & Zuidema, 2020) follows the encoder's attention through both layers, with the "
    "residual connection counted as an identity (Ã = ½A + ½I, rows renormalised) and each layer's heads fused "
    "first: row i says how much of input character i's top-layer state traces back to each input character, "
    "**if** attention alone mixed information linearly. It looks at neither the values, the feed-forward "
    "networks nor the layer norms, so it is a hypothesis about where information goes, not a measurement of "
    "what the model uses. Flow replaces the product by a maximum flow through the same graph."
)


@st.fragment
def rollout_section(text: str) -> None:
    rollout_entry = get_mechanism("transformer-rollout")
    method_col, fusion_col = st.columns(2)
    with method_col:
        method = option_radio(rollout_entry.option("method"), key="tf_rollout_method", horizontal=True)
    with fusion_col:
        fusion = option_radio(rollout_entry.option("fusion"), key="tf_rollout_fusion", horizontal=True)
    rolled = checked(_rollout, text, method, fusion)
    show_figure(rollout_figure(rolled, title=f"Encoder {method}, heads fused by {fusion}"), rolled,
                key="tf_rollout", name=f"transformer-encoder-{method}-{fusion}")


rollout_section(text)

st.header("Watch it learn")
st.markdown("The same input under snapshots taken during training: step 0 is the untrained (random) model.")


@st.fragment
def snapshot_section(text: str) -> None:
    steps = snapshot_steps()
    if st.session_state.get("tf_step") not in steps:
        st.session_state.tf_step = steps[-1]
    step_col, kind_col = st.columns([3, 2], vertical_alignment="bottom")
    step = bound(step_col.select_slider, "Training step", steps, key="tf_step")
    shown_kind = bound(kind_col.radio, "Attention", list(KINDS), format_func=KINDS.get, key="tf_snapshot_kind",
                       horizontal=True)
    snap = checked(_record, shown_kind, text, step)
    st.markdown(f"**Output at step {step}:** `{snap.meta['output']}`")
    show_figure(head_grid(snap, title=f"{KINDS[shown_kind]} at training step {step}"), snap,
                key="tf_snapshot", name=f"transformer-{shown_kind}-step{step}")


snapshot_section(text)
