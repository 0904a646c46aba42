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
from ui.legend import TRANSFORMER_LEGEND, symbol_legend
from ui.links import bound, linked_text, warn_refused
from ui.router import start_page
from ui.story import page_header
from ui.translation import translation_section
from ui.widgets import (
    checked,
    escape_markdown,
    index_in,
    option_radio,
    show_figure,
    show_notice,
    show_panels,
    view_switch,
)
from viz.encdec import attention_map, decoding_step_figure, head_grid, rollout_figure
from viz.i18n_text import N_
from viz.plotly_json import side_by_side
from viz.seq2seq import alignment_heatmap

_ = start_page()

# The views: id (the URL's value, tf_view) and name, shown translated.
KINDS = {"encoder": N_("Encoder self-attention"), "decoder": N_("Decoder masked self-attention"),
         "cross": N_("Cross-attention")}
EXPLAIN = {
    "encoder": N_("Inside the **source**: every input character attends to every input character (padding gets 0). "
                  "Self-attention: queries, keys and values all come from the source (Q = K = V)."),
    "decoder": N_("Inside the **target**: the character being written (row) attends to what the decoder has read so "
                  "far — `<s>`, then the characters already written. Everything above the diagonal is masked: "
                  "exactly 0, drawn blank."),
    "cross": N_("**Between them**: the query of the output character being written against the encoded input "
                "characters, which are both the keys and the values (K = V): the encoder–decoder attention of "
                "Bahdanau and Luong, in the Transformer."),
}
mechanisms = {m.variant: m for m in mechanisms_on_page(TRANSFORMER.file)}
text_option = mechanisms["cross"].option("text")

page_header(TRANSFORMER, _(
    "A small Transformer encoder–decoder (Vaswani et al., 2017: 2 encoder and 2 decoder layers, 4 heads, "
    "width 64, sinusoidal positions), trained here on the same character-level date task as the seq2seq page, "
    "turns a free-form date into `YYYY-MM-DD`. Its attention happens in three places: inside the source, "
    "inside the target (masked, so a position sees only the past) and between a target query and the source."
))


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
text = linked_text(typed.text_input, _("Date to normalise (or anything)"), mechanisms["cross"].example["text"], key="tf_text",
                   max_chars=text_option.max_chars)
random_col.button(_("Random example"), on_click=_draw_random, icon=":material/casino:", key="tf_random",
                  help=_("Draws a generated date and outlines its true alignment on the cross-attention maps."))
truth_state = st.session_state.get("tf_truth")
truth = truth_state["spans"] if truth_state and truth_state["source"] == text else None

records = {kind: checked(_record, kind, text, None) for kind in KINDS}
cross = records["cross"]
st.markdown(_("**Output:** `{output}`").format(output=cross.meta["output"]))
for notice in cross.meta["notices"]:
    show_notice(notice)


# Links made before the views shared their pickers carried one layer and head per view
# (tf_cross_head=2): they open with the shown view's values in the shared pickers.
shown_kind = next((k for k, t in KINDS.items() if st.query_params.get("tf_view") in (k, t)), "encoder")
for part, count in zip(("layer", "head"), cross.weights.shape[:2]):
    old_values = {kind: st.query_params.pop(f"tf_{kind}_{part}") for kind in KINDS if f"tf_{kind}_{part}" in st.query_params}
    if shown_kind not in old_values or f"tf_{part}" in st.session_state or f"tf_{part}" in st.query_params:
        continue
    if old_values[shown_kind] in {str(i) for i in range(count)}:
        st.session_state[f"tf_{part}"] = int(old_values[shown_kind])
        st.query_params[f"tf_{part}"] = old_values[shown_kind]
    else:
        warn_refused(_(part.capitalize()), old_values[shown_kind], 0)


# The three formulas, typeset once here, outside the fragment below: one inside would be typeset
# again by the browser on every switch of the view (docs/PERFORMANCE.md, "The page"). A clause after ",\ " (the
# mask's definition) gets a row of its own, so that every row fits a phone's column.
st.latex(r"\begin{aligned}" + r" \\ ".join(
    mechanisms[kind].formula.replace("=", "&=", 1).replace(r",\ ", r", \\ &\quad ") for kind in KINDS
) + r"\end{aligned}")
symbol_legend(TRANSFORMER_LEGEND)


# Each section whose controls change only its own figures is a fragment (st.fragment): moving
# them reruns that section alone. The Link boxes read the browser's address, which Streamlit
# updates on a fragment's rerun too, so the boxes of the other sections stay right.
# The three views share their Layer and Head pickers and their charts' keys (the three kinds have
# the same layers and heads): a switch of the view updates the pickers and charts the browser has,
# rather than mounting new ones.
@st.fragment
def kinds_section(records: dict, truth) -> None:
    kind = view_switch(KINDS, key="tf_view")
    title = KINDS[kind]
    record = records[kind]
    layers, heads = record.weights.shape[:2]
    st.markdown(_(EXPLAIN[kind]))
    pick_layer, pick_head = st.columns(2)
    layer = index_in(bound(pick_layer.selectbox, _("Layer"), range(layers), key="tf_layer"), layers)
    head = index_in(bound(pick_head.selectbox, _("Head"), range(heads), key="tf_head"), heads)
    one = head_record(record, layer, head)
    fig = attention_map(one, title=_("{kind}: layer {layer}, head {head}").format(kind=_(title), layer=layer, head=head),
                        truth=truth if kind == "cross" else None, gettext=_)
    show_figure(fig, one, key="tf_map", name=f"transformer-{kind}-layer{layer}-head{head}", fit_phone=True)
    grid = head_grid(record, title=_("{kind}: every layer and head").format(kind=_(title)), gettext=_)
    show_figure(grid, record, key="tf_grid", name=f"transformer-{kind}-heads")


kinds_section(records, truth)

st.header(_("Decoding, one character at a time"))


@st.fragment
def decoding_section(records: dict) -> None:
    output_labels = records["cross"].query_labels
    position = bound(st.slider, _("Decoding step t"), 0, len(output_labels) - 1, 0, key="tf_position",
                     help=_("Greedy decoding writes one output character per step."))
    st.markdown(_(
        "While writing output character **t = {t}** (`{character}`), every head of the decoder looks back over what "
        "it has read so far (`<s>` and the {t} characters already written) and, through cross-attention, over the "
        "input. Later positions do not exist yet: the mask gives them exactly 0."
    ).format(t=position, character=escape_markdown(output_labels[position])))
    # Both maps in one figure (one redraw per step, not two), each panel with its own Export menu.
    panels = []
    titles = {"decoder": _("Step {t}: decoder masked self-attention over the output so far"),
              "cross": _("Step {t}: cross-attention over the input")}
    menus = {"decoder": _("Export decoder"), "cross": _("Export cross-attention")}
    for kind in ("decoder", "cross"):
        step_record = decoding_step_record(records[kind], position)
        step_fig = decoding_step_figure(step_record, title=titles[kind].format(t=position), gettext=_)
        panels.append((step_fig, step_record, f"tf_step_{kind}", f"transformer-{kind}-step{position}", menus[kind]))
    show_panels(side_by_side([p[0] for p in panels], share_y=True, gap=0.06), panels, chart_key="tf_step_chart")


decoding_section(records)

st.header(_("Beside Bahdanau's RNN attention"))
best_layer, best_head = best_cross_head()
measured = measured_quality()
st.markdown(
    _("The same input under Bahdanau's additive attention (seq2seq page) and under the Transformer's best-aligned "
      "cross-attention head (layer {layer}, head {head}, picked on validation dates).").format(
        layer=best_layer, head=best_head)
    + (" " + _("On the 1,000 held-out dates, {share} of this head's output digits have their attention argmax inside "
               "the true span.").format(share=f"{measured['best_head_alignment']:.1%}") if measured else "")
)
left, right = st.columns(2, gap="medium")
with left:
    rnn = checked(_bahdanau, text)
    st.markdown(_("**Bahdanau output:** `{output}`").format(output=rnn.meta["output"]))
    show_figure(alignment_heatmap(rnn, truth=truth, title=_("Bahdanau (RNN): α over the input"), height=380,
                                  gettext=_), rnn,
                key="tf_bahdanau", name="bahdanau", fit_phone=True)
with right:
    best = head_record(cross, best_layer, best_head)
    st.markdown(_("**Transformer output:** `{output}`").format(output=cross.meta["output"]))
    best_fig = attention_map(best, truth=truth, height=380, gettext=_,
                             title=_("Transformer: layer {layer}, head {head}").format(layer=best_layer, head=best_head))
    show_figure(best_fig, best, key="tf_best_head", name=f"transformer-cross-layer{best_layer}-head{best_head}", fit_phone=True)
rows = head_table_rows()
if rows:
    st.markdown(_(
        "**The heads split the work.** Measured on the 1,000 held-out dates: the share of output digits whose "
        "argmax falls inside the true span, per head and per field. The month's first digit is where heads differ "
        "most: many look at the separator after the month (`/`, `-`, `.`, `月`), which tells a one-digit month "
        "from a two-digit one — outside the span, so it counts as a miss."
    ))
    # The table's columns as models/encdec/quality.py names them, shown translated.
    columns = (N_("layer"), N_("head"), N_("all digits"), N_("year digits"), N_("month digits"), N_("day digits"))
    st.dataframe([{_(column): value.replace("(best)", _("(best)")) for column, value in row.items()} for row in rows],
                 hide_index=True, column_order=[_(column) for column in columns if column in rows[0]])

st.header(_("Encoder rollout"))
st.markdown(_(
    "Attention rollout (Abnar & Zuidema, 2020) follows the encoder's attention through both layers, with the "
    "residual connection counted as an identity (Ã = ½A + ½I, rows renormalised) and each layer's heads fused "
    "first: row i says how much of input character i's top-layer state traces back to each input character, "
    "**if** attention alone mixed information linearly. It looks at neither the values, the feed-forward "
    "networks nor the layer norms, so it is a hypothesis about where information goes, not a measurement of "
    "what the model uses. Flow replaces the product by a maximum flow through the same graph."
))


@st.fragment
def rollout_section(text: str) -> None:
    rollout_entry = get_mechanism("transformer-rollout")
    method_col, fusion_col = st.columns(2)
    with method_col:
        method = option_radio(rollout_entry.option("method"), key="tf_rollout_method", horizontal=True)
    with fusion_col:
        fusion = option_radio(rollout_entry.option("fusion"), key="tf_rollout_fusion", horizontal=True)
    rolled = checked(_rollout, text, method, fusion)
    show_figure(rollout_figure(rolled, gettext=_, title=_("Encoder {method}, heads fused by {fusion}").format(
        method=_(method), fusion=_(fusion))), rolled,
                key="tf_rollout", name=f"transformer-encoder-{method}-{fusion}", fit_phone=True)


rollout_section(text)

st.header(_("Watch it learn"))
st.markdown(_("The same input under snapshots taken during training: step 0 is the untrained (random) model."))


@st.fragment
def snapshot_section(text: str) -> None:
    steps = snapshot_steps()
    step_col, kind_col = st.columns([3, 2], vertical_alignment="bottom")
    step = bound(step_col.select_slider, _("Training step"), steps, value=steps[-1], key="tf_step")
    shown_kind = bound(kind_col.radio, _("Attention"), list(KINDS), format_func=lambda kind: _(KINDS[kind]),
                       key="tf_snapshot_kind", horizontal=True)
    snap = checked(_record, shown_kind, text, step)
    st.markdown(_("**Output at step {step}:** `{output}`").format(step=step, output=snap.meta["output"]))
    show_figure(head_grid(snap, gettext=_, title=_("{kind} at training step {step}").format(
        kind=_(KINDS[shown_kind]), step=step)), snap,
                key="tf_snapshot", name=f"transformer-{shown_kind}-step{step}")


snapshot_section(text)

translation_section()  # where the operator set a model root: the user's translation folder (ui/translation.py)
