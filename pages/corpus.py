"""Many inputs: per-head attention statistics of MiniLM or a decoder LM over a corpus, and one head's joint query–key plane."""

import hashlib

import numpy as np
import streamlit as st

from models.corpus import qk
from models.corpus import run as corpus
from models.corpus.heads import DESCRIPTIONS, LABELS
from models.corpus.texts import MAX_UPLOAD_BYTES, MAX_UPLOAD_TEXTS, csv_header, sample_texts, upload_text, upload_texts
from models.model_folders import max_model_bytes
from models.registry import CORPUS, mechanism_of
from models.text import N_
from ui.corpus_links import single_input_url
from ui.i18n import current_language
from ui.links import choice
from ui.markdown import escape_markdown
from ui.model_folder import BERT_FOLDER, DECODER_FOLDER, model_folder
from ui.router import start_page
from ui.story import page_header
from ui.widgets import checked, clicked_points, show_figure
from viz.corpus import COLOUR_BY, head_scatter, query_key_plane

_ = start_page()
MECHANISMS = {"transformer": mechanism_of("transformer", "self-attention").id, "lm": mechanism_of("lm").id}
MODEL_NAMES = {"transformer": N_("MiniLM (encoder, 6 layers × 12 heads)"),
               "lm": N_("GPT trained here (decoder LM), or your GPT-2/Llama folder")}
SHOWN_CHARS = 200  # of a top input's text on the page (its link carries up to ui.links.LINK_TEXT_MAX)
SOURCES = {"sample": N_("Bundled sample (60 sentences)"), "upload": N_("Upload a .txt or .csv")}


@st.cache_resource(show_spinner=False, max_entries=2)
def _model(mechanism: str, model_dir: str):
    if mechanism == "lm":
        from models.corpus.lm import LMCorpusModel
        from models.lm.records import shared_runner

        return LMCorpusModel(shared_runner(model_dir or None, max_bytes=max_model_bytes()))
    from models.transformer.records import shared_runner

    # the encoder the self-attention pages use: MiniLM, or the user's folder (BERT, RoBERTa, XLM-R, ...)
    return corpus.CorpusModel(shared_runner(model_dir or None, max_bytes=max_model_bytes()))


@st.cache_data(show_spinner=False, max_entries=16)
def _embedding(digest: str, texts: tuple[str, ...], layer: int, head: int, model_dir: str = ""):
    del digest  # the cache key; texts is hashed too, but a digest keeps the key small to compare
    runner = _model("transformer", model_dir).runner
    return qk.joint_embedding(qk.query_keys(runner, texts, layer, head))


page_header(CORPUS, _(
    "One sentence shows one attention map; what a head *does* shows across many. This page runs a model "
    "over a corpus, one text per input, and gives every head the statistics the single-input pages compute "
    "(entropy, previous-token, duplicate-token and induction scores, shares on [CLS] and [SEP] or, for a "
    "decoder LM, on the first token, mean attention distance) as mean ± spread over the texts. Every head is "
    "then one point (HeadVis); a head's sharpest inputs are listed, each a link to the single-input page; and "
    "MiniLM's queries and keys are drawn in one plane (AttentionViz, Yeh et al. 2023). Larger files: "
    "`cli.py corpus`."))

mechanism = choice(st.radio, _("Model"), list(MODEL_NAMES), format_func=lambda m: _(MODEL_NAMES[m]),
                   horizontal=True, key="corpus_model", linked=False)
model_dir = (model_folder(DECODER_FOLDER, key="corpus_model_dir") if mechanism == "lm"
             else model_folder(BERT_FOLDER, key="corpus_encoder_dir"))

source = choice(st.radio, _("Corpus"), list(SOURCES), format_func=lambda s: _(SOURCES[s]), horizontal=True,
                key="corpus_source", linked=False)
texts = None
if source == "sample":
    texts = sample_texts()
else:
    upload = st.file_uploader(_("One text per line (.txt), or a CSV with a header row; at most {mb} MB and "
                                "{count} texts").format(mb=f"{MAX_UPLOAD_BYTES / 1e6:.0f}", count=f"{MAX_UPLOAD_TEXTS:,}"),
                              type=["txt", "csv"], key="corpus_upload")
    if upload is not None:
        content = checked(upload_text, upload.getvalue())
        column = None
        if upload.name.lower().endswith(".csv"):
            header = checked(csv_header, content)
            column = st.selectbox(_("Text column"), header, key="corpus_column")
        texts = checked(upload_texts, content, column)
if not texts:
    st.info(_("Upload a file, or choose the bundled sample."))
    st.stop()

digest = hashlib.sha256("\n".join([mechanism, model_dir, *texts]).encode()).hexdigest()[:16]
done = st.session_state.get("corpus_stats")
ran_on = st.session_state.get("corpus_digest")
cols = st.columns([1, 1, 4])
# on_click: the request survives the router's reruns (a button's own value lasts one run only)
cols[0].button(_("Run"), type="primary", key="corpus_run", help=_("{count} texts").format(count=f"{len(texts):,}"),
               on_click=lambda: st.session_state.update(corpus_start=True))
cols[1].button(_("Stop"), key="corpus_stop", help=_("ends the pass; the statistics of the texts that ran stay"))
if st.session_state.pop("corpus_start", False):
    with st.spinner(_("Loading the model…")):
        model = checked(_model, mechanism, model_dir)
    stats = model.empty_stats()
    st.session_state.update(corpus_stats=stats, corpus_digest=digest, corpus_finished=False, corpus_ran=mechanism)
    bar = st.progress(0.0, text=_("Compiling…"))
    corpus.corpus_statistics(texts, model, into=stats, progress=lambda n: bar.progress(
        min(n / len(texts), 1.0), text=_("{done} of {count} texts").format(done=f"{n:,}", count=f"{len(texts):,}")))
    st.session_state["corpus_finished"] = True
    bar.empty()
    done, ran_on = stats, digest
if done is None or ran_on != digest:
    st.info(_("{count} texts ready: press Run.").format(count=f"{len(texts):,}"))
    st.stop()
ran = st.session_state.get("corpus_ran", "transformer")
if not st.session_state.get("corpus_finished"):
    done.stopped = True
if done.count == 0:
    st.warning(_("Stopped before the first batch ran: no statistics yet. Press Run again."))
    st.stop()
summary = _("{texts} texts, {tokens} tokens").format(texts=f"{done.count:,}", tokens=f"{done.tokens:,}")
if done.skipped:
    summary += " " + _("({count} empty skipped)").format(count=f"{done.skipped:,}")
summary += (" - " + _("stopped early: the statistics cover the texts that ran.")) if done.stopped else "."
st.caption(summary)

st.header(_("Every head by two statistics"))
statistic_ids = done.statistics
pick = st.columns(2)
x = pick[0].selectbox("x", statistic_ids, index=statistic_ids.index("entropy"), format_func=lambda s: _(LABELS[s]),
                      key="corpus_x")
y = pick[1].selectbox("y", statistic_ids, index=statistic_ids.index("previous_score"),
                      format_func=lambda s: _(LABELS[s]), key="corpus_y")
st.caption(_("x: {x}. y: {y}. Each point is a head's mean over the texts; hover for the spread. Click a head to "
             "select it.").format(x=_(DESCRIPTIONS[x]), y=_(DESCRIPTIONS[y])))
layers, heads = done.mean.shape[:2]
selected = (int(st.session_state.get("corpus_layer", 0)), int(st.session_state.get("corpus_head", 0)))
selected = selected if selected[0] < layers and selected[1] < heads else (0, 0)
labels = {s: _(LABELS[s]) for s in statistic_ids}
state = show_figure(head_scatter(done.mean, done.std, statistic_ids, labels, x, y, selected=selected, gettext=_),
                    corpus.stats_record(done, MECHANISMS[ran]), key="corpus_heads", name="corpus_heads",
                    on_select="rerun", selection_mode="points")
for point in clicked_points(state):
    custom = point.get("customdata")
    if isinstance(custom, list) and len(custom) >= 2:
        layer, head = int(custom[0]), int(custom[1])
        if 0 <= layer < layers and 0 <= head < heads and (layer, head) != selected:
            st.session_state.update(corpus_layer=layer, corpus_head=head)
            st.rerun()

st.header(_("One head"))
pick = st.columns(3)
if st.session_state.get("corpus_layer", 0) >= layers or st.session_state.get("corpus_head", 0) >= heads:
    st.session_state.update(corpus_layer=0, corpus_head=0)  # a smaller model than the last run's
layer = pick[0].selectbox(_("Layer"), range(layers), key="corpus_layer")
head = pick[1].selectbox(_("Head"), range(heads), key="corpus_head")
rows = [r for r in corpus.top_rows(done) if r["layer"] == layer and r["head"] == head]
st.subheader(_("L{layer}H{head}: where it attends most sharply").format(layer=layer, head=head))
language = current_language()
page_name = _("Self-attention (MiniLM)") if ran == "transformer" else _("Language model (GPT)")
st.caption(_("Each text opens {page} on it, with this layer and head selected.").format(page=page_name))
lines = []
for r in rows:
    text = r["text"] if len(r["text"]) <= SHOWN_CHARS else r["text"][: SHOWN_CHARS - 1] + "…"
    url = single_input_url(ran, r["text"], layer, head, None if language == "en" else language)
    lines.append(_("{rank}. {entropy} nats · input {input}: [{text}]({url})").format(
        rank=r["rank"] + 1, entropy=f"{r['entropy']:.3f}", input=r["input"] + 1, text=escape_markdown(text), url=url))
st.markdown("\n".join(lines))
if ran == "lm" and model_dir:
    st.caption(_("The links open the language model page with the GPT trained here; choose your folder there."))

if ran != "transformer":
    st.info(_("The joint query–key plane is drawn for MiniLM: choose it above and press Run."))
    st.stop()
st.subheader(_("L{layer}H{head}: queries and keys in one plane").format(layer=layer, head=head))
colour_by = choice(st.selectbox, _("Colour the plane by"), COLOUR_BY, format_func=lambda c: _(c), key="corpus_colour",
                   linked=False)
st.markdown(_(
    "Queries (filled) and keys (open) of every token of the first texts (up to {tokens} tokens), normalised as "
    "AttentionViz does so that distance tracks attention: keys translated so that their mean is the queries' "
    "mean, k ← k − mean(k) + mean(q); then q ← c·q and k ← k/c with c = √(mean‖k‖ / mean‖q‖), so both have the "
    "same mean norm. Neither changes any attention map. Then PCA to two axes.").format(
    tokens=f"{qk.MAX_SAMPLE_TOKENS:,}"))
embedding = checked(_embedding, digest, tuple(texts), int(layer), int(head), model_dir)
sample = embedding.sample
fig = query_key_plane(embedding.query_xy, embedding.key_xy, sample.tokens, sample.contexts, sample.position,
                      np.linalg.norm(sample.queries, axis=1), np.linalg.norm(sample.keys, axis=1), colour_by=colour_by,
                      gettext=_)
show_figure(fig, qk.embedding_record(embedding, MECHANISMS["transformer"]), key="corpus_qk",
            name=f"corpus_qk_L{layer}H{head}")
st.caption(_("{tokens} tokens of {texts} texts; the two axes keep {share} of the variance; c = {scale}.").format(
    tokens=f"{len(sample.tokens):,}", texts=f"{int(sample.input.max()) + 1:,}",
    share=f"{embedding.projection.explained.sum():.0%}", scale=f"{embedding.normalisation.scale:.3f}"))
