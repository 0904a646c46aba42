"""The held-out scoreboard of issue 55 §2 on the dates, where the truth is known: for the date Transformer's
cross-attention α and every attribution method that applies to it, and for the Bahdanau model's α, how well each
map points at the source characters each output digit truly comes from (models/explain/dates.py), and how far each
method's ranking agrees with α's.

    .venv/bin/python -m models.quality explain            # N = 200 held-out dates; the table of docs/QUALITY.md
    .venv/bin/python -m models.quality explain --quick    # 25 dates: a smoke run

Measures per method (rows: output digits; the two '-' are not scored): AER (models/explain/measures.py: each digit
linked to as many source characters as its field has), mass on the field (the share of a row's |mass| on the
field's characters), top-k hit (the share of a row's k largest on the field, k = the field's width), and Kendall's
τ between the method's row and α's row, averaged. α: the mean over heads of the last layer's cross-attention.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from models.explain.dates import truth
from models.explain.measures import alignment_error_rate, kendall_tau, mass_on_truth, top_k_hit

COUNT = 200
QUICK = 25
METHODS = ("norm", "value-zeroing", "gradient-x-input", "integrated-gradients", "occlusion")


def _row_measures(maps: Sequence[np.ndarray], examples: Sequence) -> dict[str, float]:
    parts = [truth(e, m.shape[-1]) for m, e in zip(maps, examples)]
    mass, hit = [], []
    for m, (sure, _, rows) in zip(maps, parts):
        mass.extend(mass_on_truth(m, sure)[rows])
        hit.extend(top_k_hit(m, sure)[rows])
    return {
        "aer": alignment_error_rate(maps, [p[0] for p in parts], [p[1] for p in parts], [p[2] for p in parts]),
        "mass": float(np.mean(mass)),
        "top_k": float(np.mean(hit)),
    }


def scoreboard(count: int = COUNT) -> dict[str, dict[str, float]]:
    """Returns {model and method: its measures} over the first `count` held-out dates."""
    from models.attribution.records import attribution_record
    from models.encdec.quality import greedy_outputs, held_out_examples
    from models.encdec.records import weights_at
    from models.seq2seq.records import decode_batch

    examples = held_out_examples(count)
    weights = weights_at(None)
    _, cross = greedy_outputs(*weights, examples)  # [N, L, H, 10, S], one jitted call
    alpha = [cross[i, -1].mean(0)[:, : len(e.source)] for i, e in enumerate(examples)]
    board = {"Transformer: α (last layer, head mean)": {**_row_measures(alpha, examples), "tau": 1.0}}
    for method in METHODS:
        maps = []
        for e in examples:
            record = attribution_record("encdec", method, weights, e.source)
            maps.append(np.asarray(record.weights[-1] if record.axes[0] == "layer" else record.weights))
        taus = [np.nanmean([kendall_tau(m[t], a[t]) for t in np.nonzero(truth(e, m.shape[-1])[2])[0]])
                for m, a, e in zip(maps, alpha, examples)]
        board[f"Transformer: {method}"] = {**_row_measures(maps, examples), "tau": float(np.nanmean(taus))}
    bahdanau = decode_batch("bahdanau", [e.source for e in examples])
    board["Bahdanau: α"] = {**_row_measures([d.weights for d in bahdanau], examples), "tau": 1.0}
    return board


def report(quick: bool = False) -> str:
    """Returns the Markdown scoreboard (docs/QUALITY.md, "explain")."""
    count = QUICK if quick else COUNT
    board = scoreboard(count)
    lines = [f"Held-out dates: the first {count} of models/encdec/quality.py's set (seed 20,180,509).", "",
             "| model: map | AER ↓ | mass on the field ↑ | top-k on the field ↑ | Kendall τ with α |",
             "|---|---|---|---|---|"]
    lines += [f"| {name} | {m['aer']:.3f} | {m['mass']:.3f} | {m['top_k']:.3f} | {m['tau']:.3f} |"
              for name, m in board.items()]
    return "\n".join(lines)
