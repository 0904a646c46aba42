"""Language model: the attention of a small GPT trained here on the Python documentation, or of your own GPT-2/Llama folder."""

import streamlit as st

from models.heads.statistics import matrix_record, model_view_record
from models.lm.quality import familiarity_notice, training_record
from models.lm.records import shared_runner
from models.model_folders import max_model_bytes
from models.registry import LANGUAGE_MODEL, mechanisms_on_page
from ui.attribution_compare import compare_with_attribution
from ui.i18n import current_language
from ui.legend import LANGUAGE_MODEL_LEGEND, symbol_legend
from ui.links import bound, linked_text
from ui.markdown import escape_markdown
from ui.model_folder import DECODER_FOLDER, model_folder
from ui.router import start_page
from ui.story import page_header
from ui.widgets import checked, index_in, show_figure, show_notice
from viz.chart_style import for_the_page
from viz.i18n_text import gettext_for
from viz.lm import training_curves
from viz.transformer import head_heatmap, model_view

_ = start_page()
mechanism = mechanisms_on_page(LANGUAGE_MODEL.file)[0]
# A sentence from the documentation's own register, written twice: on the second copy the induction
# head looks at the token after the earlier copy of each token.
DEFAULT_TEXT = ("The for statement iterates over the items of any sequence, in the order that they appear. "
                "The for statement iterates over the items of any sequence, in the order that they appear.")


def _runner(model_dir: str):
    # The process's one copy of the folder's model, shared with the other language-model pages.
    return shared_runner(model_dir or None, max_bytes=max_model_bytes())


@st.cache_resource(show_spinner=False, max_entries=2)  # shared, never mutated; a user model's record may be 640 MB
def _record(model_dir: str, text: str):
    # Built through the registry (every option checked on the server), by the runner _runner loaded and bounded.
    return mechanism.build({"text": text, "model_dir": model_dir or None})


@st.cache_data(show_spinner=False)
def _curves():
    return training_record()


@st.cache_resource(show_spinner=False, max_entries=2)
def _curves_figure(language: str):
    # The same for every session of a language (the committed training log): built and readied once.
    return for_the_page(training_curves(_curves(), gettext=gettext_for(language)))



page_header(LANGUAGE_MODEL, _(
    "A decoder language model reads text left to right: each token attends only to itself and the tokens "
    "before it, and the model predicts the next token. The default model is a small GPT-2 (2 layers × 4 heads, "
    "width 128, 128 positions) **trained here** on the Python documentation (Debian's `python3-doc`); it is "
    "stored as a Hugging Face GPT-2 folder and read exactly as your own folder would be. An **induction head** "
    "would attend, on the second copy of a repeated sentence, to the token right after the earlier copy of the "
    "current token; in this model's short training none formed (every head's prefix-matching score stays at "
    "chance, the curves below), while previous-token heads and heads that park attention on the first token "
    "did. The default text is a sentence written twice, so you can see that for yourself."
))
st.latex(mechanism.formula)
symbol_legend(LANGUAGE_MODEL_LEGEND)
st.caption(mechanism.citation(_))

text = linked_text(st.text_area, _("Text"), DEFAULT_TEXT, key="lm_text", height=100,
                   max_chars=mechanism.option("text").max_chars)
model_dir = model_folder(DECODER_FOLDER, key="lm_model_dir")

if not text.strip():
    st.info(_("Type some text above to see its attention."), icon=":material/edit:")
    st.stop()

with st.spinner(_("Loading the model and running it on the text…")):
    runner = checked(_runner, model_dir)
    record = checked(_record, model_dir, text)

curves = _curves()
trained_here = not model_dir
meta = record.meta
st.caption(_("{model} ({architecture}, {layers} layers × {heads} heads) · {tokens} tokens").format(
    model=escape_markdown(str(meta["model"])) if model_dir else _("the GPT trained here"), architecture=meta["architecture"], layers=meta["num_layers"],
    heads=meta["num_heads"], tokens=len(record.query_labels))
    + ("" if meta["loss_nats"] is None else " · " + _("next-token loss {loss} nats per token").format(
        loss=f"{meta['loss_nats']:.2f}")))
if meta.get("notice"):
    show_notice(meta["notice"])
elif trained_here and (far := familiarity_notice(meta["loss_nats"], curves.meta["heldout"]["perplexity"])):
    show_notice(far, icon=":material/travel_explore:")

# The trained model opens on its induction head; another model on the last layer's first head.
best_layer, best_head = curves.meta["best"] if trained_here else (meta["num_layers"] - 1, 0)


# The views are a fragment: the layer and head pickers rerun them alone, not the text box and model above.
@st.fragment
def views(record) -> None:
    layers, heads = record.weights.shape[:2]
    pick_layer, pick_head = st.columns(2)
    layer = index_in(bound(pick_layer.selectbox, _("Layer"), range(layers), index=min(best_layer, layers - 1),
                           key="lm_layer"), layers)
    head = index_in(bound(pick_head.selectbox, _("Head"), range(heads), index=min(best_head, heads - 1),
                          key="lm_head"), heads)
    labels = record.query_labels
    st.subheader(_("Head view"))
    title = _("Layer {layer}, head {head}").format(layer=layer, head=head)
    show_figure(head_heatmap(record.weights[layer, head], labels, title=title, gettext=_),
                matrix_record(record, record.weights[layer, head], layer=layer, head=head),
                key="lm_head_view", name=f"language-model-layer{layer}-head{head}")
    st.subheader(_("Model view"))
    st.caption(_("Every layer (rows) and head (columns) at once; hover a cell for its tokens."))
    view = model_view_record(record)
    show_figure(model_view(view, gettext=_), view, key="lm_model_view", name="language-model-model-view")


views(record)
compare_with_attribution("decoder", text, record.weights[-1].mean(axis=0), record.query_labels, record.key_labels,
                         alpha_title=_("α (last layer, head mean)"), model_dir=model_dir, key="lm")

st.header(_("How the heads formed"))
info = curves.meta
emerged = info["emerged_step"]
best_name = info["heads"][info["best_head"]]
cols = st.columns(4)
cols[0].metric(_("Held-out perplexity"), f"{info['heldout']['perplexity']:.1f}",
               help=_("exp(mean next-token loss) on the held-out pages of the documentation"))
cols[1].metric(_("Bigram baseline"), f"{info['heldout']['bigram_perplexity']:.1f}",
               help=_("add-k bigram (k = {k}) on the same tokens, counted on the training pages").format(
                   k=info["heldout"]["bigram_k"]))
cols[2].metric(_("Induction head"), f"{best_name}: {curves.weights[0, info['best_head'], -1]:.2f}",
               help=_("prefix-matching score on [BOS] + r + r of random tokens; a content-blind head scores about "
                      "{baseline}").format(baseline=f"{info['baseline']:.3f}"))
cols[3].metric(_("Reached {goal} at step").format(goal=f"{info['goal']:g}"),
               _("never") if emerged is None else f"{emerged:,}")
st.caption(_("The log of the training run (`{command}`): the losses, then every head's prefix-matching score "
             "(attention to the token after the earlier copy, on [BOS] + r + r of {count} random tokens), "
             "previous-token score and share of attention on the first token (the <|endoftext|> every text starts "
             "with), on held-out windows, about twenty times during training.").format(
    command=escape_markdown(info["command"]), count=info["probe"]["half"]))
show_figure(_curves_figure(current_language()), curves, key="lm_curves", name="language-model-training")
