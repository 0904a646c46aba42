"""The measures of the 2019 tests, model-free: divergences, Jain & Wallace's adversary, permuted and uniform α,
and Serrano & Smith's removal counts. The model comes in as a pure function ``output(α̃, item) -> probabilities``
that runs the model's one forward with its α override (models/counterfactual/seq2seq.py, han.py).

Distances: JSD in nats (at most ln 2 ≈ 0.693) between attention distributions, total variation distance (TVD,
½ Σ |p − q|, at most 1) between output distributions; a model with several heads counts its largest TVD.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

OutputFn = Callable[[jax.Array, Any], tuple[jax.Array, ...]]  # (α̃ [T], item) -> probabilities per head


def _plogp_ratio(p, m):
    # p · log(p / m) with 0 · log 0 = 0, written so that gradients stay finite where p = 0. Below the smallest
    # normal float a term counts as 0 (XLA on CPU flushes subnormals to zero; such a term is under 1e-36).
    real = p >= jnp.finfo(jnp.float32).tiny
    safe_p, safe_m = jnp.where(real, p, 1.0), jnp.where(real, m, 1.0)
    return jnp.where(real, p * (jnp.log(safe_p) - jnp.log(safe_m)), 0.0)


def jsd(p, q):
    """Returns the Jensen–Shannon divergence (nats) of distributions p, q over the last axis."""
    m = 0.5 * (p + q)
    return 0.5 * jnp.sum(_plogp_ratio(p, m), -1) + 0.5 * jnp.sum(_plogp_ratio(q, m), -1)


def tvd(p, q):
    """Returns the total variation distance ½ Σ |p − q| over the last axis."""
    return 0.5 * jnp.sum(jnp.abs(p - q), -1)


def heads_tvd(ps: tuple, qs: tuple):
    """Returns the largest TVD over a model's heads (tuples of probability arrays)."""
    return jnp.max(jnp.stack([tvd(p, q) for p, q in zip(ps, qs)]), 0)


def masked_softmax(logits, mask):
    """Returns softmax over the positions where mask is True (exactly 0 elsewhere)."""
    logits = jnp.where(mask, logits, -jnp.inf)
    return jnp.where(mask, jax.nn.softmax(logits, -1), 0.0)


@dataclass(frozen=True)
class AdversarySettings:
    """Jain & Wallace's adversary: maximise JSD(α̃, α) while the output's TVD stays within epsilon.

    α̃ = softmax(logits) over the real positions; Adam (its b2 short, so that the penalty's steep gradients are
    soon forgotten) on −JSD + penalty · max(0, TVD / epsilon − target)^power, from `restarts` starts: log α plus
    Gaussian noise of scale noise · k / restarts, k = 1 … restarts (at α itself the JSD's gradient is 0). The α̃
    returned is the iterate of largest JSD whose TVD is within epsilon (α itself, JSD 0, if none is), so the bound
    holds exactly. The defaults were chosen on 6 held-out dates and 6 held-out reviews (docs/models/counterfactual.md).
    """

    epsilon: float = 0.01
    steps: int = 300
    learning_rate: float = 0.1
    penalty: float = 1.0
    target: float = 0.8
    noise: float = 2.0
    power: float = 2.0
    b2: float = 0.9
    restarts: int = 4


def adversary(output: OutputFn, item: Any, alpha, mask, key, settings: AdversarySettings = AdversarySettings()):
    """Returns (α̃ [T], JSD(α̃, α), output TVD) of one attention distribution α [T] (mask [T]: real positions).
    Pure: jit and vmap it over items, α, masks and keys."""
    base = output(alpha, item)
    log_alpha = jnp.log(jnp.where(mask, jnp.maximum(alpha, 1e-12), 1.0))
    optimizer = optax.adam(settings.learning_rate, b2=settings.b2)

    def measure(logits):
        tilde = masked_softmax(logits, mask)
        return tilde, jsd(tilde, alpha), heads_tvd(output(tilde, item), base)

    def loss(logits):
        _, divergence, distance = measure(logits)
        excess = jnp.maximum(distance / settings.epsilon - settings.target, 0.0)
        return -divergence + settings.penalty * excess**settings.power

    def keep_best(best, found):
        better = (found[2] <= settings.epsilon) & (found[1] > best[1])
        return jax.tree.map(lambda new, old: jnp.where(better, new, old), found, best)

    def step(carry, _):
        logits, state, best = carry
        best = keep_best(best, measure(logits))
        updates, state = optimizer.update(jax.grad(loss)(logits), state)
        return (optax.apply_updates(logits, updates), state, best), None

    def run(scale, key):
        start = jnp.where(mask, log_alpha + scale * jax.random.normal(key, alpha.shape), 0.0)
        best = (alpha, jnp.float32(0.0), jnp.float32(0.0))
        carry = (start, optimizer.init(start), best)
        (logits, _, best), _ = jax.lax.scan(step, carry, None, length=settings.steps)
        return keep_best(best, measure(logits))  # the last iterate, checked like the others

    scales = settings.noise * jnp.arange(1, settings.restarts + 1, dtype=jnp.float32) / settings.restarts
    found = jax.vmap(run)(scales, jax.random.split(key, settings.restarts))
    best = jnp.argmax(jnp.where(found[2] <= settings.epsilon, found[1], -1.0))
    return jax.tree.map(lambda x: x[best], found)


def permutation_orders(lengths: np.ndarray, width: int, count: int, seed: int) -> np.ndarray:
    """Returns int32 [*lengths.shape, count, width]: per entry, `count` orders of its positions that shuffle the
    first `length` (the real ones) and keep the padding in place. α[order] is then a shuffled α."""
    rng = np.random.default_rng(seed)
    flat = np.asarray(lengths).reshape(-1)
    out = np.tile(np.arange(width, dtype=np.int32), (len(flat), count, 1))
    for i, n in enumerate(flat):
        for k in range(count):
            out[i, k, :n] = rng.permutation(int(n))
    return out.reshape(*np.shape(lengths), count, width)


def permutation_tvd(output: OutputFn, item: Any, alpha, orders):
    """Returns the output's TVD [P] under each shuffled α[orders[k]] (orders [P, T]) against the output under α."""
    base = output(alpha, item)
    return jax.vmap(lambda order: heads_tvd(output(alpha[order], item), base))(orders)


def uniform(mask):
    """Returns the uniform distribution over the real positions (mask [..., T])."""
    mask = jnp.asarray(mask, jnp.float32)
    return mask / jnp.sum(mask, -1, keepdims=True)


def removed(alpha, keep):
    """Returns α with the items where keep is 0 removed and the rest renormalised (Serrano & Smith)."""
    kept = alpha * keep
    return kept / jnp.sum(kept, -1, keepdims=True)


def removal_masks(alpha: np.ndarray, length: int) -> np.ndarray:
    """Returns float32 [length − 1, len(alpha)]: row k keeps all but the k + 1 items of highest α (ties: the
    earlier first), so that one item always remains."""
    order = np.argsort(-np.asarray(alpha[:length]), kind="stable")
    keep = np.zeros((max(length - 1, 0), len(alpha)), np.float32)
    keep[:, :length] = 1.0
    for k in range(length - 1):
        keep[k:, order[k]] = 0.0
    return keep


def removals_until_flip(decisions: np.ndarray, original: int) -> int | None:
    """Returns how many items (removed in α order) it takes before the decision differs from `original`:
    decisions[k] is the decision with the top k + 1 removed. None: it never flips while one item remains."""
    flipped = np.flatnonzero(np.asarray(decisions) != original)
    return int(flipped[0]) + 1 if len(flipped) else None


@dataclass(frozen=True)
class Flips:
    """Serrano & Smith's test on one document: does removing the top-α sentence flip the decision, what share of
    the other sentences flips it when removed alone, and how many sentences (α order) until it flips (None:
    never while one remains)."""

    sentences: int
    top_flips: bool
    random_flip_rate: float
    removals_to_flip: int | None


def flips(alpha: np.ndarray, original: int, decide) -> Flips:
    """Returns the Flips of one document from its sentence α [n] (n >= 2), the decision under α and
    decide(α' [K, n]) -> decisions [K] (a model's decision under each sentence α')."""
    alpha = np.asarray(alpha, np.float32)
    n = len(alpha)
    top = int(np.argmax(alpha))
    singles = 1.0 - np.eye(n, dtype=np.float32)  # row j removes sentence j alone
    ordered = removal_masks(alpha, n)  # row k removes the top k + 1
    keeps = np.concatenate([singles, ordered])
    decisions = np.asarray(decide(np.asarray(removed(alpha, keeps))))
    single, by_order = decisions[:n] != original, decisions[n:]
    others = [j for j in range(n) if j != top]
    return Flips(n, bool(single[top]), float(single[others].mean()), removals_until_flip(by_order, original))
