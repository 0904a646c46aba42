"""Induction heads: a two-layer attention-only transformer, trained here, forms them while you watch."""

import streamlit as st

from models.induction.records import model_size, phase_change, prediction_rows, snapshot_steps, training_record
from models.induction.task import LETTERS, WORDS
from models.registry import INDUCTION, mechanisms_on_page
from ui.i18n import current_language
from ui.legend import INDUCTION_LEGEND, symbol_legend
from ui.links import bound, linked_text
from ui.router import start_page
from ui.story import page_header
from ui.widgets import checked, option_number, option_slider, show_figure, show_notice
from viz.chart_style import for_the_page
from viz.i18n_text import N_, gettext_for
from viz.induction import copy_view, head_pattern, snapshot_note, training_curves

_ = start_page()
mechanism = mechanisms_on_page(INDUCTION.file)[0]
layers, heads = model_size()
EXAMPLE_TEXT = "k dog m sun p cat k dog m sun"


@st.cache_data(show_spinner=False, max_entries=256)
def _record(text: str | None, seed: int, length: int, step: int | None):
    return mechanism.build({"text": text, "seed": seed, "length": length, "step": step})


@st.cache_data(show_spinner=False)
def _curves():
    return training_record(mechanism.id)


@st.cache_resource(show_spinner=False, max_entries=2)
def _curves_figure(language: str):
    # The same for every session of a language and every snapshot (the committed training log): built
    # once, and unchanged when the snapshot moves, so the browser keeps it drawn. It is readied for the
    # page here, before it is shared: show_panels readies it again on every show, and a readied figure is
    # final (viz.chart_style.for_the_page), so no session's show changes what another is sent.
    return for_the_page(training_curves(_curves(), gettext=gettext_for(language)))



PREDICTION_COLUMNS = (N_("position"), N_("token"), N_("predicted next"), N_("probability"),
                      N_("induction head reads"), N_("copied"), N_("yes"))

page_header(INDUCTION, _(
    "An **induction head** finds the earlier occurrence of the current token and predicts the token "
    "that followed it: after `… k dog … k` it says `dog`. It takes two layers: a head in layer 0 copies "
    "each token's predecessor into its position, and a head in layer 1 matches its query against that "
    "copy, so it attends to *the token right after an earlier copy of me* and copies it to the output. "
    "The model here is a {layers}-layer, attention-only causal transformer ({heads} heads per layer, no MLPs), "
    "trained here on sequences of 64 tokens in which a random segment of 8–24 tokens "
    "appears twice. Its loss on the repeated half falls suddenly when the head forms: the phase change "
    "of Olsson et al. (2022). Once it has formed, short repeats join the training data (3–8 tokens "
    "anywhere, and [BOS] + r + r with r of 3–31 tokens right at the start), so that it also copies the "
    "short sequences people type."
).format(layers=layers, heads=heads))
st.latex(mechanism.formula)
symbol_legend(INDUCTION_LEGEND)
st.caption(_("{paper}. Vocabulary (50 tokens, type them separated by spaces): the letters {first}–{last} and the "
             "words {words}; every sequence starts with [BOS].").format(
    paper=mechanism.citation(_), first=LETTERS[0], last=LETTERS[-1], words=", ".join(WORDS)))

change = phase_change()
steps = snapshot_steps()
best = f"L{change.best_head[0]}H{change.best_head[1]}"
st.header(_("The phase change"))
curves = _curves()
cols = st.columns(5)
cols[0].metric(_("Induction head"), best, help=_("the head with the highest prefix-matching score at the end"))
cols[1].metric(_("Its prefix-matching score"), f"{change.best_score:.2f}",
               help=_("random ≈ 1/T = {baseline}").format(baseline=f"{change.baseline:.3f}"))
cols[2].metric(_("Reached 0.4 at step"), _("never") if change.emerged_step is None else f"{change.emerged_step:,}")
if change.drop is not None:
    cols[3].metric(_("Loss on the repeated half"), _("{loss} nats").format(loss=f"{change.repeated_final:.2f}"),
                   delta=_("{change} in steps {first}–{last}").format(
                       change=f"{change.repeated_after - change.repeated_before:+.2f}", first=f"{change.drop[0]:,}",
                       last=f"{change.drop[1]:,}"), delta_color="inverse",
                   help=_("at the end of training; the change shown is the steepest fall, the phase change"))
mixed_after = curves.meta["mixture_from"]
copied_help = _("share of the second copy of [BOS] + r + r, r of 4 tokens, that the final model predicts "
                "(64 sequences of the training log)")
if mixed_after is not None:
    copied_help = _("{share}; short repeats joined the training after step {step}").format(
        share=copied_help, step=f"{mixed_after:,}")
cols[4].metric(_("4-token repeats copied"), f"{curves.extras['short_copied'][-1]:.0%}", help=copied_help)
st.caption(_("Every head's scores on 32 sequences [BOS] + r + r (r of 31 random tokens), measured every 25 steps; "
           "the black ticks on the loss curves are the snapshots you can pick below, the dashed line where "
           "short repeats joined the training data. Previous-token: attention on the token before; "
           "duplicate-token: on earlier copies of the same token; prefix-matching: on the token after the "
           "earlier copy (Olsson et al.); a head that ignores content scores about 1/T."))
show_figure(_curves_figure(current_language()), curves, key="ind_curves", name="induction-training")

st.header(_("One head at one snapshot"))
st.markdown(_("The attention of any head on a generated repeated sequence [BOS] + r + r, at any snapshot of its "
              "training. Red squares: where an induction head looks (the token right after the earlier copy of "
              "each query's token)."))


# Its own fragment (st.fragment): the layer, head, seed, length and the outline change only this
# view (the curves above stay drawn). The Link boxes read the browser's address, so the other
# sections' boxes stay right.
@st.fragment
def head_section() -> None:
    left, right = st.columns([1, 3], gap="large")
    with left:
        layer = bound(st.radio, _("Layer"), list(range(layers)), index=change.best_head[0], key="ind_layer",
                      horizontal=True)
        head = bound(st.radio, _("Head"), list(range(heads)), index=change.best_head[1], key="ind_head", horizontal=True)
        seed = option_number(mechanism.option("seed"), key="ind_seed")
        length = option_slider(mechanism.option("length"), key="ind_length")
        targets = bound(st.checkbox, _("Outline the induction targets"), value=True, key="ind_targets")
    with right:
        head_view(layer, head, seed, length, targets)


# A fragment inside head_section: a step of the snapshot slider reruns only the slider, its two
# captions and the map, not the controls beside them (docs/PERFORMANCE.md, "The page").
@st.fragment
def head_view(layer: int, head: int, seed: int, length: int, targets: bool) -> None:
    step = bound(st.select_slider, _("Training step (a snapshot)"), steps, value=steps[-1], key="ind_step",
                 help=_("About 20 snapshots, dense where the loss drops; the last is the final model."))
    st.caption(snapshot_note(curves, step, change.drop, _))
    record = checked(_record, None, seed, length, step)
    scores = {name: values[layer][head] for name, values in record.meta["scores"].items()}
    st.caption(_("L{layer}H{head} at step {step}: {scores} (random ≈ {baseline})").format(
        layer=layer, head=head, step=f"{step:,}", scores=", ".join(f"{_(k)} {v:.2f}" for k, v in scores.items()),
        baseline=f"{record.meta['random_baseline']:.3f}"))
    fig = head_pattern(record, layer, head, show_targets=targets, gettext=_,
                       title=_("L{layer}H{head} at step {step}").format(layer=layer, head=head, step=f"{step:,}"))
    show_figure(fig, record, key="ind_head_map", name=f"induction-L{layer}H{head}-step{step}")


head_section()

st.header(_("Your own sequence"))
st.markdown(_("Type tokens from the vocabulary; repeat a stretch and watch the model continue it. Each row "
            "reads *token → the model's next-token prediction*; the marker shows the key the induction head "
            "({best}) reads most, green where that key follows an earlier copy of the row's token and the "
            "prediction is the token there (it copied it). Pick an earlier snapshot: before the phase change "
            "nothing is copied, and short repeats are copied only after they joined the training data (the "
            "dashed line in the curves).").format(best=best))


# Its own fragment too: the text and this section's snapshot change only this view.
@st.fragment
def text_section() -> None:
    text = linked_text(st.text_input, _("Your tokens"), EXAMPLE_TEXT, key="ind_text",
                       max_chars=mechanism.option("text").max_chars)
    step = bound(st.select_slider, _("Training step (a snapshot) for this sequence"), steps, value=steps[-1],
                 key="ind_text_step",
                 help=_("The same snapshots as above; the last is the final model."))
    if not text.strip():
        st.info(_("Type a few tokens separated by spaces, e.g. `k dog m sun k dog`."), icon=":material/edit:")
        return
    # A typed sequence ignores the generator's seed and length (models/induction/records.py).
    typed = checked(_record, text, mechanism.option("seed").default, mechanism.option("length").default, step)
    continuation = typed.meta["predictions"][-1]
    st.markdown(_("**Next token predicted after your sequence:** `{token}` ({probability}) at step {step}").format(
        token=continuation, probability=f"{typed.meta['prediction_probabilities'][-1]:.0%}", step=f"{step:,}"))
    for notice in typed.meta["notices"]:
        show_notice(notice)
    show_figure(copy_view(typed, gettext=_, title=_("{head} on your tokens, step {step}").format(
        head=best, step=f"{step:,}")), typed, key="ind_copy",
                name=f"induction-text-step{step}")
    # The table's columns and its "yes", as models/induction/records.py names them, shown translated.
    rows = [{_(column): _(value) if column == "copied" and value else value for column, value in row.items()}
            for row in prediction_rows(typed)]
    st.dataframe(rows, hide_index=True, key="ind_predictions")


text_section()
