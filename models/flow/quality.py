"""The flow graph measured against what the GPT trained here is known to do (issue 55 §4).

- **Induction route.** On [BOS] + r + r (models/lm/quality.py repeated_probe: random tokens), the route traced
  back from each prediction of the second copy at the default threshold should run through the induction heads
  and the previous-token head that feeds them. The truth set is chosen by the detectors
  (models/heads/detectors.py) on the same inputs, not by the graph: the induction heads are the heads whose
  prefix-matching score is at least INDUCTION_SCORE (half the lm quality GOAL; a content-blind head scores
  about 1/T), the previous-token heads those of a layer below the lowest induction head whose previous-token
  score (Σ A·P / Σ A) is at least PREVIOUS_SCORE. Precision and recall of the route's heads are micro-averaged
  over every (sequence, position) pair.
- **Knock-out agreement.** Spearman's ρ between each head's total edge weight and the loss change when the
  head alone is zeroed (models/lm/knockout.py sweep_runs, the same inputs), both averaged over the sequences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr

from models.flow.decoder import flow, graph_of
from models.flow.graph import DEFAULT_THRESHOLD, FlowGraph, trace
from models.heads import detectors as hd
from models.lm import quality as lm_quality
from models.lm.forward import pad_ids
from models.lm.knockout import sweep_runs
from models.lm.tokenizer import EOT_ID

INDUCTION_SCORE = lm_quality.GOAL / 2
PREVIOUS_SCORE = 0.2
COUNT = 8  # probe sequences


@dataclass(frozen=True)
class InductionRoute:
    """The route's heads against the detectors' truth set, over every second-copy prediction."""

    truth: tuple[tuple[int, int], ...]
    precision: float
    recall: float
    through_both: float  # share of routes holding an induction head and a previous-token head
    threshold: float
    routes: int


def truth_heads(maps: np.ndarray, half: int) -> tuple[set, set]:
    """Returns (induction heads, previous-token heads) as sets of (layer, head) of maps [L, B, H, T, T] on
    [BOS] + r + r rows: the detectors' scores, averaged over the rows, against INDUCTION_SCORE and PREVIOUS_SCORE."""
    matching = hd.prefix_matching_score(maps, half).mean(1)
    previous = hd.head_score(maps, hd.previous_token_pattern(maps.shape[-1])).mean(1)
    induction = {(int(a), int(b)) for a, b in zip(*np.nonzero(matching >= INDUCTION_SCORE))}
    lowest = min((layer for layer, _ in induction), default=0)
    prev = {(int(a), int(b)) for a, b in zip(*np.nonzero(previous >= PREVIOUS_SCORE)) if a < lowest}
    return induction, prev


def probe_graphs(lm, count: int = COUNT) -> tuple[np.ndarray, np.ndarray, list[FlowGraph], np.ndarray, int]:
    """Returns (probe ids [N, T], padded ids, the N graphs, maps [L, N, H, T, T], half) of one jitted flow call."""
    half = lm_quality.probe_half(lm.config.max_positions)
    probe = lm_quality.repeated_probe(lm.config.vocab_size, EOT_ID, half=half, count=count)
    padded, mask = pad_ids(probe, (lm.config.max_positions,))
    out = flow(lm.state, padded, mask, graphdef=lm.graphdef, parts=True)
    tokens = probe.shape[1]
    maps = np.asarray(out["maps"])[..., :tokens, :tokens]
    return probe, (padded, mask), [graph_of(out, tokens, row) for row in range(count)], maps, half


def induction_route(lm, threshold: float = DEFAULT_THRESHOLD, count: int = COUNT) -> InductionRoute:
    """Returns the route's precision and recall against the detectors' heads on the committed kind of probe."""
    probe, _, graphs, maps, half = probe_graphs(lm, count)
    induction, previous = truth_heads(maps, half)
    truth = induction | previous
    hits = chosen = both = routes = 0
    for graph in graphs:
        for position in range(half + 1, 2 * half + 1):
            found = {(int(a), int(b)) for a, b in zip(*np.nonzero(trace(graph, position, threshold).heads))}
            hits, chosen, routes = hits + len(found & truth), chosen + len(found), routes + 1
            both += bool(found & induction) and bool(found & previous)
    return InductionRoute(
        tuple(sorted(truth)), hits / max(chosen, 1), hits / (len(truth) * routes), both / routes, threshold, routes
    )


def knockout_agreement(lm, count: int = COUNT) -> tuple[float, np.ndarray, np.ndarray]:
    """Returns (Spearman ρ, head totals [L, H], loss changes [L, H]) over the probe's sequences."""
    _, (padded, mask), graphs, _, _ = probe_graphs(lm, count)
    changes = []
    for row in range(count):
        _, losses, _, _, plain = sweep_runs(lm.state, padded[row], mask[row], graphdef=lm.graphdef, mode="zero")
        changes.append(np.asarray(losses) - float(plain))
    totals, change = np.mean([g.head_totals for g in graphs], 0), np.mean(changes, 0)
    return float(spearmanr(totals.ravel(), change.ravel()).statistic), totals, change


def report(quick: bool = False) -> str:
    """Returns the Markdown table of both measures on the GPT trained here (checkpoints/lm)."""
    from models.lm.loader import load_folder
    from models.lm.records import default_model_dir

    lm = load_folder(default_model_dir())
    count = 4 if quick else COUNT
    route = induction_route(lm, count=count)
    rho, _, _ = knockout_agreement(lm, count=count)
    names = ", ".join(f"L{a}H{b}" for a, b in route.truth)
    return "\n".join(
        [
            f"Flow graph on the GPT trained here, {count} sequences [BOS] + r + r, {route.routes} predictions traced "
            f"at threshold {route.threshold}; truth set (detectors): {names}",
            "",
            "| figure | value |",
            "|---|---|",
            f"| precision of the route's heads | {route.precision:.3f} |",
            f"| recall of the route's heads | {route.recall:.3f} |",
            f"| routes through an induction head and a previous-token head | {route.through_both:.3f} |",
            f"| Spearman ρ, head total edge weight vs knock-out loss change | {rho:.3f} |",
        ]
    )
