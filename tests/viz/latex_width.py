"""How wide KaTeX draws one line of a formula, estimated from its LaTeX, for the checks that a
page's formula lines fit their column (a line wider than the column is cut off on the page).

`latex_px(line)` sums an em width per glyph (capitals 0.75, other letters 0.52, relations with their
spaces 1.35, …; fractions as their wider part, scripts at 0.7, the limits of a sum stacked) and
scales it to KaTeX's \\small at Streamlit's 16 px font (16 × 1.21 × 0.9 ≈ 17.4 px an em). Against
the widths Chromium drew for the 38 lines of CALIBRATION it came out between 0.84 and 1.14 times
the real width. No environments (cases, matrices): a line is one row of math.
"""

from __future__ import annotations

import re

PX_PER_EM = 17.4
_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|[{}^_]|\S")
_SPACES = {r"\quad": 1.0, r"\qquad": 2.0, "\\ ": 0.33, r"\;": 0.28, r"\,": 0.17, r"\!": -0.17, r"\:": 0.22}
_SILENT = {r"\big", r"\Big", r"\bigl", r"\bigr", r"\displaystyle"}
_FUNCTIONS = {r"\tanh", r"\exp", r"\sin", r"\cos", r"\log", r"\max", r"\min"}  # upright, 0.5 em a letter
_RELATIONS = {"=", "<", ">", "+", "-", r"\sim", r"\cdot", r"\approx", r"\leq", r"\geq", r"\to"}
_WORD_COMMANDS = {r"\text", r"\operatorname", r"\mathrm"}

# (px Chromium drew at 1,280 px, line): lines of the tour's formulas, and three that were cut off.
CALIBRATION = (
    (117, r"h_t = f(x_t, h_{t-1})"),
    (222, r"e_{ij} = v_a^\top \tanh(W_a s_{i-1} + U_a h_j)"),
    (199, r"\text{hard: } s_t \sim \operatorname{Categorical}(\alpha_t)"),
    (221, r"a_t(s) = \frac{\exp \operatorname{score}(h_t, \bar h_s)}{\sum_{s'} \exp \operatorname{score}(h_t, \bar h_{s'})}"),
    (283, r"{\scriptsize\text{local-p: }} p_t = S\,\operatorname{sigmoid}(v_p^\top \tanh(W_p h_t))"),
    (92, r"c = \sum_{t=1}^{T} \alpha_t h_t"),
    (171, r"A = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right)"),
    (352, r"\text{decoder: } Q = K = V = X_t,\; M_{ij} = -\infty\ (j > i)"),
    (312, r"p_t = S \cdot \operatorname{sigmoid}(v_p^\top \tanh(W_p h_t))\ \text{(local-p)}"),
    (322, r"\operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V"),
)


def latex_px(line: str) -> float:
    """Returns an estimate, in px, of the width KaTeX draws `line` at (inside formula_lines' \\small)."""
    tokens = ["\\ " if t == "\\\x00" else t for t in _TOKEN.findall(line.replace("\\ ", "\\\x00"))]

    def argument(i: int) -> tuple[float, int]:  # a {group} or one item: (em, next index)
        if i < len(tokens) and tokens[i] == "{":
            width, i = sequence(i + 1)
            return width, i + 1
        return item(i)

    def sequence(i: int) -> tuple[float, int]:  # items up to the closing brace
        width = 0.0
        while i < len(tokens) and tokens[i] != "}":
            w, i = item(i)
            width += w
        return width, i

    def item(i: int) -> tuple[float, int]:
        t = tokens[i]
        if t == "{":
            return argument(i)
        if t in ("^", "_"):
            w, j = argument(i + 1)
            return 0.7 * w, j
        if t in _SPACES:
            return _SPACES[t], i + 1
        if t in _SILENT:
            return 0.0, i + 1
        if t in (r"\left", r"\right"):  # a delimiter grown around a fraction
            return 0.75, i + 2
        if t == r"\sum":  # its limits stack under and over it: as wide as the sign or the widest limit
            j, widths = i + 1, [1.4]
            while j < len(tokens) and tokens[j] in ("^", "_"):
                w, j = argument(j + 1)
                widths.append(0.7 * w)
            return max(widths), j
        if t in _WORD_COMMANDS:
            end = tokens.index("}", i + 2)
            return 0.5 * len("".join(tokens[i + 2:end])) + 0.2, end + 1
        if t == r"\scriptsize":
            w, j = sequence(i + 1)
            return 0.7 * w, j
        if t in (r"\frac", r"\tfrac"):
            top, j = argument(i + 1)
            bottom, j = argument(j)
            return (0.95 if t == r"\frac" else 0.6) * max(top, bottom) + 0.3, j
        if t == r"\sqrt":
            w, j = argument(i + 1)
            return w + 0.9, j
        if t in (r"\bar", r"\tilde", r"\hat", r"\vec"):
            return argument(i + 1)
        if t in _FUNCTIONS:
            return 0.5 * (len(t) - 1), i + 1
        if t in (r"\infty", r"\dots", r"\ldots"):
            return 1.1, i + 1
        if t in _RELATIONS:
            return 1.35, i + 1
        if t in (",", ";"):
            return 0.45, i + 1
        if t in "()[]|/":
            return 0.4, i + 1
        if t.startswith("\\"):  # a symbol: \alpha, \top, \tau, …
            return 0.6, i + 1
        return (0.75 if t.isupper() else 0.52), i + 1

    return PX_PER_EM * sequence(0)[0]
