"""Streamlit pieces of the hierarchical-attention page: one document's analysis, and
"train your own" (CSV upload -> in-app training with progress and stop -> inspect -> download).

Training runs one epoch per script run and reruns until done, so the Stop button (which
interrupts the running script) keeps every step trained so far in session state.
"""

from __future__ import annotations

import streamlit as st

from models.han.checkpoint import checkpoint_bytes
from models.han.data import MAX_CSV_BYTES, parse_csv
from models.han.records import HANPredictor, result_record
from models.han.train import OWN_MAX_EPOCHS, OwnTraining, example_csv_bytes, start_own, train_own_epoch
from models.record import AttentionRecord
from ui.widgets import StreamlitProgress, checked, escape_markdown, show_figure
from viz.han import han_heatmap, highlighted_html

OWN_STATE = "han_own_model"
UPLOAD_LIMIT_MB = 5  # the widget's own cap; parse_csv enforces MAX_CSV_BYTES with a message


def show_analysis(record: AttentionRecord, *, key: str, name: str) -> None:
    """Shows the highlighted text (escaped) beside the sentences × words heatmap, with export."""
    for notice in record.meta.get("notices", []):
        st.info(notice, icon=":material/content_cut:")
    text_col, heat_col = st.columns([1, 2], gap="medium")
    with text_col:
        st.markdown("**The document as the network read it**")
        st.caption("Amber: sentence weight α_i. Blue: word weight α_it within its sentence.")
        st.markdown(highlighted_html(record), unsafe_allow_html=True)  # every word is html.escape'd
    with heat_col:
        show_figure(han_heatmap(record, title="Word α per sentence, and sentence α"), record, key=f"{key}_heatmap",
                    name=name)


def train_your_own() -> None:
    """The "Train your own" section."""
    st.markdown(
        "Upload a CSV with a **text** column and a **label** column (UTF-8, at most "
        f"{MAX_CSV_BYTES // 1_000_000} MB, at least two classes). A small HAN trains here, on MiniLM's frozen "
        "word-piece vectors, so words your data uses rarely still mean something."
    )
    st.download_button("Example CSV (generated reviews, sentiment labels)", example_csv_bytes(),
                       file_name="han-example.csv", mime="text/csv", key="han_example_csv")
    uploaded = st.file_uploader("CSV file", type=["csv", "txt"], key="han_csv", max_upload_size=UPLOAD_LIMIT_MB)
    if uploaded is None:
        return
    data = checked(parse_csv, uploaded.getvalue(), stop=False)
    if data is None:
        return
    st.caption(f"{len(data.texts)} rows, {len(data.classes)} classes: " + ", ".join(data.classes[:10]))
    epochs = st.slider("Epochs", 1, OWN_MAX_EPOCHS, 5, key="han_own_epochs")
    own: OwnTraining | None = st.session_state.get(OWN_STATE)
    if st.button("Train", key="han_train_start", type="primary"):
        own = checked(start_own, data.texts, data.labels, data.classes, epochs=epochs, data_name=uploaded.name,
                      stop=False)
        if own is None:
            return
        st.session_state[OWN_STATE] = own
    if own is None:
        return
    if own.running:
        # The click interrupts the running epoch; the callback runs before the next script
        # run, so that run shows the model as stopped, without the button.
        st.button("Stop training", key="han_train_stop", on_click=own.stop.request)
        train_own_epoch(own, StreamlitProgress(f"epoch {own.epoch + 1}/{own.epochs}"))
        st.rerun()
    _show_own_model(own, data.texts[0])


def _show_own_model(own: OwnTraining, example: str) -> None:
    done = "trained" if own.finished else "stopped"
    losses = ", ".join(f"{x:.3f}" for x in own.losses) or "none yet"
    st.success(f"Your model: {done} after {own.steps} training steps, {own.epoch} of {own.epochs} epochs "
               f"complete (loss per epoch: {losses}).")
    st.caption(f"Trained on {escape_markdown(own.data_name)}: {len(own.docs)} documents.")
    predictor = HANPredictor(own.cfg, own.train.graphdef, own.train.state)
    st.download_button(
        "Download the trained model (safetensors)",
        checkpoint_bytes(own.train.state, own.cfg, {"trained_on": own.data_name}),
        file_name="han-own.safetensors", mime="application/octet-stream", key="han_own_download",
    )
    text = st.text_area("Try your model on a document", example, key="han_own_text", height=100)
    result = checked(predictor.analyse, text, stop=False)
    if result is None:
        return
    label = result.predictions[0]
    prob = float(result.probabilities[0].max())
    st.metric("Prediction of your model", label, help="The class with the highest probability.")
    st.caption(f"p = {prob:.2f}")
    show_analysis(result_record(result, mechanism="han-own"), key="han_own", name="han-own-attention")
