"""The "Inside a language model" page's shared pieces: the model choice, the prompt and the cached runner.

The model is chosen as on the Language model page: the GPT trained here (checkpoints/lm), or a
Hugging Face folder under ATTENTION_LAB_MODEL_ROOT, at most ATTENTION_LAB_MAX_MODEL_BYTES of float32
weights; a folder that is not usable is one line. Loaded models are cached, two at most.
"""

from __future__ import annotations

import streamlit as st

from models.lm.neuron import neuron_parts
from models.lm.records import LMRunner, shared_runner
from models.model_folders import max_model_bytes
from models.registry import Mechanism, get_mechanism
from models.text import Notice
from ui.i18n import translator
from ui.links import linked_text
from ui.neuron import neuron_section
from ui.widgets import checked, show_notice
from viz.formulas import formula_lines

PROMPT_MAX_CHARS = 2000  # a prompt's characters at most, checked again on the server
# A sentence from the documentation's own register, so the GPT trained here has something to go on.
DEFAULT_PROMPT = "The for statement iterates over the items of any sequence, in the order that"


def cached_runner(model_dir: str) -> LMRunner:
    """Returns the loaded model of a folder ("" = the GPT trained here): the process's one copy, which
    the other language-model pages and the lens and knock-out builders share (models/lm/records.py)."""
    return shared_runner(model_dir or None, max_bytes=max_model_bytes())


def prompt_box() -> str:
    """Shows the prompt box (its text travels in the URL); returns the prompt, checked for length."""
    _ = translator()
    prompt = linked_text(st.text_area, _("Prompt"), DEFAULT_PROMPT, key="inside_prompt", height=80,
                         max_chars=PROMPT_MAX_CHARS)
    if not isinstance(prompt, str) or len(prompt) > PROMPT_MAX_CHARS:  # a scripted client's value
        st.error(_("The prompt may have at most {count} characters.").format(count=PROMPT_MAX_CHARS),
                 icon=":material/error:")
        st.stop()
    return prompt


def mechanism_heading(mechanism: Mechanism) -> None:
    """Shows a section's formula and paper (the registry's), as every page shows its mechanism's."""
    st.latex(formula_lines(mechanism.formula))  # one clause per line: a phone's column is too narrow for one
    st.caption(mechanism.citation(translator()))


def neuron_view_section(runner: LMRunner, prompt: str) -> None:
    """Shows section 4: one head's score taken apart (ui/neuron.py) on the page's model and prompt."""
    _ = translator()
    encoding = checked(runner.encode, prompt)
    st.markdown(_("One head's attention score, taken apart: the query vector q of the chosen token and the key "
                  "vectors k of every token (after RoPE where the model has it), their elementwise product q ⊙ k, "
                  "its sum scaled by 1/√d (the score), and the softmax of the scores over the keys the query may "
                  "see, which is the row of the attention map."))
    mechanism_heading(get_mechanism("lm-neuron"))
    show_notice(Notice.join(encoding.notices))
    cfg = runner.config
    neuron_section(lambda layer, head, query: neuron_parts(runner.lm, encoding.ids, layer, head, query),
                   encoding.labels, cfg.num_layers, cfg.num_heads, "inside_neuron", meta={"model": runner.name})
