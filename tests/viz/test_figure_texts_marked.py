"""Every text a figure builder writes of its own goes through its `gettext` (issue 53: English left in the
Chinese pages' figures). Each builder of the self-attention, Transformer, sentence-alignment, induction,
language-model, inside-a-language-model and corpus pages, and the CLI's default figure of each of their
mechanisms, is built from the registry's example inputs with a marking gettext that wraps every text it is
given in ⟦…⟧. Once the marked spans are taken out of a figure's texts (titles, axis titles and tick texts,
annotations, legend and colour-bar titles, trace names, categories, cell texts, hover templates and the hover
texts in customdata), no English word of 3+ letters may be left, other than the record's own tokens and labels
and a few symbols and proper names."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator

import numpy as np
import plotly.graph_objects as go
import pytest

from models.compare import difference_record
from models.encdec.records import decoding_step_record, encoder_rollout_record, head_record
from models.heads.statistics import STATISTICS, head_statistic, model_view_record
from models.induction.records import training_record as induction_training
from models.lm.quality import training_record as lm_training
from models.lm.sinks import sink_record, training_sinks
from models.record import AttentionRecord
from models.registry import get_mechanism
from models.transformer.sentence_pairs import pair_block_shares
from viz import corpus, encdec, induction, lm, lm_inside, lm_lens, transformer
from viz.figures import heatmap, record_figure

OPEN, CLOSE = "⟦", "⟧"
MARKED = re.compile(f"{OPEN}[^{OPEN}{CLOSE}]*{CLOSE}")
FIELD = re.compile(r"%\{[^}]*\}")  # plotly's %{x}, %{customdata[0]:.3f}
TAG = re.compile(r"<[^>]*>")
WORD = re.compile(r"[A-Za-z]{3,}")
# Symbols and names that stay as they are in every language.
ALLOWED = {"softmax", "MiniLM"}


def marking(text: str) -> str:
    """A gettext that marks what it translated."""
    return f"{OPEN}{text}{CLOSE}"


def _strings(value) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, np.ndarray) and value.dtype.kind in "OUS":
        for item in value.ravel():
            yield from _strings(item)


def figure_texts(fig: go.Figure) -> Iterator[tuple[str, str]]:
    """Yields (where, text) for every text the figure shows or hovers."""
    layout = fig.layout.to_plotly_json()
    title = layout.get("title") or {}
    yield "title", title.get("text") or ""
    for name, axis in layout.items():
        if re.fullmatch(r"[xy]axis\d*", name) and isinstance(axis, dict):
            yield f"{name}.title", (axis.get("title") or {}).get("text") or ""
            for text in _strings(axis.get("ticktext")):
                yield f"{name}.ticktext", text
    for i, note in enumerate(layout.get("annotations") or []):
        yield f"annotations[{i}]", note.get("text") or ""
    yield "legend.title", ((layout.get("legend") or {}).get("title") or {}).get("text") or ""
    for name, value in layout.items():
        if name.startswith("coloraxis") and isinstance(value, dict):
            yield f"{name}.colorbar", ((value.get("colorbar") or {}).get("title") or {}).get("text") or ""
    for i, trace in enumerate(fig.data):
        spec = trace.to_plotly_json()
        yield f"data[{i}].name", spec.get("name") or ""
        yield f"data[{i}].hovertemplate", "".join(_strings(spec.get("hovertemplate")))
        yield f"data[{i}].colorbar", ((spec.get("colorbar") or {}).get("title") or {}).get("text") or ""
        yield f"data[{i}].marker.colorbar", (((spec.get("marker") or {}).get("colorbar") or {}).get("title") or {}).get("text") or ""
        for field in ("x", "y", "text", "customdata"):
            for text in _strings(spec.get(field)):
                yield f"data[{i}].{field}", text


def record_words(*records: AttentionRecord) -> set[str]:
    """Returns the words of the records' labels and token texts: what a figure may show untranslated."""
    words = set()
    for record in records:
        texts = [*map(str, record.query_labels), *map(str, record.key_labels), record.mechanism]
        texts += [t for value in record.extras.values() for t in _strings(np.asarray(value))]
        for name in ("heads", "predictions", "answer", "position_token", "position_top_tokens", "model", "input",
                     "output", "writing", "first_token"):
            texts += list(_strings(record.meta.get(name)))
        for text in texts:
            words.update(WORD.findall(text))
    return words


def unmarked(fig: go.Figure, *records: AttentionRecord) -> list[str]:
    """Returns 'where: word in text' for every English word of the figure that did not come through gettext."""
    allowed = record_words(*records) | ALLOWED
    found = []
    for where, text in figure_texts(fig):
        plain = text
        while MARKED.search(plain):
            plain = MARKED.sub(" ", plain)
        plain = html.unescape(TAG.sub(" ", FIELD.sub(" ", plain)))
        for word in WORD.findall(plain):
            # A token cut short to fit a cell ("fol…" of "following") is the token's.
            if word not in allowed and not any(w.startswith(word) for w in allowed):
                found.append(f"{where}: {word!r} in {text[:120]!r}")
    return found


def test_the_check_finds_a_text_that_did_not_come_through_gettext():
    record = AttentionRecord("transformer", np.eye(2, dtype=np.float32), ("query", "key"), ("cat", "mat"),
                             ("cat", "mat"))
    assert unmarked(heatmap(record.weights, record.query_labels, record.key_labels, gettext=marking), record) == []
    english = heatmap(record.weights, record.query_labels, record.key_labels, key_title="key token", gettext=marking)
    assert [f.split(":")[0] for f in unmarked(english, record)] == ["xaxis.title", "xaxis.title",
                                                                   "data[0].hovertemplate", "data[0].hovertemplate"]
    assert unmarked(go.Figure(layout={"title": {"text": marking("{kind} every head").format(kind="x")}})) == []
    nested = marking("{score} score").format(score=marking("induction"))
    assert unmarked(go.Figure(layout={"title": {"text": nested}})) == []


def _build(mechanism_id: str, **changes) -> AttentionRecord:
    mechanism = get_mechanism(mechanism_id)
    return mechanism.build({**mechanism.example, **changes})


def _self_attention() -> Iterator[tuple[str, go.Figure, tuple]]:
    record = _build("transformer")
    labels = record.query_labels
    yield "head_heatmap", transformer.head_heatmap(record.weights[0, 0], labels, title="", gettext=marking), (record,)
    view = model_view_record(record)
    yield "model_view", transformer.model_view(view, gettext=marking), (view,)
    for statistic in STATISTICS:
        values = head_statistic(record.weights, labels, statistic.id)
        yield (f"statistic_heatmap {statistic.id}", transformer.statistic_heatmap(
            values, statistic=marking(statistic.label), selected=(0, 0), gettext=marking), (record,))
    pair = _build("transformer", text_pair="A dog lay on the rug.")
    segments = pair.meta["segments"]
    shares = {k: float(v[0, 0]) for k, v in pair_block_shares(pair.weights, segments).items()}
    yield ("pair_blocks_figure", transformer.pair_blocks_figure(pair.weights[0, 0], pair.query_labels, segments,
                                                                shares=shares, gettext=marking), (pair,))
    rolled = _build("transformer-rollout")
    yield "rollout_heatmap", transformer.rollout_heatmap(rolled.weights, rolled.query_labels, title="",
                                                         gettext=marking), (rolled,)
    other = _build("transformer", text="The dog sat on the rug.")
    diff = difference_record(record.weights[0, 0], other.weights[0, 0], (labels, labels), (other.query_labels,) * 2,
                             mechanism=record.mechanism)
    from viz.compare import difference_heatmap
    yield "difference_heatmap", difference_heatmap(diff, title="", gettext=marking), (diff, record, other)
    alignment = _build("sentence-alignment")
    yield "alignment_figure", transformer.alignment_figure(alignment, gettext=marking), (alignment,)


def _transformer_page() -> Iterator[tuple[str, go.Figure, tuple]]:
    for kind in ("encoder", "decoder", "cross"):
        record = _build(f"transformer-{kind}")
        one = head_record(record, 0, 0)
        yield f"attention_map {kind}", encdec.attention_map(one, gettext=marking), (one,)
        yield f"head_grid {kind}", encdec.head_grid(record, gettext=marking), (record,)
        if kind != "encoder":
            for position in (0, 3):
                step = decoding_step_record(record, position)
                # Its row labels ("layer 0 · head 1", English in the record) are the figure's to translate.
                yield (f"decoding_step_figure {kind} {position}", encdec.decoding_step_figure(step, gettext=marking),
                       (record,))
    rolled = encoder_rollout_record(get_mechanism("transformer-encoder"), "9 May 2018")
    yield "rollout_figure", encdec.rollout_figure(rolled, gettext=marking), (rolled,)


def _induction_page() -> Iterator[tuple[str, go.Figure, tuple]]:
    curves = induction_training()
    yield "induction training_curves", induction.training_curves(curves, gettext=marking), (curves,)
    record = _build("induction")
    yield "head_pattern", induction.head_pattern(record, 1, 0, gettext=marking), (record,)
    typed = _build("induction", text="k dog m sun p cat k dog m sun")
    yield "copy_view", induction.copy_view(typed, gettext=marking), (typed,)


def _language_model_pages() -> Iterator[tuple[str, go.Figure, tuple]]:
    curves = lm_training()
    yield "lm training_curves", lm.training_curves(curves, gettext=marking), (curves,)
    record = _build("lm")
    yield "lm head_heatmap", transformer.head_heatmap(record.weights[0, 0], record.query_labels, title="",
                                                      gettext=marking), (record,)
    view = model_view_record(record)
    yield "lm model_view", transformer.model_view(view, gettext=marking), (view,)
    generated = _build("lm-generate")
    yield "generation_step", lm_inside.generation_step(generated, 1, gettext=marking), (generated,)
    yield "chosen_probabilities", lm_inside.chosen_probabilities(generated, step=1, gettext=marking), (generated,)
    neuron = _build("lm-neuron")
    yield "neuron_figure", lm_inside.neuron_figure(neuron, key=0, gettext=marking), (neuron,)
    lens = _build("lm-logit-lens")
    yield "lens_grid", lm_lens.lens_grid(lens, gettext=marking), (lens,)
    yield "lens_position_bars", lm_lens.lens_position_bars(lens, gettext=marking), (lens,)
    chosen = _build("lm-knockout", heads="0.1,1.0")
    yield "knockout_bars", lm_lens.knockout_bars(chosen, gettext=marking), (chosen,)
    sweep = _build("lm-knockout", sweep="yes")
    yield "knockout_grid", lm_lens.knockout_grid(sweep, gettext=marking), (sweep,)
    sinks = sink_record(record)
    yield "sink_grid", lm_lens.sink_grid(sinks, gettext=marking), (sinks,)
    history = training_sinks()
    if history is not None:
        yield ("sink_rate_curve", lm_lens.sink_rate_curve(history.steps, history.shares, epsilon=history.epsilon,
                                                          gettext=marking), ())


def _corpus_page() -> Iterator[tuple[str, go.Figure, tuple]]:
    rng = np.random.default_rng(0)
    mean, std = rng.random((2, 3, 3)), rng.random((2, 3, 3)) / 10
    labels = {"a": marking("entropy"), "b": marking("previous-token")}
    yield "head_scatter", corpus.head_scatter(mean, std, ["a", "b", "c"], labels, "a", "b", selected=(1, 2),
                                              gettext=marking), ()
    tokens, contexts = ["cat", "sat", "mat"], ["the cat", "cat sat", "the mat"]
    for colour_by in corpus.COLOUR_BY:
        yield (f"query_key_plane {colour_by}", corpus.query_key_plane(
            rng.random((3, 2)), rng.random((3, 2)), tokens, contexts, np.arange(3), rng.random(3), rng.random(3),
            colour_by=colour_by, gettext=marking), (AttentionRecord("corpus", np.zeros(3, np.float32), ("key",),
                                                                    ("",), tokens, extras={"c": np.asarray(contexts)}),))


def _default_figures() -> Iterator[tuple[str, go.Figure, tuple]]:
    # What `cli.py export --lang` draws as a figure (viz.export.export_bytes without a figure).
    for mechanism_id in ("sentence-alignment", "transformer", "transformer-rollout", "transformer-encoder",
                         "transformer-decoder", "transformer-cross", "induction", "lm", "lm-generate", "lm-neuron",
                         "lm-logit-lens", "lm-knockout"):
        record = _build(mechanism_id)
        own: Callable = {"lm-knockout": lm_lens.knockout_grid, "lm-logit-lens": lm_lens.lens_grid}.get(
            mechanism_id, record_figure)
        yield f"default figure of {mechanism_id}", own(record, gettext=marking), (record,)


SECTIONS = {"self-attention": _self_attention, "transformer": _transformer_page, "induction": _induction_page,
            "language model": _language_model_pages, "corpus": _corpus_page, "default figures": _default_figures}


@pytest.mark.parametrize("section", list(SECTIONS))
def test_every_figure_text_comes_through_gettext(section):
    found = [f"{name}: {problem}" for name, fig, records in SECTIONS[section]() for problem in unmarked(fig, *records)]
    assert found == []
