"""Feed-forward attention: one addition sequence, α over time for the paper form and the unbounded score."""

import streamlit as st

from models.feedforward.records import stacked_record, tanh_bound
from models.feedforward.task import MAX_LENGTH
from models.registry import FEEDFORWARD, mechanisms_on_page
from ui.links import bound
from ui.router import ensure_router
from ui.widgets import checked, option_number, option_slider, show_figure
from viz.feedforward import alpha_over_time
from viz.formulas import formula_lines

ensure_router()


st.title("Feed-forward attention")
st.markdown(
    "Raffel & Ellis attend **without a query**: each step t of the sequence is encoded on its own, "
    "h_t = LReLU(W x_t + b), scores itself, e_t = a(h_t), and the softmax of those scores over time "
    "weights the sum c = Σ α_t h_t. The task is the **addition problem**: every step holds a value in "
    "[−1, 1] and a marker; two steps are marked, and the network must output the sum of their values. "
    "Both networks below were trained here; the paper form with one model per length T₀."
)

mechanisms = mechanisms_on_page(FEEDFORWARD.file)
paper = mechanisms[0]
# The formulas stay outside the fragment below: a control reruns the fragment, and a formula inside
# it would be typeset again by the browser on every step (docs/PERFORMANCE.md, "The page").
for column, mechanism in zip(st.columns(len(mechanisms), gap="large"), mechanisms):
    with column:
        st.markdown(f"**{mechanism.name}**")
        st.latex(formula_lines(mechanism.formula))  # one clause per line: half a page is too narrow for one
st.caption(paper.paper)


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
            st.radio, "Marked steps", ["random", "chosen"], key="placement", horizontal=True,
            format_func={"random": "Random (paper: one in the first 10, one before T/2)", "chosen": "Chosen"}.get,
        )
    marked = None
    if placement == "chosen":
        first_col, second_col, _ = st.columns([2, 2, 5])
        first = bound(first_col.number_input, "First marked step", 0, MAX_LENGTH - 1, 3, key="mark_a")
        second = bound(second_col.number_input, "Second marked step", 0, MAX_LENGTH - 1, 42, key="mark_b")
        marked = fit_marks(int(first), int(second), length)
        if marked != (int(first), int(second)):  # e.g. the default 42 on a sequence of 20 steps
            st.caption(f"Steps {int(first)} and {int(second)} do not both fit in T = {length:,} steps "
                       f"(0…{length - 1}); the marks are at {marked[0]} and {marked[1]}.")
    log_y = bound(st.checkbox, "Logarithmic α axis", value=False, key="log_y")

    with st.spinner("Loading the trained models…"):
        records = [checked(m.build, {"length": length, "seed": seed, "marked": marked}) for m in mechanisms]

    # Both models' numbers in one table, one column each: one element to send on every step instead of
    # a subheader, captions and three metrics per model (docs/PERFORMANCE.md, "The page").
    target = records[0].meta["target"]
    # Each model's column: its heading and what it was trained on.
    about = {"paper": ("Paper form", f"trained nearest to T = {length:,}"),
             "unbounded": ("Unbounded score", "trained on T = 50–1,000")}
    metas = [record.meta for record in records]
    lines = [
        "| | " + " | ".join(f"**{about[m.variant][0]}**" for m in mechanisms) + " |",
        "|---|" + "---|" * len(mechanisms),
        "| Model | " + " | ".join(f"`{meta['model']}`, {about[m.variant][1]}" for m, meta in zip(mechanisms, metas)) + " |",
        f"| Prediction (target: the sum, {target:+.3f}) | "
        + " | ".join(f"**{meta['prediction']:+.3f}** ({meta['prediction'] - target:+.3f} off)" for meta in metas) + " |",
        "| α on the two marked steps | " + " | ".join(f"**{meta['mass_on_marked']:.2%}**" for meta in metas) + " |",
        f"| Forward pass, T = {length:,} | " + " | ".join(f"{meta['seconds'] * 1000:.1f} ms" for meta in metas) + " |",
    ]
    st.markdown("\n".join(lines))
    st.caption("Forward passes are jitted and padded to a length bucket; the paper-form row uses the model "
               "trained on the length nearest to T.")

    # Both models' α in one figure, one row each on a shared time axis: every control of the page
    # changes both, and one figure is redrawn faster than two. Its exports hold both rows.
    names = [m.name for m in mechanisms]
    both = stacked_record(records, names)
    fig = alpha_over_time(both, title=f"α over {length:,} steps", row_titles=names, log_y=log_y)
    show_figure(fig, both, key="feedforward", chart_key="alpha", name=f"feedforward-both-T{length}-seed{seed}")

    ceiling = tanh_bound(length)
    st.subheader("Why the paper form is nearly flat")
    st.markdown(
        f"In the paper the score is squashed, e_t = tanh(·) ∈ [−1, 1]. Since α_t ∝ exp(e_t), no step can get more "
        f"than e¹ / e⁻¹ = e² ≈ 7.4 times the weight of any other. Even in the best case — both marked steps at "
        f"e = +1, every other step at e = −1 — a marked step gets at most e / (2e + (T − 2)/e) = **{ceiling:.2g}** "
        f"at T = {length:,}, against 1/T = {1 / length:.2g} for a uniform α. So on long sequences α is a flat line "
        "with two small bumps; the network still solves the task, because the bumps are enough once the output "
        "layers amplify them (the unmarked steps' values average out). The **unbounded** score e_t = wᵀh_t + b "
        "has no ceiling: a gap of about 11 between marked and unmarked scores puts 90 % of the mass on the two "
        "marked steps even at T = 10,000, so its α is two spikes. Tick *Logarithmic α axis* to see both at once."
    )


feedforward_view()
