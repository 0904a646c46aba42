"""Section 1 of the "Inside a language model" page: generate, and watch the model read.

The model writes up to N tokens after the prompt (models/lm/generate.py, one record "lm-generate":
the causal maps over prompt + written tokens, the chosen token's probability and the top
alternatives at each step). A step slider picks the written token t; the page shows which earlier
tokens each head looked at to write it (the row of the query just before it; viz/lm_inside.py), the
head view and model view of the causal maps, and the probabilities.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from models.lm.generate import generation_record
from models.record import AttentionRecord
from models.registry import get_mechanism
from models.transformer.stats import matrix_record, model_view_record
from ui.i18n import translator
from ui.inside_lm import cached_runner, mechanism_heading
from ui.links import bound
from ui.markdown import escape_markdown
from ui.widgets import checked, index_in, option_number, option_slider, show_figure, show_notice
from viz.lm_inside import chosen_probabilities, generation_step
from viz.transformer import head_heatmap, model_view

GENERATE = get_mechanism("lm-generate")
# The page writes at most 64 tokens and opens on 12 (the server takes up to 256 from the CLI).
MAX_NEW = GENERATE.option("max_new").with_(high=64, default=12)
TEMPERATURE, TOP_K, SEED = (GENERATE.option(name) for name in ("temperature", "top_k", "seed"))
ALL_LAYERS_ROWS = 48  # the step view shows every layer's heads up to this many rows, else the chosen layer's


@st.cache_resource(show_spinner=False, max_entries=2)  # shared, never mutated
def cached_generation(model_dir: str, prompt: str, max_new: int, temperature: float, top_k: int,
                      seed: int) -> AttentionRecord:
    """Returns the "lm-generate" record of one generation (two kept per process)."""
    return generation_record(cached_runner(model_dir), prompt, max_new=max_new, temperature=temperature,
                             top_k=top_k, seed=seed)


def step_record(record: AttentionRecord, step: int, layers: list[int]) -> AttentionRecord:
    """Returns the record the step view draws: weights [L' × H, q + 1], every chosen layer's heads' row
    of the query q = n_prompt − 2 + step (1-based step), over the keys 0..q."""
    n_prompt = int(record.meta["n_prompt"])
    query = n_prompt - 2 + step
    heads = record.weights.shape[1]
    rows = record.weights[layers][:, :, query, : query + 1].reshape(len(layers) * heads, query + 1)
    names = [f"L{layer} H{head}" for layer in layers for head in range(heads)]
    return AttentionRecord(record.mechanism, rows, ("head", "key"), names, record.key_labels[: query + 1],
                           meta={**dict(record.meta), "step": step, "query": query, "layers": layers})


def probability_record(record: AttentionRecord) -> AttentionRecord:
    """Returns the record the probability chart draws: top_probs [step, rank], chosen_prob beside it."""
    n_prompt = int(record.meta["n_prompt"])
    top_probs = np.asarray(record.extras["top_probs"], dtype=np.float32)
    written = record.query_labels[n_prompt: n_prompt + len(top_probs)]
    return AttentionRecord(record.mechanism, top_probs, ("step", "rank"), written,
                           [f"top {r + 1}" for r in range(top_probs.shape[1])], meta=dict(record.meta),
                           extras={"chosen_prob": record.extras["chosen_prob"], "top_ids": record.extras["top_ids"],
                                   "top_tokens": record.extras["top_tokens"]})


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


def generate_section(model_dir: str, prompt: str) -> None:
    """Shows section 1: the controls, then the step views of one generation."""
    _ = translator()
    mechanism_heading(GENERATE)
    values = settings()
    with st.spinner(_("Writing {count} tokens…").format(count=values["max_new"])):
        record = checked(cached_generation, model_dir, prompt, **values)
    step_views(record)


@st.fragment
def step_views(record: AttentionRecord) -> None:
    """Shows the step slider and the views of the chosen step (a fragment: moving the slider reruns it alone)."""
    _ = translator()
    n_prompt, written = int(record.meta["n_prompt"]), int(record.meta["n_new"])
    layers, heads = record.weights.shape[:2]
    st.markdown(_("The model continued the prompt with: “{written}”").format(
        written=escape_markdown(str(record.meta.get("generated_text", "")))))
    show_notice(record.meta.get("notice"))
    step = 1
    if written > 1:
        step = index_in(bound(st.slider, _("Step"), 1, written, 1, key="inside_step",
                              help=_("the written token to look at: step t writes token t")) - 1, written) + 1
    pick_layer, pick_head = st.columns(2)
    layer = index_in(bound(pick_layer.selectbox, _("Layer"), range(layers), index=layers - 1, key="inside_layer"),
                     layers)
    head = index_in(bound(pick_head.selectbox, _("Head"), range(heads), index=0, key="inside_head"), heads)
    shown_layers = list(range(layers)) if layers * heads <= ALL_LAYERS_ROWS else [layer]
    st.subheader(_("Step {step} of {count}").format(step=step, count=written))
    st.caption(_("Each row is a head; each column a token before the one being written. The tokens the model "
                 "wrote itself are framed; hover a cell to see whether a token is the prompt's or the model's."))
    show_figure(generation_step(record, step - 1, layers=shown_layers, gettext=_),
                step_record(record, step, shown_layers), key="inside_step_view",
                name=f"lm-generate-step{step}")
    show_figure(chosen_probabilities(record, step=step - 1, gettext=_), probability_record(record),
                key="inside_probabilities", name="lm-generate-probabilities")
    st.subheader(_("Head view"))
    title = _("Layer {layer}, head {head}").format(layer=layer, head=head)
    show_figure(head_heatmap(record.weights[layer, head], record.query_labels, title=title),
                matrix_record(record, record.weights[layer, head], layer=layer, head=head),
                key="inside_head_view", name=f"lm-generate-layer{layer}-head{head}")
    st.subheader(_("Model view"))
    st.caption(_("Every layer (rows) and head (columns) over the prompt and the written tokens; every map is "
                 "exactly 0 above its diagonal (a token never reads the tokens after it). The prompt is tokens "
                 "0 to {last}.").format(last=n_prompt - 1))
    view = model_view_record(record)
    show_figure(model_view(view), view, key="inside_model_view", name="lm-generate-model-view")
