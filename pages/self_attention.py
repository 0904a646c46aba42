"""Self-attention: every layer and head of a pretrained transformer (MiniLM) on the user's text."""

import functools

import streamlit as st

from models.compare import difference_record
from models.heads.rollout import MAX_FLOW_TOKENS
from models.heads.statistics import (
    PATTERN_STATISTICS,
    STATISTICS,
    combine_heads,
    head_statistic,
    matrix_record,
    model_view_record,
    special_sinks,
    statistic_record,
)
from models.registry import SELF_ATTENTION, get_mechanism, mechanisms_on_page
from models.transformer.neuron import neuron_parts
from models.transformer.sentence_pairs import pair_block_shares
from ui.attribution_compare import compare_with_attribution
from ui.legend import ROLLOUT_LEGEND, SELF_ATTENTION_LEGEND, symbol_legend
from ui.links import bound, linked_text
from ui.model_folder import BERT_FOLDER, model_folder
from ui.neuron import neuron_section
from ui.router import start_page
from ui.story import page_header
from ui.transformer import (
    cached_record,
    cached_rollout,
    english_model_notice,
    open_clicked_head,
    opening_head,
    warmed_runner,
)
from ui.widgets import (
    checked,
    escape_markdown,
    index_in,
    index_or_none,
    option_radio,
    show_figure,
    show_notice,
    view_switch,
)
from viz.compare import difference_heatmap
from viz.i18n_text import N_
from viz.transformer import (
    head_heatmap,
    model_view,
    pair_blocks_figure,
    rollout_heatmap,
    segment_title,
    statistic_heatmap,
)

_ = start_page()

DEFAULT_TEXT = "The tokenizer splits unfamiliar words like embeddings into pieces, but the cat sat on the mat."
# The views: id (the URL's value) and name, shown translated (ui.widgets.view_switch).
VIEWS = {"head": N_("Head view"), "model": N_("Model view"), "stats": N_("Head statistics"), "pair": N_("Sentence pair"),
         "flow": N_("Rollout and flow"), "compare": N_("Compare two texts")}
DEFAULT_TEXT_B = "The tokenizer splits rare words like transformers into pieces, but the dog sat on the mat."
ROLLOUT = get_mechanism("transformer-rollout")

page_header(SELF_ATTENTION, title=_("Self-attention of a pretrained transformer"))
english_model_notice()
mechanism = mechanisms_on_page(SELF_ATTENTION.file)[0]
st.markdown(_(
    "Type a sentence and see the real attention probabilities of **every layer and head** of "
    "all-MiniLM-L6-v2 (6 layers × 12 heads), computed here in JAX. Each row is a query token; "
    "its weights over the key tokens sum to 1. This is **self-attention**: queries, keys and values all "
    "come from the same tokens (Q = K = V in the survey's words, each through its own projection)."
))
st.latex(mechanism.formula)
symbol_legend(SELF_ATTENTION_LEGEND)

text_col, pair_col = st.columns([3, 2])
text = linked_text(text_col.text_area, _("Text"), DEFAULT_TEXT, key="sa_text", height=100,
                   max_chars=mechanism.option("text").max_chars)
text_pair = linked_text(
    pair_col.text_area, _("Second sentence (optional)"), "", key="sa_pair", height=100,
    max_chars=mechanism.option("text_pair").max_chars,
    help=_("With a second sentence the input is [CLS] A [SEP] B [SEP], and the Sentence pair view shows the A/B blocks."),
)
model_dir = model_folder(BERT_FOLDER, key="sa_model_dir")

with st.spinner(_("Loading the model and compiling its forward pass (once)…")):
    runner = checked(warmed_runner, model_dir)
    # The head the page opens on: measured on the default sentence, not picked by eye.
    open_layer, open_head, open_score = checked(opening_head, model_dir, DEFAULT_TEXT)

if not text.strip():
    st.info(_("Type some text above to see its attention."), icon=":material/edit:")
    st.stop()

# The views are a fragment (st.fragment): layer, head, merge and every view's control rerun them alone,
# not the text boxes and the model above. The Link boxes read the browser's address (ui/links.py).
@st.fragment
def views(runner, model_dir: str, text: str, text_pair: str) -> None:
    config = runner.config
    pick_layer, pick_head, pick_merge = st.columns([1, 1, 2], vertical_alignment="bottom")
    for key, count in (("sa_layer", config.num_hidden_layers), ("sa_head", config.num_attention_heads)):
        if key in st.session_state and index_or_none(st.session_state[key], count) is None:
            del st.session_state[key]  # picked for another model folder: the opening head takes its place
    layer = index_in(bound(pick_layer.selectbox, _("Layer"), range(config.num_hidden_layers), index=open_layer,
                           key="sa_layer"), config.num_hidden_layers)
    head = index_in(bound(pick_head.selectbox, _("Head"), range(config.num_attention_heads), index=open_head,
                          key="sa_head"), config.num_attention_heads)
    merge = bound(
        pick_merge.toggle, _("Merge word pieces into words"), key="sa_merge",
        help=_("Pieces such as play ##ing become one word: its row is the mean of the pieces' rows, "
               "its column the sum of their columns, so rows still sum to 1."),
    )
    st.caption(_("The page opens on layer {layer}, head {head}: of all 72 heads, the one with the highest "
                 "previous-token score on the default sentence ({score}; Σ A·P / Σ A with P at k = q − 1, [CLS] and "
                 "[SEP] left out). It draws one clear diagonal: each token looks at the token before it.").format(
        layer=open_layer, head=open_head, score=f"{open_score:.2f}"))

    with st.spinner(_("Running the encoder…")):
        record = checked(cached_record, model_dir, text, text_pair.strip(), merge)

    labels = record.query_labels
    is_pair = 1 in record.meta.get("segments", [])
    count = (_("{count} words") if merge else _("{count} tokens")).format(count=len(labels))
    st.caption(
        f"{escape_markdown(str(record.meta.get('model')))} · {count}"
        + (" · " + _("pair, {segments}").format(segments=segment_title(record.meta["segments"], _)) if is_pair else "")
    )
    show_notice(record.meta.get("notice"), icon=":material/content_cut:")

    chosen = view_switch(VIEWS, key="sa_view")

    if chosen == "head":
        shows = {"one": N_("The layer and head above"), "mean": N_("Mean of selected heads"),
                 "max": N_("Max of selected heads")}
        combine = bound(st.radio, _("Show"), ("one", "mean", "max"), key="sa_combine", horizontal=True,
                        format_func=lambda choice: _(shows[choice]))
        if combine == "one":
            matrix = record.weights[layer, head]
            title = _("Layer {layer}, head {head}").format(layer=layer, head=head)
            name = f"self-attention-layer{layer}-head{head}"
            shown = matrix_record(record, matrix, layer=layer, head=head)
        else:
            layer_col, head_col = st.columns(2)
            layers = bound(layer_col.multiselect, _("Layers"), range(config.num_hidden_layers), default=[layer],
                           key="sa_layers")
            heads = bound(
                head_col.multiselect, _("Heads"), range(config.num_attention_heads),
                default=list(range(config.num_attention_heads)), key="sa_heads",
            )
            if not layers or not heads:
                st.info(_("Select at least one layer and one head."))
                st.stop()
            pairs = [(index_in(a, config.num_hidden_layers), index_in(b, config.num_attention_heads))
                     for a in layers for b in heads]
            matrix = combine_heads(record.weights, pairs, combine)
            what = _("Mean of {count} heads (layers {layers})") if combine == "mean" else \
                _("Max of {count} heads (layers {layers})")
            title = what.format(count=len(pairs), layers=", ".join(map(str, layers)))
            name = f"self-attention-{combine}-of-{len(pairs)}-heads"
            shown = matrix_record(record, matrix, combine=combine, heads=[list(p) for p in pairs])
        show_figure(head_heatmap(matrix, labels, title=title, gettext=_), shown, key="sa_head", name=name)
        if not merge and not text_pair.strip():  # attributions read one text's word pieces
            compare_with_attribution("encoder", text, matrix, labels, labels, alpha_title=title, model_dir=model_dir,
                                     key="sa")

    if chosen == "model":
        view = model_view_record(record)
        show_figure(model_view(view, gettext=_), view, key="sa_model", name="self-attention-model-view")
        st.markdown(_("**Enlarged: layer {layer}, head {head}** (pick another with the Layer and Head boxes above)")
                    .format(layer=layer, head=head))
        big = head_heatmap(record.weights[layer, head], labels, gettext=_,
                           title=_("Layer {layer}, head {head}").format(layer=layer, head=head))
        show_figure(big, matrix_record(record, record.weights[layer, head], layer=layer, head=head),
                    key="sa_enlarged", name=f"self-attention-layer{layer}-head{head}")

    if chosen == "stats":
        statistic = bound(st.selectbox, _("Statistic"), STATISTICS, format_func=lambda s: _(s.label),
                          key="sa_statistic")
        sinks, all_heads = special_sinks(record)
        st.caption(_("{description}. Click a cell to open that head in the Head view. Attention sinks: **{sinks} of "
                     "{heads}** heads put more than half of their attention on [CLS] or [SEP].").format(
            description=_(statistic.description), sinks=sinks, heads=all_heads))
        leave_out = statistic.id in PATTERN_STATISTICS and bound(
            st.toggle, _("Leave [CLS] and [SEP] out of the score"), key="sa_leave_out",
            help=_("Many heads park their attention on [CLS] and [SEP]; with this on, the score is "
                   "computed over the other keys only (both sums of Σ A·P / Σ A)."),
        )
        values = head_statistic(record.weights, labels, statistic.id, exclude_special=bool(leave_out))
        stats_fig = statistic_heatmap(
            values, statistic=_(statistic.label), selected=(layer, head),
            zmax=None if statistic.id == "entropy" else 1.0, gettext=_,
        )
        show_figure(
            stats_fig, statistic_record(record, values, statistic.id), key="sa_stats",
            name=f"self-attention-{statistic.id}", selection_mode="points",
            on_select=lambda: open_clicked_head(
                "sa_stats_chart", "sa_layer", "sa_head", {"sa_view": "head", "sa_combine": "one"}
            ),
        )

    if chosen == "pair":
        if not is_pair:
            st.info(_("Type a second sentence above to see how sentence A and sentence B attend to each other."))
        else:
            segments = record.meta["segments"]
            shares = {k: float(v[layer, head]) for k, v in pair_block_shares(record.weights, segments).items()}
            pair_fig = pair_blocks_figure(
                record.weights[layer, head], labels, segments, shares=shares, gettext=_,
                title=_("Layer {layer}, head {head}: A→A, A→B, B→A, B→B").format(layer=layer, head=head),
            )
            show_figure(pair_fig, matrix_record(record, record.weights[layer, head], layer=layer, head=head),
                        key="sa_pair_blocks", chart_key="sa_pair_chart",
                        name=f"self-attention-pair-layer{layer}-head{head}")

    if chosen == "flow":
        st.markdown(_(
            "**Rollout** follows attention through all layers: each layer's heads are fused, the residual "
            "connection is counted as half of the mixing (½·A + ½·I, rows renormalised), and the layers are "
            "multiplied from the first up. **Flow** treats the same layers as a graph and asks how much can "
            "flow from each input token to each top-layer token (max-flow). Row *i* estimates how much of token "
            "*i*'s top-layer representation traces back to each input token. Both ignore the values, the MLPs "
            "and the layer norms, so they are not a measure of what the model's output depends on "
            "(Abnar & Zuidema, 2020)."
        ))
        st.latex(ROLLOUT.formula)
        symbol_legend(ROLLOUT_LEGEND)
        method_col, fusion_col = st.columns(2)
        with method_col:
            method = option_radio(ROLLOUT.option("method"), key="sa_rollout_method", horizontal=True,
                                  labels={"rollout": _("Rollout"),
                                          "flow": _("Flow (up to {count} tokens)").format(count=MAX_FLOW_TOKENS)})
        with fusion_col:
            fusion = option_radio(ROLLOUT.option("fusion"), key="sa_rollout_fusion", horizontal=True)
        with st.spinner(_("Computing the maximum flow through every layer…") if method == "flow" else _("Rolling out…")):
            rolled = checked(cached_rollout, model_dir, text, text_pair.strip(), merge, method, fusion)
        title = _("{method} over {layers} layers, heads fused by {fusion}").format(
            method=_(method).capitalize(), layers=rolled.meta["layers"], fusion=_(fusion))
        show_figure(rollout_heatmap(rolled.weights, rolled.query_labels, title=title, gettext=_), rolled,
                    key="sa_rollout", name=f"self-attention-{method}-{fusion}")

    if chosen == "compare":
        st.markdown(_(
            "The same layer and head (**layer {layer}, head {head}**, from the boxes above) on the text above "
            "(A) and on a second text (B). The difference α_B − α_A is drawn over the tokens both texts share, "
            "in order; a token only one text has gets a blank row and column and is marked in its text's colour."
        ).format(layer=layer, head=head))
        text_b = linked_text(st.text_area, _("Text B"), DEFAULT_TEXT_B, key="sa_text_b", height=80,
                             max_chars=mechanism.option("text").max_chars)
        if not text_b.strip():
            st.info(_("Type a text B to compare."))
            st.stop()
        with st.spinner(_("Running the encoder on text B…")):
            record_b = checked(cached_record, model_dir, text_b, "", merge)
        map_a, map_b = record.weights[layer, head], record_b.weights[layer, head]
        diff = difference_record(map_a, map_b, (labels, labels), (record_b.query_labels,) * 2,
                                 mechanism=record.mechanism, meta={"layer": layer, "head": head,
                                                                  "model": record.meta.get("model")})
        left, right = st.columns(2)
        with left:
            show_figure(head_heatmap(map_a, labels, gettext=_,
                                     title=_("A: layer {layer}, head {head}").format(layer=layer, head=head)),
                        matrix_record(record, map_a, layer=layer, head=head), key="sa_cmp_a", name="self-attention-A")
        with right:
            show_figure(head_heatmap(map_b, record_b.query_labels, gettext=_,
                                     title=_("B: layer {layer}, head {head}").format(layer=layer, head=head)),
                        matrix_record(record_b, map_b, layer=layer, head=head), key="sa_cmp_b", name="self-attention-B")
        st.caption(_("{count} shared tokens; largest change {change}. Red: B attends more; blue: A attends more.")
                   .format(count=diff.meta["shared_query_tokens"], change=f"{diff.meta['max_abs_difference']:.3f}"))
        diff_title = _("α_B − α_A, layer {layer}, head {head}").format(layer=layer, head=head)
        show_figure(difference_heatmap(diff, title=diff_title, gettext=_), diff,
                    key="sa_cmp_diff", name=f"self-attention-difference-layer{layer}-head{head}")


views(runner, model_dir, text, text_pair)


@st.cache_resource(show_spinner=False, max_entries=16)
def _neuron(model_dir: str, text: str, text_pair: str, layer: int, head: int, query: int):
    return neuron_parts(warmed_runner(model_dir), text, layer, head, query, text_pair=text_pair or None)


# Its own fragment: the neuron view's four pickers rerun only it.
@st.fragment
def neuron(model_dir: str, text: str, text_pair: str) -> None:
    st.header(_("Inside one head: the neuron view"))
    st.markdown(_("How one weight is made: the query vector q of one token and the key vector k of every token "
                  "(32 numbers each), their product q ⊙ k, its sum scaled by 1/√d_k (the score), and the softmax "
                  "of the scores over the keys: one row of the head view above."))
    tokens = cached_record(model_dir, text, text_pair, False).query_labels  # word pieces, as the model reads them
    config = warmed_runner(model_dir).config
    neuron_section(functools.partial(_neuron, model_dir, text, text_pair), tokens, config.num_hidden_layers,
                   config.num_attention_heads, "sa_neuron", default_query=min(1, len(tokens) - 1),
                   mechanism=mechanism.id, meta={"model": runner.name})


neuron(model_dir, text, text_pair.strip())
