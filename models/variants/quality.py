"""Quality of the attention variants trained side by side, measured on held-out sequences (the same for every
variant and seed: tasks.rng(HELD_OUT, task, 0)).

- accuracy: share of scored positions (MQAR's answers, induction's second copy) where the greedy prediction is
  the answer; induction also at 2× and 4× the training length (|r| = 16 and 32: extrapolation);
- cache: float32 bytes each token adds to the KV cache, or the fixed state of linear attention;
- sink rate (Gu et al. 2025, ε = 0.3): the share of heads whose attention on the first token, averaged over the
  queries after it, exceeds ε;
- the largest |activation| of the residual stream and the kurtosis of the last stream's entries (3: Gaussian);
- MQAR's answer/noise ratio (the DIFF Transformer's measure): in the last layer, per head, the attention a query
  gives its key–value pair over the |attention| it gives the other pairs, averaged; the best head's.

`measure` runs the jitted model; `table` and `report` summarise the committed quality.json (mean ± std over the
seeds); `report` also re-measures the committed seed-0 checkpoints.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from models.variants import tasks
from models.variants.model import cache_bytes, run

EVAL_COUNT = 256
SINK_EPSILON = 0.3
METRICS = (
    "accuracy",
    "accuracy_2x",
    "accuracy_4x",
    "kv_bytes_per_token",
    "state_bytes",
    "sink_rate",
    "max_activation",
    "kurtosis",
    "answer_noise",
)


def accuracy(logits: np.ndarray, batch: tasks.Batch) -> float:
    """Returns the share of scored positions whose argmax is the target."""
    hit = np.argmax(np.asarray(logits), axis=-1) == batch.targets
    return float(hit[batch.scored].mean())


def sink_rate(maps: Sequence[np.ndarray], epsilon: float = SINK_EPSILON) -> float:
    """Returns the share of heads (over all layers) whose mean attention on key 0 over queries 1.. exceeds ε.
    maps: per layer [B, H, T, T]."""
    first = np.concatenate([np.asarray(m)[:, :, 1:, 0].mean(axis=(0, 2)) for m in maps])
    return float(np.mean(first > epsilon))


def kurtosis(x: np.ndarray) -> float:
    """Returns E[(x − μ)⁴] / σ⁴ over every entry (3 for a Gaussian)."""
    x = np.asarray(x, np.float64).ravel()
    centred = x - x.mean()
    return float(np.mean(centred**4) / np.mean(centred**2) ** 2)


def answer_noise(weights: np.ndarray, tokens: np.ndarray, pairs: int = tasks.PAIRS) -> float:
    """Returns the best head's ratio (mean attention on the queried key and its value) / (mean |attention| on the
    other pairs' tokens, summed) over MQAR's queries. weights: the last layer's [B, H, T, T]; tokens [B, T] of
    mqar_batch ([BOS] then the pairs from position 1)."""
    weights, tokens = np.asarray(weights, np.float64), np.asarray(tokens)
    count, t = tokens.shape
    context = slice(1, 1 + 2 * pairs)
    keys = tokens[:, 1 : 1 + 2 * pairs : 2]  # [B, pairs]
    on_answer, noise = [], []
    for query in range(1 + 2 * pairs, t, 2):
        match = np.argmax(keys == tokens[:, query][:, None], axis=1)
        answer = np.zeros((count, 2 * pairs), bool)
        answer[np.arange(count), 2 * match] = answer[np.arange(count), 2 * match + 1] = True
        rows = weights[:, :, query, context]  # [B, H, 2·pairs]
        on_answer.append(np.where(answer[:, None], rows, 0).sum(-1).mean(0))
        noise.append(np.where(answer[:, None], 0, np.abs(rows)).sum(-1).mean(0))
    return float(np.max(np.mean(on_answer, 0) / np.maximum(np.mean(noise, 0), 1e-9)))


def held_out(task: str, factor: int = 1) -> tasks.Batch:
    """Returns the held-out batch of a task (induction: |r| = factor · HALF)."""
    gen = tasks.rng(tasks.HELD_OUT, task, 0)
    if task == "mqar":
        return tasks.mqar_batch(gen, EVAL_COUNT)
    return tasks.induction_batch(gen, EVAL_COUNT, half=factor * tasks.HALF)


def measure(graphdef, params, cfg, task: str, *, extrapolate: bool = True) -> dict[str, Any]:
    """Returns the measures of one trained model on its task's held-out sequences (extrapolate: induction at 2× and
    4× the training length too)."""
    batch = held_out(task)
    logits, maps, stream = run(graphdef, params, batch.tokens)
    maps = [np.asarray(m) for m in maps]
    stream = np.asarray(stream)
    per_token, state = cache_bytes(cfg)
    out = {
        "accuracy": round(accuracy(logits, batch), 4),
        "kv_bytes_per_token": per_token,
        "state_bytes": state,
        "sink_rate": round(sink_rate(maps), 4),
        "max_activation": round(float(np.abs(stream).max()), 3),
        "kurtosis": round(kurtosis(stream[-1]), 3),
    }
    if task == "mqar":
        out["answer_noise"] = round(answer_noise(maps[-1], batch.tokens), 3)
    elif extrapolate:
        for factor in tasks.EXTRAPOLATION[1:]:
            longer = held_out(task, factor)
            out[f"accuracy_{factor}x"] = round(accuracy(run(graphdef, params, longer.tokens)[0], longer), 4)
    return out


def table(rows: Sequence[dict[str, Any]]) -> dict[tuple[str, str], dict[str, tuple[float, float, int]]]:
    """Returns {(task, variant): {metric: (mean, std, seeds)}} of the rows of quality.json (std: population)."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        groups.setdefault((row["task"], row["variant"]), []).append(row)
    return {
        key: {
            m: (float(np.mean([r[m] for r in group])), float(np.std([r[m] for r in group])), len(group))
            for m in METRICS
            if m in group[0]
        }
        for key, group in groups.items()
    }


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    """Returns the Markdown tables (one per task) of mean ± std over the seeds."""
    summary = table(rows)
    lines = []
    for task in tasks.TASKS:
        metrics = [m for m in METRICS if any(k[0] == task and m in v for k, v in summary.items())]
        lines += [
            "",
            f"**{task}** (mean ± std over seeds)",
            "",
            "| variant | " + " | ".join(metrics) + " |",
            "|---" * (len(metrics) + 1) + "|",
        ]
        for (t, variant), values in summary.items():
            if t == task:
                cells = [
                    f"{values[m][0]:.3g} ± {values[m][1]:.2g}" if values[m][1] else f"{values[m][0]:.3g}"
                    for m in metrics
                ]
                lines.append(f"| {variant} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def committed_rows() -> list[dict[str, Any]]:
    """Returns the rows of checkpoints/variants/quality.json."""
    from models.variants.checkpoint import TABLE

    return json.loads(TABLE.read_text())


def report(quick: bool = False) -> str:
    """Returns the table of the committed quality.json, after re-measuring the seed-0 checkpoints (quick: two)."""
    from models.variants.checkpoint import CHECKPOINT

    rows = committed_rows()
    seed0 = [r for r in rows if r["seed"] == 0][: 2 if quick else None]
    worst = 0.0
    for row in seed0:
        cfg, graphdef, params, _ = CHECKPOINT.load(CHECKPOINT.path(f"{row['task']}-{row['variant']}"))
        worst = max(worst, abs(measure(graphdef, params, cfg, row["task"])["accuracy"] - row["accuracy"]))
    return f"seed-0 checkpoints re-measured: {len(seed0)}, largest accuracy difference {worst:.4f}\n" + markdown(rows)
