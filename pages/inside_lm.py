"""Inside a language model: what it looks at while it writes, the logit lens, head knock-out, the
neuron view and attention sinks, on the GPT trained here or your own GPT-2/Llama folder."""

import streamlit as st

from models.pages import INSIDE_LM
from ui.inside_lm import cached_runner, neuron_view_section, prompt_box
from ui.inside_lm_flow import flow_section
from ui.inside_lm_generate import generate_section
from ui.inside_lm_knockout import knockout_section
from ui.inside_lm_lens import lens_section
from ui.inside_lm_sinks import sinks_section
from ui.links import bound
from ui.markdown import escape_markdown
from ui.model_folder import DECODER_FOLDER, model_folder
from ui.router import start_page
from ui.story import page_header
from ui.widgets import checked

_ = start_page()

page_header(INSIDE_LM, _(
    "Six tools that open up a decoder language model, on the same model and prompt: watch which earlier "
    "tokens each head reads while the model writes, read its intermediate guesses layer by layer (logit "
    "lens), knock heads out and measure what changes, look inside one attention score (neuron view), "
    "find the heads that park their attention on the first token (attention sinks), and follow the "
    "information to a prediction (information flow)."
))

model_dir = model_folder(DECODER_FOLDER, key="inside_model_dir")
prompt = prompt_box()
if not prompt.strip():
    st.info(_("Type a prompt above to see the model at work."), icon=":material/edit:")
    st.stop()

with st.spinner(_("Loading the model…")):
    runner = checked(cached_runner, model_dir)
cfg = runner.config
st.caption(_("{model} ({architecture}, {layers} layers × {heads} heads)").format(
    model=escape_markdown(runner.name) if model_dir else _("the GPT trained here"), architecture=cfg.model_type, layers=cfg.num_layers, heads=cfg.num_heads))

SECTIONS = {
    "generate": _("1 Generate & watch it read"),
    "lens": _("2 Logit lens"),
    "knockout": _("3 Head knock-out"),
    "neuron": _("4 Neuron view"),
    "sinks": _("5 Attention sinks"),
    "flow": _("6 Information flow"),
}
section = bound(st.segmented_control, _("Section"), list(SECTIONS), default="generate", required=True,
                key="inside_section", format_func=SECTIONS.get, label_visibility="collapsed")
if section == "generate":
    generate_section(model_dir, prompt)
elif section == "lens":
    tokens = checked(runner.encode, prompt).labels
    lens_section(model_dir, prompt, tokens)
elif section == "knockout":
    tokens = checked(runner.encode, prompt).labels
    knockout_section(model_dir, prompt, cfg.num_layers, cfg.num_heads, len(tokens))
elif section == "neuron":
    neuron_view_section(runner, prompt)
elif section == "flow":
    flow_section(model_dir, prompt, checked(runner.encode, prompt).labels)
else:
    sinks_section(model_dir, prompt)
