"""Streamlit pieces of the hierarchical-attention page: one document's analysis, and
"train your own" (CSV upload -> in-app training with progress and stop -> inspect -> download).

Training runs one epoch per script run and reruns until done, so the Stop button (which
interrupts the running script) keeps every step trained so far in session state.
"""

from __future__ import annotations

import streamlit as st

from models.han.model import HANConfig, HANPredictor, TrainState, checkpoint_bytes, result_record, train_epochs
from models.han.data import MAX_CSV_BYTES, encode_document, parse_csv
from models.han.train import example_csv_bytes
from models.record import AttentionRecord, InputError
from ui.widgets import export_buttons, show_input_error
from viz.han import han_heatmap, highlighted_html

OWN_STATE = "han_own_model"
MAX_EPOCHS = 10
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
        fig = han_heatmap(record, title="Word α per sentence, and sentence α")
        st.plotly_chart(fig, key=f"{key}_heatmap")
        export_buttons(record, fig, key=f"{key}_heatmap", name=name)


def _own_config(classes: tuple[str, ...]) -> HANConfig:
    # Small, so a few hundred rows train in tens of seconds on two cores.
    return HANConfig(heads=(("label", classes),), word_hidden=24, word_attention=32,
                     sentence_hidden=24, sentence_attention=32)


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
    try:
        data = parse_csv(uploaded.getvalue())
    except InputError as error:
        show_input_error(error)
        return
    st.caption(f"{len(data.texts)} rows, {len(data.classes)} classes: " + ", ".join(data.classes[:10]))
    epochs = st.slider("Epochs", 1, MAX_EPOCHS, 5, key="han_own_epochs")
    signature = (uploaded.name, len(uploaded.getvalue()), epochs)
    own = st.session_state.get(OWN_STATE)
    if st.button("Train", key="han_train_start", type="primary"):
        try:
            docs = [encode_document(t) for t in data.texts]
        except InputError as error:
            show_input_error(error)
            return
        cfg = _own_config(data.classes)
        own = {"cfg": cfg, "train": TrainState.create(cfg, seed=0, learning_rate=1e-2), "docs": docs, "labels": data.labels[:, None],
               "epoch": 0, "epochs": epochs, "steps": 0, "running": True, "signature": signature, "losses": []}
        st.session_state[OWN_STATE] = own
    if own is None:
        return
    if own["running"]:
        # The click interrupts the running epoch; the callback runs before the next script
        # run, so that run shows the model as stopped, without the button.
        st.button("Stop training", key="han_train_stop", on_click=_stop, args=(own,))
        _train_one_epoch(own)
        st.rerun()
    _show_own_model(own, data.texts[0])


def _stop(own: dict) -> None:
    own["running"] = False


def _train_one_epoch(own: dict) -> None:
    epoch, epochs = own["epoch"], own["epochs"]
    bar = st.progress(0.0, text=f"epoch {epoch + 1}/{epochs}: compiling…")

    done_before = own["steps"]

    def on_step(step, total, loss):
        own["steps"] = done_before + step  # a Stop mid-epoch keeps these steps' weights
        bar.progress(step / total, text=f"epoch {epoch + 1}/{epochs}: step {step}/{total}, loss {loss:.3f}")

    losses = train_epochs(own["train"], own["docs"], own["labels"], epochs=1, batch_size=8, seed=epoch, on_step=on_step)
    own["losses"].extend(losses)
    own["epoch"] = epoch + 1
    own["running"] = own["epoch"] < epochs


def _show_own_model(own: dict, example: str) -> None:
    train: TrainState = own["train"]
    done = "stopped" if own["epoch"] < own["epochs"] else "trained"
    losses = ", ".join(f"{x:.3f}" for x in own["losses"]) or "none yet"
    st.success(f"Your model: {done} after {own['steps']} training steps, {own['epoch']} of {own['epochs']} epochs "
               f"complete (loss per epoch: {losses}).")
    predictor = HANPredictor(own["cfg"], train.graphdef, train.state)
    st.download_button(
        "Download the trained model (safetensors)",
        checkpoint_bytes(train.graphdef, train.state, own["cfg"], {"trained_on": "uploaded CSV"}),
        file_name="han-own.safetensors", mime="application/octet-stream", key="han_own_download",
    )
    text = st.text_area("Try your model on a document", example, key="han_own_text", height=100)
    try:
        result = predictor.analyse(text)
    except InputError as error:
        show_input_error(error)
        return
    label = result.predictions[0]
    prob = float(result.probabilities[0].max())
    st.metric("Prediction of your model", label, help="The class with the highest probability.")
    st.caption(f"p = {prob:.2f}")
    show_analysis(result_record(result, mechanism="han-own"), key="han_own", name="han-own-attention")
