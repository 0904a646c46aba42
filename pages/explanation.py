"""Is attention an explanation? Attribution methods beside α on the same input, scored against the truth where a
model knows it (the date fields), the 2019 tests live (another attention that gives the same output), and the
information-flow route to one output."""

import numpy as np
import streamlit as st

from models.attribution.records import APPLIES
from models.explain.dates import truth
from models.explain.measures import alignment_error_rate, shares
from models.record import AttentionRecord
from models.registry import EXPLANATION, get_mechanism
from models.registry_explanation import METHOD, REVIEW
from ui.links import bound, linked_index, linked_text
from ui.router import start_page
from ui.story import page_header
from ui.widgets import checked, option_slider, show_figure, show_notice
from viz.explanation import panels_figure
from viz.flow import flow_figure, head_weights_figure
from viz.i18n_text import N_

_ = start_page()

page_header(EXPLANATION, _(
    "Every page of this app draws α, and a reader takes it for the reason behind the output. Since 2019 the field "
    "has argued that it may not be: another attention can give the same output (Jain & Wallace), though not every "
    "model lets it (Wiegreffe & Pinter), and removing what α ranks first need not change the decision (Serrano & "
    "Smith). Attribution methods answer differently: they ask what the output owes to each input. Here they sit "
    "beside α on the same input, and on the date model, whose true fields are known, each one is scored."
))

# The models whose α stands beside the attributions: id → (name, architecture, its maps' mechanism, example text).
MODELS = {
    "dates": (N_("the date Transformer (truth known)"), "encdec", "transformer-cross", None),
    "minilm": (N_("MiniLM (self-attention)"), "encoder", "transformer", "The cat sat on the mat because it was warm."),
    "gpt": (N_("the GPT trained here"), "decoder", "lm", "The cat sat on the mat. The cat sat on the"),
}
ATTRIBUTION = {"encdec": "transformer-cross-attribution", "encoder": "transformer-attribution",
               "decoder": "lm-attribution"}
DEFAULT_METHODS = ["norm", "value-zeroing", "gradient-x-input", "occlusion"]
HELD_OUT = 1_000  # the held-out dates one may pick (models/encdec/quality.py HELD_OUT_SEED)


@st.cache_data(show_spinner=False, max_entries=1)
def held_out_dates() -> list:
    from models.encdec.quality import held_out_examples

    return held_out_examples(HELD_OUT)


@st.cache_resource(show_spinner=False, max_entries=32)  # shared, never mutated
def built(mechanism_id: str, options: tuple) -> object:
    return get_mechanism(mechanism_id).build(dict(options))


def within(text: str, limit: int) -> str:
    """Returns the text, or stops the page with one line when a scripted client sent more than its box takes."""
    if len(text) > limit:
        st.error(_("The text may have at most {count} characters.").format(count=f"{limit:,}"), icon=":material/error:")
        st.stop()
    return text


def last_layer_mean(record) -> np.ndarray:
    """Returns α of the last layer, the mean over its heads [query, key] (a record [layer, head, query, key])."""
    return np.asarray(record.weights[-1]).mean(axis=0)


def method_matrix(record) -> np.ndarray:
    """Returns an attribution record's one map: its last layer (rolled out where the method rolls out)."""
    return np.asarray(record.weights[-1] if record.axes[0] == "layer" else record.weights)


st.subheader(_("1 Attributions beside α"))
model = bound(st.radio, _("Model"), list(MODELS), format_func=lambda m: _(MODELS[m][0]), horizontal=True,
              key="ex_model")
name, architecture, maps_id, example = MODELS[model]
example_date = None
if architecture == "encdec":
    index = linked_index(st.number_input, _("Held-out date (0 to {top})").format(top=HELD_OUT - 1), HELD_OUT - 1, 0,
                         key="ex_date")
    example_date = held_out_dates()[index]
    text = example_date.source
    st.caption(_("“{text}” → {target}: the true source characters of each output digit are outlined.").format(
        text=text, target=example_date.target))
else:
    text = within(linked_text(st.text_input, _("Text"), example, key="ex_text", max_chars=500), 500)
# The same choices for every model (a control whose choices changed would lose its value); a chosen method that
# does not apply to this model's architecture says why in one line and is left out.
chosen = bound(st.multiselect, _("Methods"), list(METHOD.choices), default=DEFAULT_METHODS, key="ex_methods")
methods = [m for m in chosen if m in METHOD.choices and APPLIES[m][architecture] is True]
for method in chosen:
    if method in METHOD.choices and APPLIES[method][architecture] is not True:
        st.caption(_("{method} does not apply here: {reason}").format(method=method, reason=APPLIES[method][architecture]))
if not text.strip():
    st.info(_("Type a text above to compare the methods."), icon=":material/edit:")
    st.stop()

with st.spinner(_("Running every method on the same input…")):
    alpha_record = checked(built, maps_id, (("text", text),))
    records = [checked(built, ATTRIBUTION[architecture], (("text", text), ("method", m))) for m in methods]
show_notice(alpha_record.meta.get("notice"))
alpha = last_layer_mean(alpha_record)
maps = [alpha] + [method_matrix(r) for r in records]
rows = min(m.shape[0] for m in maps)  # a decoder's gradient methods have no row for the last token
offset = alpha.shape[0] - rows
maps = [m[-rows:] if m.shape[0] > rows else m for m in maps]
titles = [_("α (last layer, head mean)")] + [r.meta["method"] for r in records]
query_labels = alpha_record.query_labels[offset:] if architecture != "encdec" else alpha_record.query_labels
marks = None
if example_date is not None:
    sure, possible, scored = truth(example_date, maps[0].shape[-1])
    marks = sure
    titles = [f"{t} · AER {alignment_error_rate([m], [sure], [possible], [scored]):.2f}" for t, m in zip(titles, maps)]
fig = panels_figure(maps, titles, query_labels, alpha_record.key_labels, truth=marks, gettext=_,
                    title=_("{model}: each panel's colour is the entry's share of its row").format(model=_(name)))
shown = AttentionRecord("explanation", np.stack(maps).astype(np.float32), ("method", "query", "key"), query_labels,
                        alpha_record.key_labels, meta={"model": model, "methods": ["alpha", *methods], "text": text,
                                                       "titles": titles},
                        extras={"shares": np.stack([shares(m) for m in maps]).astype(np.float32)})
show_figure(fig, shown, key="ex_panels", name=f"explanation-{model}")
st.caption(_("Rows: what is explained ({rows}); columns: the inputs. AER (alignment error rate, Och & Ney 2003) links "
             "each output digit to as many inputs as its field has and counts the links outside the field: 0 is the "
             "truth, 1 is none of it.").format(rows=_("each output character") if architecture == "encdec"
                                                else _("each next-token prediction") if architecture == "decoder"
                                                else _("each token's final vector")))

st.subheader(_("2 The 2019 tests: another attention, the same output"))
TESTS = {"adversary": N_("Adversarial α̃ (Jain & Wallace)"), "permutation": N_("Shuffled α (Jain & Wallace)"),
         "uniform": N_("Uniform α (Wiegreffe & Pinter)")}
left, right = st.columns(2)
with left:
    on = bound(st.radio, _("Model tested"), ["bahdanau", "han"], horizontal=True, key="ex_test_model",
               format_func=lambda m: _("Bahdanau (dates)") if m == "bahdanau" else _("HAN (reviews)"))
with right:
    tests = list(TESTS) if on == "bahdanau" else ["adversary", "permutation"]
    test = bound(st.radio, _("Test"), tests, format_func=lambda t: _(TESTS[t]), key="ex_test", horizontal=True)
mechanism = get_mechanism(f"{on}-{test}")
st.latex(mechanism.formula)
st.caption(mechanism.citation(_))
limit = 1_000 if on == "bahdanau" else 2_000
test_text = within(linked_text(st.text_input, _("Input to test"), "Wednesday, May 9, 2018" if on == "bahdanau" else REVIEW,
                               key=f"ex_test_text_{on}", max_chars=limit), limit)
if not test_text.strip():
    st.info(_("Type a text above to run the test."), icon=":material/edit:")
    st.stop()
with st.spinner(_("Searching for another attention…") if test == "adversary" else _("Running the test…")):
    pair = checked(built, mechanism.id, (("text", test_text),))
meta = pair.meta
second = {"alpha_tilde": _("α̃ (adversarial)"), "worst_shuffle": _("the shuffle that moved the output most"),
          "uniform": _("uniform α")}[meta["which"][1]]
show_figure(panels_figure([pair.weights[0], pair.weights[1]], [_("α (the model's own)"), second], pair.query_labels,
                          pair.key_labels, gettext=_), pair, key="ex_pair", name=mechanism.id)
if on == "bahdanau" and test == "adversary":
    st.markdown(_("Output under α: **{a}**; under α̃: **{b}**. Mean Jensen–Shannon divergence between them "
                  "{jsd:.3f} nats (at most ln 2 = 0.693), while every step's output moved by at most {tvd:.4f} "
                  "(total variation).").format(a=meta["output_alpha"], b=meta["output_tilde"],
                                               jsd=meta["mean_jsd"], tvd=meta["max_tvd"]))
elif on == "bahdanau" and test == "permutation":
    st.markdown(_("Over 100 shuffles of each step's α, the output moved by a median of {median:.3f} and at most "
                  "{most:.3f} (total variation, the mean over the steps).").format(
        median=float(np.mean(meta["median_tvd"])), most=float(np.mean(meta["max_tvd"]))))
elif on == "bahdanau":
    st.markdown(_("Output with its own α: **{a}**; with uniform α at every step: **{b}**. The same model trained "
                  "without attention reads the date through one vector and still writes most dates right "
                  "(docs/models/counterfactual.md): uniform α is not what it learned to use.").format(
        a=meta["output"], b=meta["output_uniform"]))
elif test == "adversary":
    st.markdown(_("Jensen–Shannon divergence between α and α̃: {jsd:.3f} nats; the class probabilities moved by at "
                  "most {tvd:.4f}.").format(jsd=meta["jsd"], tvd=meta["tvd"]))
else:
    st.markdown(_("Over 100 shuffles, the class probabilities moved by a median of {median:.3f} and at most "
                  "{most:.3f}.").format(median=meta["median_tvd"], most=meta["max_tvd"]))

st.subheader(_("3 Information flow: the route to one output"))
st.markdown(_("Where α says where each head reads, the flow graph weighs every part of every sum in the residual "
              "stream (each token through each head, the residual, the feed-forward network) by how much of the sum "
              "it makes, and keeps the edges above a threshold that lead to one output (Ferrando & Voita 2024)."))
FLOWS = {"minilm": ("flow-minilm", N_("MiniLM: a token's final vector"), "The cat sat on the mat because it was warm."),
         "gpt": ("flow", N_("the GPT trained here: a next-token prediction"), "The cat sat on the mat. The cat sat on the")}
flow_model = bound(st.radio, _("Model to trace"), list(FLOWS), format_func=lambda m: _(FLOWS[m][1]), horizontal=True,
                   key="ex_flow_model")
flow_id, _name, flow_example = FLOWS[flow_model]
flow_entry = get_mechanism(flow_id)
flow_text = within(linked_text(st.text_input, _("Text to trace"), flow_example, key=f"ex_flow_text_{flow_model}",
                               max_chars=500), 500)
threshold = option_slider(flow_entry.option("threshold"), key="ex_flow_threshold", label=_("Threshold"))
if not flow_text.strip():
    st.info(_("Type a text above to trace it."), icon=":material/edit:")
    st.stop()
traced = checked(built, flow_id, (("text", flow_text), ("threshold", threshold),
                                  ("position", 0 if flow_model == "minilm" else -1)))
show_notice(traced.meta.get("notice"))
st.caption(_("Heads on the route: {heads}.").format(heads=", ".join(traced.meta["route_heads"]) or _("none")))
show_figure(flow_figure(traced, title=_("The route from {token}").format(token=traced.query_labels[
    traced.meta["position"]]), gettext=_), traced, key="ex_flow", name=f"{flow_id}-route")
show_figure(head_weights_figure(traced, title=_("Each head's total edge weight (outlined: on the route)"), gettext=_),
            traced, key="ex_flow_heads", name=f"{flow_id}-heads")
