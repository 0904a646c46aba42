"""How well a map [outputs, inputs] (α or an attribution) points at the inputs that truly decide each output.

Every measure takes the map as scores, larger = more responsible, and a truth mask of the same shape. Maps are
compared by the absolute value of their entries (an attribution's sign says "for" or "against", both are
responsibility), each row normalised to sum 1 where a share is asked for.

- alignment_error_rate: Och & Ney (2003), AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|), with S the sure and P the
  possible links (S ⊆ P) and A each output row linked to its k largest inputs, k = the row's number of sure
  links (a field of four characters gets four links: a map on exactly the field scores 0).
- mass_on_truth: the share of each row's |mass| that falls on its true inputs.
- top_k_hit: the share of a row's k largest inputs that are true ones (k = the number of true inputs by default).
- pointing_game: Zhang et al. (2018): the largest entry lies on the truth.
- aopc: DeYoung et al. (2020), ERASER: comprehensiveness (the output's drop when the top q % of inputs are
  deleted) and sufficiency (its drop when only they are kept), averaged over the fractions q.
- kendall_tau: Kendall's τ-b between two methods' rankings of the same inputs (scipy.stats.kendalltau).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats

FRACTIONS = (0.01, 0.05, 0.10, 0.20, 0.50)  # DeYoung et al. (2020)'s bins of deleted inputs


def shares(weights: np.ndarray) -> np.ndarray:
    """Returns |weights| with each row (last axis) normalised to sum 1 (a row of zeros stays zeros)."""
    mass = np.abs(np.asarray(weights, np.float64))
    total = mass.sum(axis=-1, keepdims=True)
    return np.divide(mass, total, out=np.zeros_like(mass), where=total > 0)


def hard_alignment(weights: np.ndarray, rows: np.ndarray | None = None, counts: np.ndarray | None = None) -> np.ndarray:
    """Returns bool [..., T, S]: each output row linked to its `counts` (default 1) inputs of largest |weight|
    (rows False: no link)."""
    mass = np.abs(np.asarray(weights))
    order = np.argsort(-mass, axis=-1, kind="stable")
    k = np.ones(mass.shape[:-1], int) if counts is None else np.maximum(np.asarray(counts), 1)
    links = np.zeros(mass.shape, bool)
    np.put_along_axis(links, order, np.arange(mass.shape[-1]) < k[..., None], axis=-1)
    if rows is not None:
        links &= np.asarray(rows, bool)[..., None]
    return links


def alignment_error_rate(weights: Sequence[np.ndarray], sure: Sequence[np.ndarray], possible: Sequence[np.ndarray],
                         rows: Sequence[np.ndarray] | None = None) -> float:
    """Returns the corpus AER of maps [T, S] (one per example, shapes may differ) against bool sure and possible
    links of the same shapes; rows: bool [T] per example, the outputs that are scored (e.g. not separators)."""
    a_s = a_p = a_n = s_n = 0
    for i, w in enumerate(weights):
        row = None if rows is None else np.asarray(rows[i], bool)
        s = np.asarray(sure[i], bool) if row is None else np.asarray(sure[i], bool) & row[:, None]
        links = hard_alignment(w, row, s.sum(axis=-1))
        p = np.asarray(possible[i], bool) | s
        a_s += int((links & s).sum())
        a_p += int((links & p).sum())
        a_n += int(links.sum())
        s_n += int(s.sum())
    if a_n + s_n == 0:
        raise ValueError("AER of nothing: no links and no sure links")
    return 1.0 - (a_s + a_p) / (a_n + s_n)


def mass_on_truth(weights: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Returns [...]: per row (last axis), the share of its |mass| on the true inputs."""
    return (shares(weights) * np.asarray(truth, bool)).sum(axis=-1)


def top_k_hit(weights: np.ndarray, truth: np.ndarray, k: int | None = None) -> np.ndarray:
    """Returns [...]: per row, the share of its k largest |entries| that are true (k: the row's true count)."""
    mass, truth = np.abs(np.asarray(weights, np.float64)), np.asarray(truth, bool)
    order = np.argsort(-mass, axis=-1, kind="stable")
    counts = truth.sum(axis=-1) if k is None else np.full(mass.shape[:-1], k)
    ranked_true = np.take_along_axis(truth, order, axis=-1)
    within = np.arange(mass.shape[-1]) < counts[..., None]
    return (ranked_true & within).sum(axis=-1) / np.maximum(counts, 1)


def pointing_game(weights: np.ndarray, truth: np.ndarray) -> bool:
    """Returns whether the largest |entry| of a map (any shape) lies on the truth mask."""
    mass = np.abs(np.asarray(weights))
    return bool(np.asarray(truth, bool).reshape(-1)[int(mass.reshape(-1).argmax())])


def deletion_masks(scores: np.ndarray, fractions: Sequence[float] = FRACTIONS,
                   valid: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Returns (comprehensive, sufficient) keep-masks, each bool [len(fractions), S]: for each fraction q, the
    inputs kept when the top ⌈q·n⌉ of the n valid inputs by |score| are deleted, and when only they are kept."""
    mass = np.abs(np.asarray(scores, np.float64))
    valid = np.ones(mass.shape, bool) if valid is None else np.asarray(valid, bool)
    n = int(valid.sum())
    order = np.argsort(np.where(valid, -mass, np.inf), kind="stable")
    top = np.zeros((len(fractions), mass.size), bool)
    for i, q in enumerate(fractions):
        top[i, order[: max(1, int(np.ceil(q * n)))]] = True
    return valid & ~top, valid & top


def aopc(output: Callable[[np.ndarray], np.ndarray], scores: np.ndarray, fractions: Sequence[float] = FRACTIONS,
         valid: np.ndarray | None = None) -> tuple[float, float]:
    """Returns (comprehensiveness, sufficiency) of one input's ranking. output(keep bool [N, S]) -> [N]: the model's
    output (e.g. the predicted class's probability) with only the kept inputs; called once on all masks."""
    valid = np.ones(np.shape(scores), bool) if valid is None else np.asarray(valid, bool)
    comprehensive, sufficient = deletion_masks(scores, fractions, valid)
    values = np.asarray(output(np.concatenate([valid[None], comprehensive, sufficient])), np.float64)
    full, k = values[0], len(fractions)
    return float(np.mean(full - values[1 : 1 + k])), float(np.mean(full - values[1 + k :]))


def kendall_tau(a: np.ndarray, b: np.ndarray) -> float:
    """Returns Kendall's τ-b between two score vectors (|values|; NaN where either is constant)."""
    return float(stats.kendalltau(np.abs(np.ravel(a)), np.abs(np.ravel(b))).statistic)
