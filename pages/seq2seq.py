"""Seq2seq alignment: Bahdanau and Luong attention on date normalisation, trained here."""

import streamlit as st

from models.compare import difference_record
from models.registry import SEQ2SEQ, get_mechanism, mechanisms_on_page
from models.seq2seq.bottleneck import TRAIN_LENGTH, curve_record, read_curve
from models.seq2seq.quality import per_format_rows
from models.seq2seq.records import random_example, snapshot_steps, warm_start_of
from ui.legend import SEQ2SEQ_LEGEND, symbol_legend
from ui.links import bound, linked_text
from ui.router import start_page
from ui.story import page_header
from ui.widgets import checked, option_slider, show_figure, show_notice, view_switch, warm_in_background
from viz.compare import difference_heatmap
from viz.formulas import formula_lines
from viz.i18n_text import N_
from viz.seq2seq import alignment_heatmap, bottleneck_curve, context_bars

_ = start_page()

page_header(SEQ2SEQ, _(
    "A character-level encoder–decoder turns a free-form date into `YYYY-MM-DD`. At every output "
    "character the decoder attends over the input characters; the heatmap shows those weights α. "
    "The models were trained here on generated dates whose true alignment is known: year digits "
    "come from the year, month digits from the month name or number, day digits from the day."
))

mechanisms = {m.id: m for m in mechanisms_on_page(SEQ2SEQ.file)}
warm_in_background(SEQ2SEQ.file)  # the variants not shown yet, so that switching to one does not wait
ids = list(mechanisms)
# The window option as the local variants declare it; the models without attention take none.
WINDOW = next(m.option("window") for m in mechanisms.values() if any(o.name == "window" for o in m.options))


def _name(variant_id: str) -> str:
    return _(mechanisms[variant_id].name)


@st.cache_data(show_spinner=False, max_entries=256)
def _record(variant: str, text: str, window: int, step: int | None):
    mechanism = get_mechanism(variant)
    options = {"text": text, "step": step}
    return mechanism.build(options | ({"window": window} if any(o.name == "window" for o in mechanism.options) else {}))


def _has_alpha(record) -> bool:
    return record.meta.get("attention", True)


def _figure(record, *, truth=None, title: str, height: int | None = None):
    # α as a heatmap; a model without attention has none: its context vector c instead.
    if _has_alpha(record):
        return alignment_heatmap(record, truth=truth, title=title, height=height, gettext=_)
    return context_bars(record.weights, record.key_labels, title=title, height=height, gettext=_)


NO_ALPHA = N_("This model has **no attention**, so there is no α to draw: its decoder reads one context vector "
              "c = q(h_1, …, h_T) — {what} — as its first state and at every output step. The bars are c "
              "(one per unit; the forward GRU's units, then the backward's).")
# What c is, by variant (the record's meta["context"] in the page's words).
CONTEXT_OF = {"no-attention": N_("c = h_T, the encoder's state at the last input character"),
              "no-attention-mean": N_("c = the mean of the encoder's states h_1 … h_T")}



def _draw_random():
    st.session_state.s2s_seed = st.session_state.get("s2s_seed", 0) + 1
    example = random_example(1000 + st.session_state.s2s_seed)
    st.session_state.s2s_text = example.source
    st.session_state.s2s_truth = {"source": example.source, "spans": [list(s) for s in example.spans]}


# The sections below are views, one shown at a time (ui.widgets.view_switch): a control of the page
# redraws the main map and the shown view's figures, not all seven. Sections whose own controls
# change only their own figures are fragments (st.fragment) as well: moving one reruns that section
# alone; the Link boxes read the browser's address, so none goes stale.
VIEWS = {"variants": N_("Compare two variants"), "inputs": N_("Compare two inputs"), "learn": N_("Watch it learn"),
         "local-m": N_("Why local-m fails"), "bottleneck": N_("Why attention: the bottleneck")}  # id (the URL's): name
# The second date's default differs from the first example in one place (the day, 9 → 19), so the
# difference map shows where that change moves the weights.
SECOND_DATE = "Wednesday, May 19, 2018"


@st.fragment
def compare_variants(text: str, window: int, truth) -> None:
    left, right = st.columns(2, gap="medium")
    for column, default, key in ((left, "bahdanau", "a"), (right, "local-m", "b")):
        with column:
            chosen = bound(st.selectbox, _("Variant"), ids, index=ids.index(default), format_func=_name,
                           key=f"s2s_compare_{key}")
            other = _record(chosen, text, window, None)
            st.markdown(_("**Output:** `{output}`").format(output=other.meta["output"]))
            cfig = _figure(other, truth=truth, title=_name(chosen), height=360)
            show_figure(cfig, other, key=f"s2s_compare_{key}", name=f"seq2seq-{chosen}", fit_phone=True)


@st.fragment
def compare_inputs(variant: str, record, window: int) -> None:
    text_b = linked_text(st.text_input, _("Second date (B)"), SECOND_DATE, key="s2s_text_b",
                         max_chars=mechanisms[variant].option("text").max_chars)
    if text_b.strip() and not _has_alpha(record):
        record_b = checked(_record, variant, text_b, window, None)
        st.markdown(_("**Output A:** `{a}` · **Output B:** `{b}`").format(a=record.meta["output"],
                                                                       b=record_b.meta["output"]))
        st.caption(_("This model has no α to compare: pick an attention variant above to see where each input is "
                     "read."))
    elif text_b.strip():
        record_b = checked(_record, variant, text_b, window, None)
        diff = difference_record(record.weights, record_b.weights, (record.query_labels, record.key_labels),
                                 (record_b.query_labels, record_b.key_labels), mechanism=record.mechanism,
                                 meta={"output_a": record.meta["output"], "output_b": record_b.meta["output"]})
        left, right = st.columns(2, gap="medium")
        with left:
            show_figure(alignment_heatmap(record, title=f"A: {record.meta['output']}", height=360, gettext=_), record,
                        key="s2s_cmp_a", name=f"seq2seq-{variant}-A", fit_phone=True)
        with right:
            show_figure(alignment_heatmap(record_b, title=f"B: {record_b.meta['output']}", height=360, gettext=_),
                        record_b,
                        key="s2s_cmp_b", name=f"seq2seq-{variant}-B", fit_phone=True)
        st.caption(_("Largest change {change}. Red: B attends more; blue: A attends more.").format(
            change=f"{diff.meta['max_abs_difference']:.3f}"))
        show_figure(difference_heatmap(diff, title="α_B − α_A", query_title=_("output character"),
                                       key_title=_("input character"), gettext=_),
                    diff, key="s2s_cmp_diff", name=f"seq2seq-{variant}-difference", fit_phone=True)


@st.fragment
def snapshot_section(variant: str, text: str, window: int, truth) -> None:
    steps = snapshot_steps(variant)
    step = bound(st.select_slider, _("Training step"), steps, value=steps[-1], key="s2s_step")
    snap = _record(variant, text, window, step)
    st.markdown(_("**Output at step {step}:** `{output}`").format(step=step, output=snap.meta["output"]))
    if step == 0:
        st.caption(_("Step 0 shows the weights before any training on this task: the warm start the variant begins "
                     "from.") if warm_start_of(variant) else
                   _("Step 0 shows the weights before any training on this task: random weights, so α (or c) is "
                     "noise and the output is not a date yet."))
    what = _("α over the input") if _has_alpha(snap) else _("its one context vector c")
    sfig = _figure(snap, truth=truth, title=_("{variant} at training step {step}: {what}").format(
        variant=_name(variant), step=step, what=what))
    show_figure(sfig, snap, key="s2s_step", name=f"seq2seq-{variant}-step{step}", fit_phone=True)


# The page below its text is one fragment (st.fragment): the date, the variant and the window rerun it,
# not the router, the sidebar and the text above; the views' own fragments sit inside it.
@st.fragment
def seq2seq_view() -> None:
    controls, main = st.columns([1, 2], gap="large")
    with controls:
        text = linked_text(st.text_input, _("Date to normalise (or anything)"), mechanisms[ids[0]].example["text"],
                           key="s2s_text", max_chars=mechanisms[ids[0]].option("text").max_chars)
        st.button(_("Random example"), on_click=_draw_random, icon=":material/casino:", key="s2s_random",
                  help=_("Draws a generated date and overlays its true alignment on the heatmap."))
        variant = bound(st.radio, _("Attention variant"), ids, format_func=_name, key="s2s_variant")
        mechanism = mechanisms[variant]
        st.latex(formula_lines(mechanism.formula))  # the narrow column would cut the local variants' formulas off
        st.caption(mechanism.citation(_))
        window = option_slider(
            WINDOW, label=_("Window half-width D (local variants)"), key="s2s_window",
            help=_("Local attention only looks at input positions [p_t − D, p_t + D], weighted by a Gaussian "
                   "with σ = D/2. The models were trained with D = 3; here D is applied at inference."),
        )
        st.caption(_(mechanism.summary))

    truth_state = st.session_state.get("s2s_truth")
    truth = truth_state["spans"] if truth_state and truth_state["source"] == text else None

    with main:
        record = checked(_record, variant, text, window, None)
        st.markdown(_("**Output:** `{output}`").format(output=record.meta["output"]))
        for notice in record.meta["notices"]:
            show_notice(notice)
        if not _has_alpha(record):
            st.info(_(NO_ALPHA).format(what=_(CONTEXT_OF.get(variant, record.meta["context"]))),
                    icon=":material/block:")
        elif truth is not None:
            st.caption(_("Red squares: the true source span of each output digit (from the generator)."))
        what = _("α over the input") if _has_alpha(record) else _("its one context vector c")
        fig = _figure(record, truth=truth, title=_("{variant}: {what}").format(variant=_name(variant), what=what))
        show_figure(fig, record, key="s2s_main", name=f"seq2seq-{variant}", fit_phone=True)
        # Under the map, not in the controls' column: its three columns need the width (at 280 px the
        # shape column broke 形状 into one character a line).
        symbol_legend(SEQ2SEQ_LEGEND)

    views(variant, record, text, window, truth)


# The views and their switch are a fragment inside seq2seq_view: picking a view reruns only them, not the
# controls and the main map above (docs/PERFORMANCE.md, "The page"). A change above reruns
# seq2seq_view, which calls this again with the new arguments.
@st.fragment
def views(variant: str, record, text: str, window: int, truth) -> None:
    chosen = view_switch(VIEWS, key="s2s_view")
    if chosen == "variants":
        st.markdown(_("Two variants on the same date, side by side (the window D above applies to the local ones)."))
        compare_variants(text, window, truth)

    if chosen == "inputs":
        st.markdown(_(
            "The selected variant (**{variant}**) on the date above (A) and on a second one (B). The "
            "difference α_B − α_A is drawn over the output and input characters both share, in order; a character "
            "only one has gets a blank row or column, marked in its input's colour."
        ).format(variant=_name(variant)))
        compare_inputs(variant, record, window)

    if chosen == "learn":
        teacher = warm_start_of(variant)
        if teacher:
            st.markdown(_(
                "The same input under snapshots of the selected variant taken during training. This variant "
                "starts from the trained **{teacher}** model: at step 0 it has that model's encoder and decoder, "
                "and its own attention is first fitted to copy {teacher}'s weights, so that it does not have to "
                "learn to read the input from scratch; training then refines it."
            ).format(teacher=_name(teacher) if teacher in mechanisms else teacher))
        elif not _has_alpha(record):
            st.markdown(_("The same input under snapshots of the selected variant taken during training: its output "
                          "and its context vector c (this model has no α), from the untrained model at step 0."))
        else:
            st.markdown(_(
                "The same input under snapshots of the selected variant taken during training: step 0 is the "
                "untrained (random) model, whose α is meaningless; the alignment forms as the loss falls."
            ))
        snapshot_section(variant, text, window, truth)

    if chosen == "local-m":
        st.markdown(_(
            "Local-m assumes a **monotonic** alignment: output character t looks at input positions "
            "[t − D, t + D] only (p_t = t). That holds when the input is written year first — "
            "`2018-5-9`, `2018/05/09`, `2018年5月9日` — because the year sits at positions 0–3, exactly "
            "where the output's year digits are. In `9 May 2018` the year sits at positions 6–9, so when the "
            "decoder writes the year (t = 0…3) a window of D = 3 around t cannot reach it: its attention lands "
            "on the day and the month instead (compare the window band with the red true spans after "
            "**Random example**). The output is often still right, but not thanks to attention: the "
            "bidirectional encoder carries the year along the whole sequence, so the states inside the window "
            "already know it. Local-p *predicts* p_t and moves its window towards the field it needs; widen D and "
            "local-m's window starts to reach the year."
        ))
        rows = per_format_rows("local-m")
        if rows:
            st.markdown(_("Measured on held-out generated dates: local-m's exact match, and the share of output "
                          "digits whose true span lies (at least partly) inside the window, per format:"))
            st.dataframe(rows, hide_index=True)

    if chosen == "bottleneck":
        bottleneck_view()


@st.cache_resource(show_spinner=False)
def _curve():
    curve = read_curve()
    return None if curve is None else curve_record(curve)


def bottleneck_view() -> None:
    st.markdown(_(
        "Without attention the decoder reads **one** vector c = h_T for the whole input (Sutskever et al. 2014); "
        "with attention it reads a new mix c_i = Σ_j α_ij h_j at every step. Bahdanau et al. (2015, Fig. 2) "
        "showed the fixed vector failing as sentences grow. The same here: each date is written inside "
        "filler text (`we will meet near the 9 May 2018 old station …`); the model without attention (c = h_T), "
        "Bahdanau and Luong general, with the same encoder, decoder and sizes, each start from their date model and "
        "are trained the same way on inputs of up to {length} characters, and exact match is measured per input length "
        "on held-out text, as in Bahdanau's figure also on inputs longer than any seen in training (shaded)."
    ).format(length=TRAIN_LENGTH))
    record = _curve()
    if record is None:
        st.caption(_("The curve has not been measured yet (python -m models.seq2seq.bottleneck --write)."))
        return
    names = {m: _name(m) for m in record.query_labels if m in mechanisms}
    fig = bottleneck_curve(record.key_labels, dict(zip(record.query_labels, record.weights)), names=names,
                           title=_("Exact match against input length"),
                           first_past_training=record.meta.get("first_past_training"), gettext=_)
    show_figure(fig, record, key="s2s_bottleneck", name="seq2seq-bottleneck")
    claims = record.meta["claims"]
    st.caption(_(
        "{count} held-out inputs per length bucket. On the longest inputs attention beats no attention by "
        "{long_gap} of exact match; on the shortest they differ by {short_gap}. c = h_T must carry the date past "
        "all the text after it; attention reads the date's characters wherever they are."
    ).format(count=record.meta["per_bucket"], long_gap=f"{claims['long_gap']:.0%}",
             short_gap=f"{claims['short_gap']:.0%}"))


seq2seq_view()
