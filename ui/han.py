"""Streamlit pieces of the hierarchical-attention page: one document's analysis, and
"train your own" (CSV upload -> training in the background -> inspect -> download).

Training runs as a job of the process-wide TrainingService (models/training.py): at most a
few at once for the whole server, each within a step and time budget, the others waiting in
line with their place shown. The job survives reruns and page switches; its id goes into
the URL (?model=…) and the model is kept on disk after every epoch, so a reload finds it.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import streamlit as st

from models.compare import row_difference_record
from models.han import records as han_records
from models.han.data import MAX_CSV_BYTES, LabelledTexts, parse_csv
from models.han.model import CHECKPOINT
from models.han.records import HANPredictor, document_word_weights, result_record
from models.han.store import OWN_TTL, OwnModel, load_own_model, own_model_path
from models.han.train import OWN_EPOCHS, example_csv_bytes, train_own
from models.record import AttentionRecord
from models.training import Job, TrainingService
from ui.i18n import notice_text, translator
from ui.links import linked_text
from ui.widgets import checked, escape_markdown, option_slider, show_figure
from viz.compare import difference_heatmap
from viz.han import han_heatmap, highlighted_html
from viz.i18n_text import N_

JOB_KEY = "han_job"  # session state: the id of this session's training job
MODEL_KEY = "han_model"  # session state: the latest model trained here (an OwnModel)
CONFIRM_KEY = "han_confirm_replace"
URL_KEY = "model"  # query parameter carrying the job id across reloads
UPLOAD_LIMIT_MB = MAX_CSV_BYTES // 1_000_000  # the widget says the same limit as the text above it

# The model's notices (models/han/records.py), as the page words them, in the session's language. The
# attention notices are the model's own texts (tests/models/han/test_notices.py checks they match);
# a notice not listed here (what was cut from a long input) is shown by notice_text, part by part.
READING_NOTICES = {
    han_records.ENGLISH_NOTICE: N_(
        "This model reads English. It was trained on English reviews, through MiniLM, an English model; this text "
        "is mostly Chinese, Japanese or Korean characters, which it never saw in training. Its prediction and its "
        "attention here are outside what it knows: read them as a demonstration of the mechanism, not as a "
        "judgement of the text."),
    han_records.SHORT_NOTICE: N_(
        "A hierarchical attention network reads documents of several sentences; with one sentence its sentence "
        "attention is 1 by construction, and a text this short is far from the reviews it was trained on."),
}
NO_OPINION_NOTICE = N_(
    "No sentence stands out: the sentence attention is spread (normalised entropy {spread:.2f}, where 1 is even), "
    "as this model's attention is on reviews without an opinion. It found no opinion sentence here, so the "
    "highlighted sentence is no finding and the prediction is close to a guess."
)
EVEN_OPINIONS_NOTICE = N_(
    "No sentence stands out: the sentence attention is spread (normalised entropy {spread:.2f}, where 1 is even), "
    "yet the prediction is confident ({confidence:.0%} {label}). Several sentences weigh alike here, as when every "
    "sentence judges something; this model was trained on reviews with one or two opinion sentences among "
    "neutral ones, so reviews like this one are at the edge of what it knows."
)


def english_notice() -> None:
    """Says up front what the model reads: English (a Chinese text gets its own warning beside its result)."""
    _ = translator()
    st.info(_("**This model reads English.** It was trained on English reviews, through MiniLM's English word "
              "pieces. Sentences in Chinese are split at 。！？ and their characters read one by one, but the "
              "model never saw such text in training: its prediction and attention on it are outside what it "
              "knows."), icon=":material/translate:")


def attention_notice(record: AttentionRecord) -> str:
    """Returns the notice shown when no sentence stands out (records.py's rule), in the session's language."""
    _ = translator()
    meta = record.meta
    if not meta.get("attention_notice"):
        return ""
    spread = float(meta.get("sentence_spread", 0.0))
    if meta.get("no_opinion"):
        return _(NO_OPINION_NOTICE).format(spread=spread)
    heads = list(meta.get("heads", []))
    head = "sentiment" if "sentiment" in heads else heads[0] if heads else None
    if head is None or f"probabilities_{head}" not in record.extras:
        return meta["attention_notice"]
    p = record.extras[f"probabilities_{head}"]
    label = str(record.extras[f"classes_{head}"][int(p.argmax())])
    return _(EVEN_OPINIONS_NOTICE).format(spread=spread, confidence=float(p.max()), label=label)


@st.cache_resource
def training_service() -> TrainingService:
    """The server's one TrainingService (its limits come from the environment; see README)."""
    return TrainingService(
        limit=int(os.environ.get("ATTENTION_LAB_MAX_TRAININGS", "2")),
        max_steps=int(os.environ.get("ATTENTION_LAB_TRAIN_MAX_STEPS", "10000")),
        max_seconds=float(os.environ.get("ATTENTION_LAB_TRAIN_MAX_SECONDS", "600")),
    )


def show_analysis(record: AttentionRecord, *, key: str, name: str) -> None:
    """Shows the highlighted text (escaped) over the sentences × words heatmap, with export, and
    above the heatmap the notice that no sentence stands out when the model's rule says so."""
    _ = translator()
    for notice in record.meta.get("notices", []):
        if notice == han_records.ENGLISH_NOTICE:
            st.warning(_(READING_NOTICES[notice]), icon=":material/translate:")
        else:
            st.info(_(READING_NOTICES[notice]) if notice in READING_NOTICES else notice_text(notice, _),
                    icon=":material/content_cut:")
    # One above the other, each the column's whole width: beside the text, the map's cells were
    # too narrow for their words.
    st.markdown(_("**The document as the network read it**"))
    st.caption(_("Amber: sentence weight α_i. Blue: word weight α_it within its sentence."))
    st.markdown(highlighted_html(record, gettext=_), unsafe_allow_html=True)  # every word is html.escape'd
    if record.meta.get("attention_notice"):
        st.warning(attention_notice(record), icon=":material/blur_on:")
    show_figure(han_heatmap(record, title=_("Word α per sentence, and sentence α"), gettext=_), record,
                key=f"{key}_heatmap", name=name)


def compare_documents(record: AttentionRecord, analyse: Callable[[str], AttentionRecord], default_b: str) -> None:
    """The "Compare two documents" section: document B's attention beside A's, and B − A for
    the sentences and for the words (each word's share of the document, α_i · α_it)."""
    _ = translator()
    text_b = linked_text(st.text_area, _("Document B"), default_b, key="han_text_b", height=90, max_chars=20_000)
    if not text_b.strip():
        st.info(_("Type a document B to compare."))
        return
    with st.spinner(_("Reading document B…")):
        other = checked(analyse, text_b, stop=False)
    if other is None:
        return
    show_analysis(other, key="han_b", name="han-attention-B")
    sentences = row_difference_record(record.query_labels, record.extras["sentence_weights"], other.query_labels,
                                      other.extras["sentence_weights"], mechanism=record.mechanism, row="α_i")
    words = row_difference_record(*document_word_weights(record), *document_word_weights(other),
                                  mechanism=record.mechanism, row="α_i·α_it")
    if not words.meta["shared_key_tokens"]:
        # Every cell of B − A would be blank: say why instead of drawing two empty maps.
        st.info(_("Documents A and B have no word in common, so there is no B − A to draw: the difference is taken "
                  "over the sentences and words both documents have, in order. A Chinese document and an English "
                  "one share none; compare two documents in the same language."), icon=":material/compare_arrows:")
        return
    st.caption(_("Red: B gives more weight; blue: A does. Largest change: {sentence:.3f} for a sentence, {word:.3f} "
                 "for a word's share of the document.").format(sentence=sentences.meta["max_abs_difference"],
                                                                 word=words.meta["max_abs_difference"]))
    if sentences.meta["shared_key_tokens"]:
        show_figure(difference_heatmap(sentences, title=_("Sentence α: B − A"), query_title="",
                                       key_title=_("sentence"), gettext=_), sentences, key="han_cmp_sentences",
                    name="han-difference-sentences")
    else:
        st.caption(_("No sentence of B is a sentence of A word for word, so the sentences' B − A has nothing to draw; "
                     "the words' follows."))
    show_figure(difference_heatmap(words, title=_("Each word's share of the document: B − A"), query_title="",
                                   key_title=_("word"), gettext=_), words, key="han_cmp_words", name="han-difference-words")


def train_your_own() -> None:
    """The "Train your own" section."""
    _ = translator()
    st.markdown(_(
        "Upload a CSV with a **text** column and a **label** column (UTF-8, at most {megabytes} MB, at least two "
        "classes). A small HAN trains here on the same frozen MiniLM vectors as the model above (each word piece as "
        "MiniLM reads it in its sentence), so words your data uses rarely still mean something. Reading the "
        "documents through MiniLM comes first and takes a while for large files."
    ).format(megabytes=MAX_CSV_BYTES // 1_000_000))
    st.download_button(_("Example CSV (generated reviews, sentiment labels)"), example_csv_bytes(),
                       file_name="han-example.csv", mime="text/csv", key="han_example_csv")
    uploaded = st.file_uploader(_("CSV file"), type=["csv", "txt"], key="han_csv", max_upload_size=UPLOAD_LIMIT_MB)
    service = training_service()
    job = _this_sessions_job(service)
    if job is not None and not job.active and job.result is not None:
        st.session_state[MODEL_KEY] = job.result
    model: OwnModel | None = st.session_state.get(MODEL_KEY) or _model_from_url()
    linked = st.query_params.get(URL_KEY, "")
    if model is None and job is None and linked:  # a link to a model this server does not keep (any more)
        st.info(_("The link's model “{model}” is not one this server keeps: models trained here are kept for "
                  "{hours:g} hours. Upload a CSV to train one.").format(model=escape_markdown(linked[:40]),
                                                                       hours=OWN_TTL / 3600), icon=":material/link_off:")
    data = checked(parse_csv, uploaded.getvalue(), stop=False) if uploaded is not None else None
    if job is not None and job.active:
        if uploaded is not None and uploaded.name != job.label:
            st.warning(_("Training on {running} is running: stop it before training on {new}.").format(
                running=escape_markdown(job.label), new=escape_markdown(uploaded.name)), icon=":material/hourglass:")
        _progress(job.id)
        return
    if job is not None and job.status == "failed":
        st.error(_("Training failed: {reason}").format(reason=escape_markdown(job.message)), icon=":material/error:")
    if data is not None:
        _train_controls(service, data, uploaded.name, model)
    if model is not None:
        _show_own_model(model, data.texts[0] if data is not None else "The soup was wonderful. We will come back.")


def _this_sessions_job(service: TrainingService) -> Job | None:
    job_id = st.session_state.get(JOB_KEY) or st.query_params.get(URL_KEY)
    job = service.get(job_id) if job_id else None
    if job is not None:
        st.session_state[JOB_KEY] = job.id
    return job


def _model_from_url() -> OwnModel | None:
    # After a reload (a new session), the job id in the URL finds the model kept on disk.
    model = load_own_model(own_model_path(st.query_params.get(URL_KEY, "")))
    if model is not None:
        st.session_state[MODEL_KEY] = model
    return model


def _train_controls(service: TrainingService, data: LabelledTexts, name: str, model: OwnModel | None) -> None:
    _ = translator()
    st.caption(_("{rows} rows, {count} classes: {classes}").format(rows=len(data.texts), count=len(data.classes),
                                                                   classes=", ".join(data.classes[:10])))
    epochs = option_slider(OWN_EPOCHS, key="han_own_epochs")
    label = _("Train again") if model is not None else _("Train")
    if st.button(label, key="han_train_start", type="primary"):
        if model is not None and not st.session_state.get(CONFIRM_KEY):
            st.session_state[CONFIRM_KEY] = True
        else:
            _submit(service, data, name, epochs)
            return
    if st.session_state.get(CONFIRM_KEY):
        st.warning(_("Training again replaces your model trained on {data}. Download it first if you want to keep "
                     "it.").format(data=escape_markdown(model.data_name)), icon=":material/warning:")
        yes, no = st.columns(2)
        yes.button(_("Replace it: train again"), key="han_train_confirm", on_click=_confirmed, args=(service, data, name, epochs))
        no.button(_("Keep my model"), key="han_train_keep", on_click=st.session_state.pop, args=(CONFIRM_KEY, None))


def _confirmed(service: TrainingService, data: LabelledTexts, name: str, epochs: int) -> None:
    st.session_state.pop(CONFIRM_KEY, None)
    _submit(service, data, name, epochs, rerun=False)


def _submit(service: TrainingService, data: LabelledTexts, name: str, epochs: int, *, rerun: bool = True) -> None:
    def job_fn(progress):
        return train_own(data.texts, data.labels, data.classes, epochs=epochs, data_name=name, progress=progress,
                         save_to=own_model_path(progress.job_id))

    job = service.submit(job_fn, label=name)
    st.session_state[JOB_KEY] = job.id
    st.session_state.pop(MODEL_KEY, None)
    st.query_params[URL_KEY] = job.id
    if rerun:
        st.rerun()


@st.fragment(run_every=1.0)
def _progress(job_id: str) -> None:
    _ = translator()
    service = training_service()
    job = service.get(job_id)
    if job is None or not job.active:
        st.rerun()  # the whole page: the finished model takes this section's place
    place = service.position(job)
    if place:
        st.info(_("Waiting for a free training slot: {place} ahead in line ({limit} train at once on this "
                  "server).").format(place=place, limit=service.limit), icon=":material/hourglass:")
    elif job.total:
        loss = job.metrics.get("loss")
        text = (_("{stage}: step {step}/{total}, loss {loss:.3f}") if loss is not None
                else _("{stage}: step {step}/{total}"))
        st.progress(min(job.step / job.total, 1.0),
                    text=text.format(stage=job.message, step=job.step, total=job.total, loss=loss or 0.0))
    else:
        st.progress(0.0, text=(job.message or _("starting")) + "…")
    st.button(_("Stop training"), key="han_train_stop", on_click=service.cancel, args=(job,))


def _show_own_model(model: OwnModel, example: str) -> None:
    _ = translator()
    losses = ", ".join(f"{x:.3f}" for x in model.losses) or _("none yet")
    done = (_("Your model: trained after {steps} training steps, {epoch} of {epochs} epochs complete (loss per "
              "epoch: {losses}).") if model.finished else
            _("Your model: stopped after {steps} training steps, {epoch} of {epochs} epochs complete (loss per "
              "epoch: {losses})."))
    st.success(done.format(steps=model.steps, epoch=model.epoch, epochs=model.epochs, losses=losses))
    st.caption(_("Trained on {data}: {rows} documents.").format(data=escape_markdown(model.data_name), rows=model.rows)
               + (f" {escape_markdown(model.note.capitalize())}." if model.note else "")
               + " " + _("This link reopens it for a day."))
    st.download_button(
        _("Download the trained model (safetensors)"), CHECKPOINT.to_bytes(model.cfg, model.state, model.info()),
        file_name="han-own.safetensors", mime="application/octet-stream", key="han_own_download",
    )
    predictor = HANPredictor(model.cfg, model.graphdef, model.state)
    text = st.text_area(_("Try your model on a document"), example, key="han_own_text", height=100, max_chars=20_000)
    result = checked(predictor.analyse, text, stop=False)
    if result is None:
        return
    st.metric(_("Prediction of your model"), result.predictions[0], help=_("The class with the highest probability."))
    st.caption(f"p = {float(result.probabilities[0].max()):.2f}")
    show_analysis(result_record(result, mechanism="han-own"), key="han_own", name="han-own-attention")
