"""viz.formulas: the strings a page typesets or renders as markdown."""

import numpy as np
import pytest

from viz import formulas


def test_matrix_latex_writes_every_entry_row_by_row():
    assert formulas.matrix_latex("w_general", np.array([[1.0, 0.5], [0.0, -1.0]])) == (
        r"\mathtt{w\_general} = \begin{bmatrix} 1.00 & 0.50 \\ 0.00 & -1.00 \end{bmatrix}")
    assert formulas.matrix_latex("v", np.array([0.125, 2.0]), digits=1) == r"\mathtt{v} = \begin{bmatrix} 0.1 & 2.0 \end{bmatrix}"
    assert formulas.matrix_latex("x}{\\evil", np.eye(1)).startswith(r"\mathtt{xevil} =")  # only letters, digits, _
    with pytest.raises(ValueError, match="vector or a matrix"):
        formulas.matrix_latex("t", np.zeros((2, 2, 2)))


def test_formula_lines_puts_each_clause_on_its_own_line():
    assert formulas.formula_lines(r"a = 1,\quad b = 2;\quad c = 3,\ d") == (
        r"\small\begin{gathered}a = 1,\\ b = 2;\\ c = 3,\\ d\end{gathered}")
    assert formulas.formula_lines("x") == r"\small\begin{gathered}x\end{gathered}"


def test_formula_table_is_one_row_of_formulas_under_their_names():
    table = formulas.formula_table([("Dot-product", r"\operatorname{score}(s, h) = s^\top h"), ("Location", r"a = W s"),
                                   ("Norm <b>|x|</b>", r"|x|"), ("<img src=x onerror=alert(1)>", "x")],
                                  row_label="score(s, h) =",
                                  prefix=r"\operatorname{score}(s, h) = ")
    header, rule, row = table.split("\n")
    # Prose escaped (no tag reaches the page), bars kept inside their cell.
    assert header == "|  | Dot-product | Location | Norm &lt;b&gt;&#124;x&#124;&lt;/b&gt; | &lt;img src=x onerror=alert(1)&gt; |"
    assert "<" not in header
    assert rule == "|---|---|---|---|---|"
    # The prefix is named once, in the label cell; a formula without it is shown whole; a bar is \vert.
    assert row == r"| score(s, h) = | ${\small s^\top h}$ | ${\small a = W s}$ | ${\small \vert x\vert }$ | ${\small x}$ |"


def test_legend_table_is_a_table_of_symbols_in_latex_and_escaped_prose():
    table = formulas.legend_table([(r"\alpha_{ij}", "weight <b>|</b>", "a number"), (r"|x|", "cost $5", "n")],
                                   headers=("symbol", "what it is", "shape"))
    header, rule, first, second = table.split("\n")
    assert header == "| symbol | what it is | shape |" and rule == "|---|---|---|"
    assert first == r"| $\alpha_{ij}$ | weight &lt;b&gt;&#124;&lt;/b&gt; | a number |"
    assert second == r"| $\vert x\vert $ | cost \$5 | n |"  # a bar never breaks the row; a $ opens no formula
    with pytest.raises(ValueError):
        formulas.legend_table([("q", "query")], headers=("symbol", "what it is", "shape"))


def test_query_key_notation_renames_the_papers_s_and_h_only():
    cases = {
        r"\operatorname{score}(s, h) = s^\top h": r"\operatorname{score}(q, k) = q^\top k",
        r"\operatorname{score}(s, h) = \frac{s^\top h}{\sqrt{d}}": r"\operatorname{score}(q, k) = \frac{q^\top k}{\sqrt{d}}",
        r"v^\top \tanh(W s + U h)": r"v^\top \tanh(W q + U k)",
        r"\frac{s^\top h}{\lVert s\rVert\,\lVert h\rVert}": r"\frac{q^\top k}{\lVert q\rVert\,\lVert k\rVert}",
        r"a = \operatorname{softmax}(W_a s)": r"a = \operatorname{softmax}(W_a q)",
        r"v_a^\top \tanh\!\left(W_a [s; h]\right)": r"v_a^\top \tanh\!\left(W_a [q; k]\right)",
    }
    for paper, general in cases.items():
        assert formulas.query_key_notation(paper) == general
