"""Feed-forward attention: one addition sequence, α over time for the paper form and the unbounded score."""

import streamlit as st

from models.feedforward.records import nearest_paper_length, stacked_record, tanh_bound
from models.feedforward.task import MAX_LENGTH
from models.registry import FEEDFORWARD, mechanisms_on_page
from ui.legend import FEEDFORWARD_LEGEND, symbol_legend
from ui.links import bound
from ui.router import start_page
from ui.story import page_header
from ui.widgets import checked, option_number, option_slider, show_figure
from viz.feedforward import alpha_over_time
from viz.formulas import formula_lines

_ = start_page()


page_header(FEEDFORWARD, _(
    "Raffel & Ellis attend **without a query**: each step t of the sequence is encoded on its own, "
    "h_t = LReLU(W x_t + b), scores itself, e_t = a(h_t), and the softmax of those scores over time "
    "weights the sum c = Σ α_t h_t. The task is the **addition problem**: every step holds a value in "
    "[−1, 1] and a marker; two steps are marked, and the network must output the sum of their values. "
    "Both networks below were trained here; the paper form with one model per length T₀."
))

mechanisms = mechanisms_on_page(FEEDFORWARD.file)
paper = mechanisms[0]
# The formulas stay outside the fragment below: a control reruns the fragment, and a formula inside
# it would be typeset again by the browser on every step (docs/PERFORMANCE.md, "The page").
for column, mechanism in zip(st.columns(len(mechanisms), gap="large"), mechanisms):
    with column:
        st.markdown(f"**{_(mechanism.name)}**")
        st.latex(formula_lines(mechanism.formula))  # one clause per line: half a page is too narrow for one
symbol_legend(FEEDFORWARD_LEGEND)
st.caption(paper.citation(_))


def fit_marks(first: int, second: int, length: int) -> tuple[int, int]:
    """Returns the two chosen marks moved inside 0…length − 1 where they are past its end, kept apart:
    the boxes take any step up to the longest T, so a shorter sequence moves them rather than failing."""
    top = length - 1
    first, second = min(first, top), min(second, top)
    if first == second:  # both were at or past the end: the later one takes the last step
        first = top - 1 if second == top else first
    return first, second


# The controls and what they change are one fragment (st.fragment): a control reruns it alone, not
# the router, the sidebar, the text and the formulas above.
@st.fragment
def feedforward_view() -> None:
    length_col, seed_col, placement_col = st.columns([3, 2, 4], gap="medium", vertical_alignment="bottom")
    with length_col:
        length = option_slider(paper.option("length"), key="length")
    with seed_col:
        seed = option_number(paper.option("seed"), key="seed")
    with placement_col:
        placement = bound(
            st.radio, _("Marked steps"), ["random", "chosen"], key="placement", horizontal=True,
            format_func={"random": _("Random (paper: one in the first 10, one before T/2)"), "chosen": _("Chosen")}.get,
        )
    marked = None
    if placement == "chosen":
        first_col, second_col, _rest = st.columns([2, 2, 5])
        first = bound(first_col.number_input, _("First marked step"), 0, MAX_LENGTH - 1, 3, key="mark_a")
        second = bound(second_col.number_input, _("Second marked step"), 0, MAX_LENGTH - 1, 42, key="mark_b")
        marked = fit_marks(int(first), int(second), length)
        if marked != (int(first), int(second)):  # e.g. the default 42 on a sequence of 20 steps
            st.caption(_("Steps {first} and {second} do not both fit in T = {length:,} steps (0…{last}); the marks "
                         "are at {mark_a} and {mark_b}.").format(first=int(first), second=int(second), length=length,
                                                                 last=length - 1, mark_a=marked[0], mark_b=marked[1]))
    log_y = bound(st.checkbox, _("Logarithmic α axis"), value=False, key="log_y")

    with st.spinner(_("Loading the trained models…")):
        records = [checked(m.build, {"length": length, "seed": seed, "marked": marked}) for m in mechanisms]

    # Both models' numbers in one table, one column each: one element to send on every step instead of
    # a subheader, captions and three metrics per model (docs/PERFORMANCE.md, "The page").
    target = records[0].meta["target"]
    # Each model's column: its heading and what it was trained on.
    # The model's own name (e.g. paper-T10000) is an internal file name: the table says what it was trained on.
    about = {"paper": (_("Paper form"), _("the model trained on T₀ = {trained:,}, the length nearest to T")),
             "unbounded": (_("Unbounded score"), _("one model trained on T = 50–1,000"))}
    metas = [record.meta for record in records]
    model_row, mass_row = _("Model"), _("α on the two marked steps")  # outside the f-strings: Babel reads them there
    lines = [
        "| | " + " | ".join(f"**{about[m.variant][0]}**" for m in mechanisms) + " |",
        "|---|" + "---|" * len(mechanisms),
        f"| {model_row} | " + " | ".join(about[m.variant][1].format(trained=nearest_paper_length(length))
                                          for m, meta in zip(mechanisms, metas)) + " |",
        "| " + _("Prediction (target: the sum, {target:+.3f})").format(target=target) + " | "
        + " | ".join(_("**{prediction:+.3f}** ({off:+.3f} off)").format(prediction=meta["prediction"],
                                                                          off=meta["prediction"] - target)
                     for meta in metas) + " |",
        f"| {mass_row} | " + " | ".join(f"**{meta['mass_on_marked']:.2%}**" for meta in metas) + " |",
    ]
    st.markdown("\n".join(lines))

    # Both models' α in one figure, one row each on a shared time axis: every control of the page
    # changes both, and one figure is redrawn faster than two. Its exports hold both rows.
    names = [m.name for m in mechanisms]
    both = stacked_record(records, names)
    fig = alpha_over_time(both, title=_("α over {length:,} steps").format(length=length),
                          row_titles=[_(name) for name in names], log_y=log_y, gettext=_)
    show_figure(fig, both, key="feedforward", chart_key="alpha", name=f"feedforward-both-T{length}-seed{seed}")

    ceiling = tanh_bound(length)
    st.subheader(_("Why the paper form is nearly flat"))
    st.markdown(_(
        "In the paper the score is squashed, e_t = tanh(·) ∈ [−1, 1]. Since α_t ∝ exp(e_t), no step can get more "
        "than e¹ / e⁻¹ = e² ≈ 7.4 times the weight of any other. Even in the best case — both marked steps at "
        "e = +1, every other step at e = −1 — a marked step gets at most e / (2e + (T − 2)/e) = **{ceiling:.2g}** "
        "at T = {length:,}, against 1/T = {uniform:.2g} for a uniform α. So on long sequences α is a flat line "
        "with two small bumps; the network still solves the task, because the bumps are enough once the output "
        "layers amplify them (the unmarked steps' values average out). The **unbounded** score e_t = wᵀh_t + b "
        "has no ceiling: a gap of about 11 between marked and unmarked scores puts 90 % of the mass on the two "
        "marked steps even at T = 10,000, so its α is two spikes. Both rows share one α scale: on long sequences, "
        "beside those spikes, the paper form's bumps barely rise above its line. Tick *Logarithmic α axis* to see "
        "both at once."
    ).format(ceiling=ceiling, length=length, uniform=1 / length))


feedforward_view()
