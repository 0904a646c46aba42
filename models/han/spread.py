"""How evenly a HAN spreads its sentence attention: shared by the records (a record's meta) and the
quality measures, which import it from here."""

from __future__ import annotations

import numpy as np


def sentence_spread(alpha: np.ndarray) -> float:
    """Returns the normalised entropy of sentence α [S]: 1 = spread evenly, 0 = all on one sentence."""
    alpha = np.asarray(alpha, np.float64)
    if alpha.size < 2:
        return 0.0
    p = alpha[alpha > 0]
    return float(-(p * np.log(p)).sum() / np.log(alpha.size))
