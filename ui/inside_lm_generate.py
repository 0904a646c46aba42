"""Section 1 of the "Inside a language model" page: generate, and watch the model read.

The model writes up to N tokens after the prompt (models/lm/generate.py, one record "lm-generate":
the causal maps over prompt + written tokens, the chosen token's probability and the top
alternatives at each step). A step slider picks the written token t; the page shows which earlier
tokens each head of a layer looked at to write it (the row of the query just before it), the head
view and model view of the causal maps, and the probabilities.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from models.lm.generate import MAX_TOP_K, generation_record
from models.options import Option
from models.record import AttentionRecord
from models.transformer.stats import matrix_record, model_view_record
from ui.i18n import translator
from ui.inside_lm import cached_runner
from ui.links import bound
from ui.markdown import escape_markdown
from ui.widgets import checked, index_in, option_number, option_slider, show_figure
from viz.figures import heatmap, weight_bars
from viz.transformer import head_heatmap, model_view

MAX_NEW = Option("max_new", "int", default=12, low=1, high=64, step=1, help="tokens to write after the prompt")
TEMPERATURE = Option("temperature", "float", default=0.0, low=0.0, high=2.0, step=0.05,
                     help="0 = greedy (always the most probable token); higher = more varied")
TOP_K = Option("top_k", "int", default=0, low=0, high=MAX_TOP_K, step=1,
               help="sample only among the k most probable tokens (0 = all)")
SEED = Option("seed", "int", default=0, low=0, high=2**31 - 1, step=1, help="seed of the sampling")
WRITTEN_MARK = "▸"  # before a token the model wrote, in the figures' labels


@st.cache_resource(show_spinner=False, max_entries=2)  # shared, never mutated
def cached_generation(model_dir: str, prompt: str, max_new: int, temperature: float, top_k: int,
                      seed: int) -> AttentionRecord:
    """Returns the "lm-generate" record of one generation (two kept per process)."""
    return generation_record(cached_runner(model_dir), prompt, max_new=max_new, temperature=temperature,
                             top_k=top_k, seed=seed)


def marked_labels(labels: tuple[str, ...], n_prompt: int) -> list[str]:
    """Returns the token labels with the written ones (from n_prompt on) marked by WRITTEN_MARK."""
    return [label if i < n_prompt else f"{WRITTEN_MARK}{label}" for i, label in enumerate(labels)]


def token_text(tokenizer: Any, token_id: int) -> str:
    """Returns how a token id reads (its decoded text, spaces and newlines made visible)."""
    text = tokenizer.decode([int(token_id)])
    return text.replace("\n", "\\n").replace(" ", "␣") if text.strip() == "" or text != text.strip() else text


def step_rows(record: AttentionRecord, layer: int, step: int) -> tuple[np.ndarray, int]:
    """Returns (weights [H, q + 1], q): every head's attention of layer `layer` from query q, the token
    the model read to write written token `step` (1-based), over the keys 0..q."""
    n_prompt = int(record.extras["n_prompt"])
    query = n_prompt - 2 + step
    return record.weights[layer, :, query, : query + 1], query


def settings() -> dict[str, Any]:
    """Shows the generation controls; returns their values, checked on the server."""
    _ = translator()
    cols = st.columns(4)
    with cols[0]:
        max_new = option_slider(MAX_NEW, key="inside_n", label=_("Tokens to write (N)"))
    with cols[1]:
        temperature = option_slider(TEMPERATURE, key="inside_temperature", label=_("Temperature (0 = greedy)"))
    with cols[2]:
        top_k = option_slider(TOP_K, key="inside_top_k", label=_("Top-k (0 = all)"))
    with cols[3]:
        seed = option_number(SEED, key="inside_seed", label=_("Seed"))
    return {"max_new": max_new, "temperature": temperature, "top_k": top_k, "seed": seed}


def generate_section(model_dir: str, prompt: str, tokenizer: Any) -> None:
    """Shows section 1: the controls, then the step views of one generation."""
    _ = translator()
    values = settings()
    with st.spinner(_("Writing {count} tokens…").format(count=values["max_new"])):
        record = checked(cached_generation, model_dir, prompt, **values)
    step_views(record, tokenizer)


@st.fragment
def step_views(record: AttentionRecord, tokenizer: Any) -> None:
    """Shows the step slider and the views of the chosen step (a fragment: moving the slider reruns it alone)."""
    _ = translator()
    n_prompt = int(record.extras["n_prompt"])
    chosen = np.asarray(record.extras["chosen_prob"], dtype=np.float32)
    written = len(chosen)
    labels = marked_labels(record.query_labels, n_prompt)
    layers, heads = record.weights.shape[:2]
    st.markdown(_("The model continued the prompt with: “{written}”").format(
        written=escape_markdown(str(record.meta.get("generated_text", "")))))
    if record.meta.get("notice"):
        st.warning(escape_markdown(str(record.meta["notice"])), icon=":material/info:")
    if written > 1:
        step = index_in(bound(st.slider, _("Step"), 1, written, 1, key="inside_step",
                              help=_("the written token to look at: step t writes token t")) - 1, written) + 1
    else:
        step = 1
    pick_layer, pick_head = st.columns(2)
    layer = index_in(bound(pick_layer.selectbox, _("Layer"), range(layers), index=layers - 1, key="inside_layer"),
                     layers)
    head = index_in(bound(pick_head.selectbox, _("Head"), range(heads), index=0, key="inside_head"), heads)
    rows, query = step_rows(record, layer, step)
    target = labels[query + 1]
    st.subheader(_("Step {step} of {count}: what the heads read to write {token}").format(
        step=step, count=written, token=target))
    st.caption(_("Each row is a head of layer {layer}; each column an earlier token. Tokens the model wrote "
                 "itself are marked ▸; the dashed line separates them from the prompt.").format(layer=layer))
    row_labels = [_("head {head}").format(head=h) for h in range(heads)]
    step_fig = heatmap(rows, row_labels, labels[: query + 1],
                       title=_("Layer {layer}, query {token} → written {target}").format(
                           layer=layer, token=labels[query], target=target),
                       query_title="", key_title=_("earlier token"))
    if query + 1 > n_prompt:
        step_fig.add_vline(x=n_prompt - 0.5, line_dash="dash", line_color="#555")
    step_record = AttentionRecord(record.mechanism, rows, ("head", "key"), row_labels, labels[: query + 1],
                                  meta={**dict(record.meta), "layer": layer, "step": step, "query": query})
    show_figure(step_fig, step_record, key="inside_step_view", name=f"lm-generate-step{step}-layer{layer}")

    probability_views(record, tokenizer, step, labels)

    st.subheader(_("Head view"))
    title = _("Layer {layer}, head {head}").format(layer=layer, head=head)
    show_figure(head_heatmap(record.weights[layer, head], labels, title=title),
                matrix_record(record, record.weights[layer, head], layer=layer, head=head),
                key="inside_head_view", name=f"lm-generate-layer{layer}-head{head}")
    st.subheader(_("Model view"))
    st.caption(_("Every layer (rows) and head (columns) over the prompt and the written tokens; every map is "
                 "exactly 0 above its diagonal (a token never reads the tokens after it)."))
    view = model_view_record(_relabelled(record, labels))
    show_figure(model_view(view), view, key="inside_model_view", name="lm-generate-model-view")


def _relabelled(record: AttentionRecord, labels: list[str]) -> AttentionRecord:
    return AttentionRecord(record.mechanism, record.weights, record.axes, labels, labels, dict(record.meta),
                           dict(record.extras))


def probability_views(record: AttentionRecord, tokenizer: Any, step: int, labels: list[str]) -> None:
    """Shows the chosen token's probability at every step, and the top alternatives at step `step`."""
    _ = translator()
    n_prompt = int(record.extras["n_prompt"])
    chosen = np.asarray(record.extras["chosen_prob"], dtype=np.float32)
    top_ids = np.asarray(record.extras["top_ids"])[step - 1]
    top_probs = np.asarray(record.extras["top_probs"], dtype=np.float32)[step - 1]
    written_labels = labels[n_prompt:]
    alternatives = [token_text(tokenizer, i) for i in top_ids]
    chosen_id = int(np.asarray(record.extras["ids"])[n_prompt + step - 1])
    left, right = st.columns(2)
    with left:
        fig = weight_bars(chosen, written_labels, title=_("Probability of each written token"),
                          value_name=_("p(chosen)"), highlight=[step - 1])
        rec = AttentionRecord(record.mechanism, chosen[None], ("step", "token"), (_("p(chosen)"),), written_labels,
                              meta={"model": record.meta.get("model")})
        show_figure(fig, rec, key="inside_chosen_prob", name="lm-generate-chosen-probability")
    with right:
        highlight = [i for i, token_id in enumerate(top_ids) if int(token_id) == chosen_id]
        fig = weight_bars(top_probs, alternatives, title=_("Step {step}: the top {k} next tokens").format(
            step=step, k=len(top_ids)), value_name=_("probability"), highlight=highlight)
        rec = AttentionRecord(record.mechanism, top_probs[None], ("step", "token"), (written_labels[step - 1],),
                              alternatives, meta={"model": record.meta.get("model"), "step": step})
        show_figure(fig, rec, key="inside_top_k_view", name=f"lm-generate-step{step}-top")
        if not highlight:
            st.caption(_("The token written at this step was sampled from outside the top {k}.").format(
                k=len(top_ids)))

