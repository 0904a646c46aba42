"""Two inputs compared: α_B − α_A of one attention map, over the tokens the two inputs share.

The token sequences of A and B are aligned with difflib's longest matching blocks: a token
that both have (in the same order) is shared; the others belong to A only or to B only. The
difference has one row per aligned query token and one column per aligned key token; a cell is
α_B − α_A where both its tokens are shared, and NaN (not defined) where either is not.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from models.record import AttentionRecord

ONLY_A, SHARED, ONLY_B = "A only", "shared", "B only"


class Alignment(NamedTuple):
    """A merged token sequence: label, and index into A and into B (−1 where absent)."""

    labels: tuple[str, ...]
    in_a: np.ndarray  # int64 [N]
    in_b: np.ndarray  # int64 [N]

    @property
    def shared(self) -> np.ndarray:
        """Returns bool [N]: the tokens both inputs have."""
        return (self.in_a >= 0) & (self.in_b >= 0)

    def sources(self) -> list[str]:
        """Returns, per token, ONLY_A, SHARED or ONLY_B."""
        return [SHARED if a >= 0 and b >= 0 else ONLY_A if a >= 0 else ONLY_B for a, b in zip(self.in_a, self.in_b)]


def align_tokens(a: Sequence[str], b: Sequence[str]) -> Alignment:
    """Returns the alignment of two token sequences (A's unmatched tokens before B's in a replaced run)."""
    labels: list[str] = []
    in_a: list[int] = []
    in_b: list[int] = []
    matcher = difflib.SequenceMatcher(a=list(a), b=list(b), autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            for i, j in zip(range(a0, a1), range(b0, b1)):
                labels.append(str(a[i]))
                in_a.append(i)
                in_b.append(j)
            continue
        for i in range(a0, a1):
            labels.append(str(a[i]))
            in_a.append(i)
            in_b.append(-1)
        for j in range(b0, b1):
            labels.append(str(b[j]))
            in_a.append(-1)
            in_b.append(j)
    return Alignment(tuple(labels), np.asarray(in_a, np.int64), np.asarray(in_b, np.int64))


def difference_matrix(matrix_a: np.ndarray, matrix_b: np.ndarray, rows: Alignment, cols: Alignment) -> np.ndarray:
    """Returns float32 [R, C]: α_B − α_A on shared (row, column) pairs, NaN elsewhere.

    matrix_a [Ta, Sa], matrix_b [Tb, Sb]; rows aligns the query tokens (Ta with Tb), cols the
    key tokens (Sa with Sb)."""
    matrix_a = np.asarray(matrix_a, np.float64)
    matrix_b = np.asarray(matrix_b, np.float64)
    out = np.full((len(rows.labels), len(cols.labels)), np.nan)
    r, c = np.flatnonzero(rows.shared), np.flatnonzero(cols.shared)
    if r.size and c.size:
        grid = np.ix_(r, c)
        out[grid] = matrix_b[np.ix_(rows.in_b[r], cols.in_b[c])] - matrix_a[np.ix_(rows.in_a[r], cols.in_a[c])]
    return out.astype(np.float32)


def marked(labels: Sequence[str], alignment: Alignment) -> list[str]:
    """Returns the labels with the tokens only one input has marked "(A only)" or "(B only)"."""
    return [label if source == SHARED else f"{label} ({source})" for label, source in zip(labels, alignment.sources())]


def difference_record(matrix_a: np.ndarray, matrix_b: np.ndarray, a_labels: tuple[Sequence[str], Sequence[str]],
                      b_labels: tuple[Sequence[str], Sequence[str]], *, mechanism: str,
                      meta: Mapping[str, Any] | None = None) -> AttentionRecord:
    """Returns the ("query", "key") record of α_B − α_A.

    a_labels, b_labels: (query labels, key labels) of each input. Labels of tokens only one input
    has are marked; extras give, per row and column, the index into A and into B (−1: absent).
    """
    rows = align_tokens(a_labels[0], b_labels[0])
    cols = align_tokens(a_labels[1], b_labels[1])
    diff = difference_matrix(matrix_a, matrix_b, rows, cols)
    defined = diff[np.isfinite(diff)]
    return AttentionRecord(
        mechanism=mechanism, weights=diff, axes=("query", "key"),
        query_labels=tuple(marked(rows.labels, rows)), key_labels=tuple(marked(cols.labels, cols)),
        meta={**dict(meta or {}), "view": "difference B − A", "shared_query_tokens": int(rows.shared.sum()),
              "shared_key_tokens": int(cols.shared.sum()),
              "max_abs_difference": float(np.abs(defined).max()) if defined.size else 0.0},
        extras={"query_in_a": rows.in_a, "query_in_b": rows.in_b, "key_in_a": cols.in_a, "key_in_b": cols.in_b},
    )


def row_difference_record(a_labels: Sequence[str], a_values: np.ndarray, b_labels: Sequence[str],
                          b_values: np.ndarray, *, mechanism: str, row: str,
                          meta: Mapping[str, Any] | None = None) -> AttentionRecord:
    """Returns the one-row ("query", "key") record of B − A for two labelled sequences of weights
    (e.g. a document's words or sentences): aligned like token sequences, NaN where a label is
    only in one of them."""
    return difference_record(np.asarray(a_values, np.float64)[None], np.asarray(b_values, np.float64)[None],
                             ([row], a_labels), ([row], b_labels), mechanism=mechanism, meta=meta)
