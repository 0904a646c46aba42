"""Section 1 of the "Inside a language model" page: generate, and watch the model read.

The model writes up to N tokens after the prompt (models/lm/generate.py, one record "lm-generate":
the causal maps over prompt + written tokens, the chosen token's probability and the top
alternatives at each step). A step slider picks the written token t; the page shows which earlier
tokens each head looked at to write it (the row of the query just before it; viz/lm_inside.py), the
head view and model view of the causal maps, and the probabilities.

Moving "Tokens to write (N)" does not generate again. Token t depends only on the tokens before it
(greedy; or sampled with the seed folded with its position, models/lm/generate.py), so the first N
tokens of a longer generation are the generation of N tokens: the page writes the longest N once per
prompt and settings, in a background thread, and cuts every shorter N from it (first_tokens; the
tests hold the two equal). Until that generation is written, and for an N that would cut the
prompt, it generates N itself, as before.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from models.errors import LabError
from models.heads.statistics import matrix_record, model_view_record
from models.lm.generate import MAX_PROMPT_TOKENS, length_buckets
from models.lm.records import LMRunner
from models.record import AttentionRecord
from models.registry import get_mechanism
from ui.i18n import current_language, translator
from ui.inside_lm import cached_runner, mechanism_heading
from ui.links import bound
from ui.markdown import escape_markdown
from ui.widgets import checked, index_in, option_number, option_slider, show_figure, show_notice, view_switch
from viz.chart_style import for_the_page
from viz.i18n_text import N_
from viz.lm_inside import chosen_probabilities, generation_step
from viz.transformer import head_heatmap, model_view

GENERATE = get_mechanism("lm-generate")
# The page writes at most 64 tokens and opens on 12 (the server takes up to 256 from the CLI).
MAX_NEW = GENERATE.option("max_new").with_(high=64, default=12)
TEMPERATURE, TOP_K, SEED = (GENERATE.option(name) for name in ("temperature", "top_k", "seed"))
ALL_LAYERS_ROWS = 48  # the step view shows every layer's heads up to this many rows, else the chosen layer's
VIEWS = {"step": N_("Step by step"), "head": N_("Head view"), "model": N_("Model view")}


@st.cache_resource(show_spinner=False, max_entries=2)  # shared, never mutated
def cached_generation(model_dir: str, prompt: str, max_new: int, temperature: float, top_k: int,
                      seed: int) -> AttentionRecord:
    """Returns the "lm-generate" record of one generation (two kept per process), its options read by the registry."""
    return GENERATE.build({"text": prompt, "model_dir": model_dir or None, "max_new": max_new,
                           "temperature": temperature, "top_k": top_k, "seed": seed})


def longest_new(runner: LMRunner, prompt: str) -> int:
    """Returns the most tokens, up to the slider's top, that the page writes after the prompt without
    cutting it (0: the prompt is cut whatever N, or cannot be read)."""
    try:
        prompt_tokens = len(runner.encode(prompt).ids)
    except LabError:  # the direct generation says what is wrong, in one line
        return 0
    if prompt_tokens > MAX_PROMPT_TOKENS:
        return 0
    return max(0, min(MAX_NEW.high, length_buckets(runner.config)[-1] - prompt_tokens))


def first_tokens(record: AttentionRecord, count: int, decode: Callable[[list[int]], str]) -> AttentionRecord:
    """Returns the "lm-generate" record of the first `count` written tokens of a longer one's: equal to the
    record of generating `count` tokens (module docstring). decode: the tokenizer's ids → text."""
    n_prompt = int(record.meta["n_prompt"])
    if not 1 <= count <= int(record.meta["n_new"]):
        raise ValueError(f"{count} tokens asked of a generation of {record.meta['n_new']}")
    total = n_prompt + count
    ids = np.asarray(record.extras["ids"])[:total].copy()
    written = slice(0, count)
    extras = {**record.extras, "ids": ids,
              **{name: np.asarray(record.extras[name])[written].copy()
                 for name in ("chosen_prob", "top_ids", "top_probs", "top_tokens")}}
    meta = {**record.meta, "n_new": count, "generated_tokens": f"{n_prompt}-{total - 1}", "max_new": count,
            "generated_text": decode([int(i) for i in ids[n_prompt:]])}
    return AttentionRecord(record.mechanism, np.ascontiguousarray(record.weights[:, :, :total, :total]), record.axes,
                           record.query_labels[:total], record.key_labels[:total], meta=meta, extras=extras)


class LongestGenerations:
    """The longest generations of the last few prompts and settings, each written once by one background
    thread (a long generation of a large model takes seconds, which the page does not wait for)."""

    def __init__(self, keep: int = 2):
        self._keep = keep
        self._lock = threading.Lock()
        self._made: OrderedDict[Hashable, Future] = OrderedDict()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="longest generation")

    def ready(self, key: Hashable, make: Callable[[], AttentionRecord]) -> AttentionRecord | None:
        """Returns the record made for key; None while it is being written (the first call starts it) or
        if writing it failed (the page's own generation then shows the error)."""
        with self._lock:
            future = self._made.get(key)
            if future is None:
                future = self._made[key] = self._worker.submit(make)
                while len(self._made) > self._keep:  # one not started yet (a prompt typed past) never runs
                    self._made.popitem(last=False)[1].cancel()
            self._made.move_to_end(key)
        if not future.done() or future.cancelled() or future.exception() is not None:
            return None
        return future.result()

    def wait(self, timeout: float | None = None) -> None:
        """Returns once every generation asked for so far is written (the tests wait on it)."""
        with self._lock:
            pending = list(self._made.values())
        for future in pending:
            if not future.cancelled():
                future.exception(timeout)


@st.cache_resource(show_spinner=False)
def longest_generations() -> LongestGenerations:
    """Returns the process's one LongestGenerations."""
    return LongestGenerations()


def generation_from_longest(model_dir: str, prompt: str,
                            settings: dict[str, Any]) -> tuple[AttentionRecord, Hashable] | None:
    """Returns the record of `settings` cut from the longest generation of the prompt and the other
    settings, and that generation's key; None while it is being written, or where N would cut the prompt
    (the page then generates N itself)."""
    runner = cached_runner(model_dir)
    longest = longest_new(runner, prompt)
    if settings["max_new"] > longest:
        return None
    asked = {**settings, "max_new": longest}
    source = (model_dir, prompt, *sorted(asked.items()))
    made = longest_generations().ready(source, functools.partial(
        GENERATE.build, {"text": prompt, "model_dir": model_dir or None, **asked}))
    if made is None:
        return None
    decode = functools.partial(runner.lm.tokenizer.decode, skip_special_tokens=False)
    return first_tokens(made, settings["max_new"], decode), source


@st.cache_resource(show_spinner=False, max_entries=16)  # shared, never mutated (readied once, here)
def cached_step_figure(source: Hashable, step: int, layers: tuple[int, ...], language: str,
                       _record: AttentionRecord) -> go.Figure:
    """Returns the step view of `step` of a generation cut from the longest one, `source`: the same
    figure for every N from `step` on (it draws only the tokens before the one written at `step`), so a
    change of N does not build it again. language: the session's, which its texts are in."""
    return for_the_page(generation_step(_record, step - 1, layers=list(layers), gettext=translator()))


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
    """Shows section 1: the formula, the controls, then the step views of one generation."""
    mechanism_heading(GENERATE)  # outside the fragment below: a control never typesets LaTeX again
    generation(model_dir, prompt)


@st.fragment
def generation(model_dir: str, prompt: str) -> None:
    """Shows the controls and the views of their generation (a fragment: a control reruns it alone, not
    the page's text, the prompt box and the model's loading)."""
    _ = translator()
    values = settings()
    record, source = generation_from_longest(model_dir, prompt, values) or (None, None)
    if record is None:
        with st.spinner(_("Writing {count} tokens…").format(count=values["max_new"])):
            record = checked(cached_generation, model_dir, prompt, **values)
    step_views(record, source)


@st.fragment
def step_views(record: AttentionRecord, source: Hashable | None = None) -> None:
    """Shows what the model wrote and one view of it, picked above it: the chosen step with the
    probabilities, one head's map, or every map (a fragment: a view, step, layer or head reruns it alone).
    source: the key of the longest generation the record was cut from (None: generated as it is).

    One view at a time: every view changes with N, and the three drawn together cost the browser more
    than twice the round trip of a trivial app's slider (docs/PERFORMANCE.md)."""
    _ = translator()
    n_prompt, written = int(record.meta["n_prompt"]), int(record.meta["n_new"])
    layers, heads = record.weights.shape[:2]
    st.markdown(_("The model continued the prompt with: “{written}”").format(
        written=escape_markdown(str(record.meta.get("generated_text", "")))))
    show_notice(record.meta.get("notice"))
    view = view_switch(VIEWS, key="inside_view")
    if view == "model":
        st.caption(_("Every layer (rows) and head (columns) over the prompt and the written tokens; every map is "
                     "exactly 0 above its diagonal (a token never reads the tokens after it). The prompt is tokens "
                     "0 to {last}.").format(last=n_prompt - 1))
        whole = model_view_record(record)
        show_figure(model_view(whole, gettext=_), whole, key="inside_model_view", name="lm-generate-model-view")
        return
    pick_layer, pick_head = st.columns(2)  # the head view's head, and the step view's layer for a large model
    layer = index_in(bound(pick_layer.selectbox, _("Layer"), range(layers), index=layers - 1, key="inside_layer"),
                     layers)
    head = index_in(bound(pick_head.selectbox, _("Head"), range(heads), index=0, key="inside_head"), heads)
    if view == "head":
        title = _("Layer {layer}, head {head}").format(layer=layer, head=head)
        show_figure(head_heatmap(record.weights[layer, head], record.query_labels, title=title, gettext=_),
                    matrix_record(record, record.weights[layer, head], layer=layer, head=head),
                    key="inside_head_view", name=f"lm-generate-layer{layer}-head{head}")
        return
    step = 1
    if written > 1:
        step = index_in(bound(st.slider, _("Step"), 1, written, 1, key="inside_step",
                              help=_("the written token to look at: step t writes token t")) - 1, written) + 1
    shown_layers = list(range(layers)) if layers * heads <= ALL_LAYERS_ROWS else [layer]
    st.subheader(_("Step {step} of {count}").format(step=step, count=written))
    st.caption(_("Each row is a head; each column a token before the one being written. The tokens the model "
                 "wrote itself are framed; hover a cell to see whether a token is the prompt's or the model's."))
    figure = (generation_step(record, step - 1, layers=shown_layers, gettext=_) if source is None else
              cached_step_figure(source, step, tuple(shown_layers), current_language(), record))
    show_figure(figure, step_record(record, step, shown_layers), key="inside_step_view",
                name=f"lm-generate-step{step}")
    show_figure(chosen_probabilities(record, step=step - 1, gettext=_), probability_record(record),
                key="inside_probabilities", name="lm-generate-probabilities")
