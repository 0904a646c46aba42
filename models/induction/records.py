"""Inference on the committed induction model, and the AttentionRecord builders of the registry.

    get_mechanism("induction").build({"seed": 0, "length": 63})           # [BOS] + r + r, r of 31 tokens
    get_mechanism("induction").build({"text": "k dog m sun k dog", "step": 2400})

return every head's attention as ("layer", "head", "query", "key") = [2, 4, T, T], labels the
tokens, extras "tokens" (ids) and "predicted" (the model's next token at each position), and
in meta each head's scores, the predictions and where the induction head copies from.
`training_record` turns the checkpoint's training log into the record of the curves.
Bad input raises InputError.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from models.heads import detectors as hd
from models.induction import quality, task
from models.induction.checkpoint import CHECKPOINT as FILES
from models.induction.model import apply, pad_tokens
from models.record import AttentionRecord
from models.text import N_, Notice

CURVE_SCORES = ("previous", "duplicate", "prefix_matching")  # the three curves of the page


load_model = FILES.committed  # (cfg, graphdef, params, info), loaded once per process
load_model_snapshots = FILES.committed_snapshots
snapshot_steps = FILES.committed_steps


def model_size() -> tuple[int, int]:
    """Returns (layers, heads per layer) of the committed model."""
    cfg = load_model()[0]
    return cfg.layers, cfg.heads


def head_names() -> list[str]:
    """Returns "L{layer}H{head}" for every head, layer by layer."""
    cfg = load_model()[0]
    return [f"L{layer}H{head}" for layer in range(cfg.layers) for head in range(cfg.heads)]


def induction_head() -> tuple[int, int]:
    """Returns (layer, head) of the head with the highest final prefix-matching score in the log."""
    return quality.phase_change(load_model()[3]["log"]).best_head


def phase_change() -> quality.PhaseChange:
    """Returns the phase change read from the committed training log."""
    return quality.phase_change(load_model()[3]["log"])


def run_sequences(sequences: list[np.ndarray], step: int | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Returns (logits float32 [T, V], attention float32 [L, H, T, T]) per sequence (one padded, jitted call).

    step: a training-step snapshot instead of the final weights.
    """
    graphdef, params = FILES.committed_weights(step)
    logits, weights = apply(graphdef, params, pad_tokens(sequences))
    logits, weights = np.asarray(logits, np.float32), np.asarray(weights, np.float32)
    return [(logits[i, : len(s)], weights[i, :, :, : len(s), : len(s)]) for i, s in enumerate(sequences)]


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.asarray(logits, np.float64) - logits.max(-1, keepdims=True)
    return np.exp(shifted) / np.exp(shifted).sum(-1, keepdims=True)


def sequence_record(mechanism_id: str, ids: np.ndarray, logits: np.ndarray, weights: np.ndarray, *,
                    step: int, half: int | None = None, notices: list[str] | None = None,
                    source: Mapping[str, Any] | None = None) -> AttentionRecord:
    """Returns the record of one sequence: weights [L, H, T, T], the scores and the predictions.

    ids [T]; logits [T, V]; weights [L, H, T, T]; half: the sequence is [BOS] + r + r (adds the
    prefix-matching score).
    """
    labels = task.labels_of(ids)
    probs = _softmax(logits)  # [T, V]
    predicted = probs.argmax(-1)
    scores = quality.head_scores(weights[None], ids[None], half)
    layer, head = induction_head()
    copies_from = weights[layer, head].argmax(-1)  # the key the induction head reads most
    # It copies when that key follows an earlier copy of the query's token and holds the prediction.
    after_copy = hd.induction_pattern(ids)[np.arange(len(ids)), copies_from]
    meta = {
        **dict(source or {}),
        "step": int(step),
        "final": step == int(load_model()[3]["final_step"]),
        "notices": list(notices or []),
        "scores": {quality.SCORE_TITLES[k]: np.round(v, 6).tolist() for k, v in scores.items()},
        "random_baseline": 1.0 / len(ids),
        "predictions": [task.VOCAB[int(p)] for p in predicted],
        "prediction_probabilities": [round(float(probs[t, p]), 6) for t, p in enumerate(predicted)],
        "induction_head": [layer, head],
        "copies_from": copies_from.tolist(),
        "copied": [bool(after_copy[t] and predicted[t] == ids[k]) for t, k in enumerate(copies_from)],
    }
    return AttentionRecord(
        mechanism=mechanism_id, weights=weights, axes=("layer", "head", "query", "key"),
        query_labels=labels, key_labels=labels, meta=meta,
        extras={"tokens": np.asarray(ids, np.int32), "predicted": predicted.astype(np.int32)},
    )


def sequence_of(options: Mapping[str, Any]) -> tuple[np.ndarray, int | None, list[str], dict[str, Any]]:
    """Returns (ids [T], half or None, notices, source meta) of the options: the typed text, or
    without one the generated [BOS] + r + r of seed and length."""
    text = options.get("text")
    if text is not None and text.strip():
        encoded = task.encode_text(text)
        notices = [Notice(N_("the model has {positions} positions: only the first {kept} tokens were read"),
                          positions=task.SEQUENCE_LENGTH, kept=task.SEQUENCE_LENGTH - 1)] if encoded.truncated else []
        return encoded.ids, None, notices, {"source": "text", "text": text[:2_000]}
    length = int(options.get("length") or task.SEQUENCE_LENGTH)
    seed = int(options.get("seed") or 0)
    ids = task.generated_sequence(seed, length)
    half = (len(ids) - 1) // 2
    return ids, half, [], {"source": "generated", "seed": seed, "length": length, "half": half}


def induction_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Returns the record of one input (options: text, seed, length, step; checked by the registry)."""
    ids, half, notices, source = sequence_of(options)
    step = options.get("step")
    (logits, weights), = run_sequences([ids], step)
    used = int(load_model()[3]["final_step"]) if step is None else int(step)
    return sequence_record(mechanism.id, ids, logits, weights, step=used, half=half, notices=notices, source=source)


def training_record(mechanism_id: str = "induction") -> AttentionRecord:
    """Returns the record of the training curves: weights [score, head, step] = the previous-token,
    duplicate-token and prefix-matching score of every head at every logged step; extras: steps, the
    losses (training, first half, repeated half), the share of 4-token repeats copied, snapshot steps;
    meta mixture_from: the last step trained on the original task alone (None: no mixture)."""
    log = load_model()[3]["log"]
    steps = np.asarray(log["step"], np.int64)
    scores = np.stack([np.asarray(log[name], np.float32).reshape(len(steps), -1).T for name in CURVE_SCORES])
    names = head_names()
    loss = np.asarray([np.nan if x is None else x for x in log["loss"]], np.float32)
    return AttentionRecord(
        mechanism=mechanism_id, weights=scores, axes=("score", "head", "step"),
        query_labels=tuple(quality.SCORE_TITLES[s] for s in CURVE_SCORES),
        key_labels=tuple(f"{h} @ {s}" for h in names for s in steps),
        meta={"heads": names, "shown": "head scores over training", "goal": quality.GOAL,
              "baseline": 1.0 / (1 + 2 * quality.HALF), "log_sequences": load_model()[3]["log_sequences"],
              "mixture_from": load_model()[3].get("mixture_from")},
        extras={"steps": steps, "loss": loss, "first_half_loss": np.asarray(log["first_half_loss"], np.float32),
                "repeated_loss": np.asarray(log["repeated_loss"], np.float32),
                "short_copied": np.asarray(log["short_copied"], np.float32),
                "snapshot_steps": np.asarray(snapshot_steps(), np.int64)},
    )


def prediction_rows(record: AttentionRecord) -> list[dict[str, Any]]:
    """Returns one row per position of a sequence record (for the page's table): the token, the
    model's next-token prediction and its probability, and the key the induction head reads."""
    meta, labels = record.meta, record.query_labels
    return [
        {"position": t, "token": labels[t], "predicted next": meta["predictions"][t],
         "probability": f"{meta['prediction_probabilities'][t]:.0%}",
         "induction head reads": f"{k}: {labels[k]}", "copied": "yes" if meta["copied"][t] else ""}
        for t, k in enumerate(meta["copies_from"])
    ]
