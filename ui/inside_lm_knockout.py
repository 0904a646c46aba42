"""Section 3 of the "Inside a language model" page: head knock-out.

models/lm/knockout.py knocks chosen heads out (mode "zero": the head's output is set to zero before
the output projection; "first": its attention goes entirely to the first token) and measures the
change in the probability of the model's own top-1 next token at the last position and in the
prompt's mean next-token loss. The all-heads sweep knocks each head out alone, in batched forwards.

A sweep above LARGE_SWEEP head-forwards × tokens asks first (a confirm box that no link ticks);
above the operator's bound (ATTENTION_LAB_MAX_SWEEP) the model refuses it in one line.
"""

from __future__ import annotations

import streamlit as st

from models.lm.knockout import MAX_CHOSEN_HEADS, max_sweep
from models.record import AttentionRecord
from models.registry import get_mechanism
from ui.i18n import translator
from ui.inside_lm import mechanism_heading
from ui.links import bound
from ui.widgets import checked, option_radio, show_figure, show_notice
from viz.lm_lens import MODE_NOTES, knockout_bars, knockout_grid

KNOCKOUT = get_mechanism("lm-knockout")
LARGE_SWEEP = 64 * 128  # head-forwards × tokens above which the page asks before a sweep


@st.cache_resource(show_spinner=False, max_entries=4)  # shared, never mutated
def cached_knockout(model_dir: str, prompt: str, heads: str, mode: str, sweep: bool) -> AttentionRecord:
    """Returns the lm-knockout record of chosen heads ("0.1,1.3") or of the all-heads sweep, its options read
    by the registry."""
    return KNOCKOUT.build({"text": prompt, "model_dir": model_dir or None, "heads": heads, "mode": mode,
                           "sweep": "yes" if sweep else "no"})


def head_name(pair: str) -> str:
    """Returns "L0 H1" for the pair "0.1"."""
    layer, _, head = pair.partition(".")
    return f"L{layer} H{head}"


def knockout_section(model_dir: str, prompt: str, num_layers: int, num_heads: int, tokens: int) -> None:
    """Shows section 3: the chosen heads and mode, their effect, and the all-heads sweep."""
    _ = translator()
    mechanism_heading(KNOCKOUT)
    pairs = [f"{layer}.{head}" for layer in range(num_layers) for head in range(num_heads)]
    default = [pairs[0], f"{num_layers - 1}.0"] if num_layers > 1 else [pairs[0]]
    chosen = bound(st.multiselect, _("Heads to knock out"), pairs, default=default, key="inside_heads",
                   format_func=head_name, max_selections=MAX_CHOSEN_HEADS)
    chosen = [pair for pair in chosen if pair in pairs][:MAX_CHOSEN_HEADS]  # a scripted client's list, checked
    mode = option_radio(KNOCKOUT.option("mode"), key="inside_mode", label=_("How a head is knocked out"),
                        labels=MODE_NOTES, horizontal=True)
    st.caption(_("Knocked out here: {how}. Measured at the last token: the change in the probability of the "
                 "model's own top-1 next token, and in the prompt's mean next-token loss (nats).").format(
        how=_(MODE_NOTES[mode])))
    if chosen:
        with st.spinner(_("Running the model with the heads knocked out…")):
            record = checked(cached_knockout, model_dir, prompt, ",".join(chosen), mode, False)
        show_notice(record.meta.get("notice"))
        show_figure(knockout_bars(record, gettext=_), record, key="inside_knockout", name=f"lm-knockout-{mode}")
    else:
        st.info(_("Choose heads above to knock them out, or run the sweep below."), icon=":material/touch_app:")

    st.subheader(_("All heads, one at a time"))
    work = num_layers * num_heads * tokens
    sweep = bound(st.toggle, _("Knock out every head alone (sweep)"), key="inside_sweep")
    if not sweep:
        return
    if work > max_sweep():
        st.error(_("A sweep of {heads} heads over {tokens} tokens is above this server's bound; use a shorter "
                   "prompt.").format(heads=num_layers * num_heads, tokens=tokens), icon=":material/error:")
        return
    if work > LARGE_SWEEP and not st.checkbox(
            _("This sweep runs {heads} knock-outs over {tokens} tokens and may take a while: run it").format(
                heads=num_layers * num_heads, tokens=tokens), key="inside_sweep_confirm"):
        return
    with st.status(_("Knocking out {heads} heads, one at a time…").format(heads=num_layers * num_heads),
                   expanded=False) as status:
        record = checked(cached_knockout, model_dir, prompt, "", mode, True)
        status.update(label=_("Sweep done: {heads} heads.").format(heads=num_layers * num_heads), state="complete")
    if not chosen:  # said above, with the chosen heads' figure, otherwise
        show_notice(record.meta.get("notice"))
    st.caption(_("Hover a head for the change in the prompt's loss as well."))
    show_figure(knockout_grid(record, gettext=_), record, key="inside_sweep_prob", name=f"lm-knockout-sweep-{mode}")
