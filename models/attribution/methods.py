"""Every attribution method written once over an architecture's adapter (models/attribution/adapters.py):
what a method needs from a model (α, value vectors, the stream, a target) comes from the adapter, which reads
its architecture's one forward. Called inside a jit, one example at a time.

Shapes: L layers, H heads, K value heads, Q query rows of a layer, S keys, R target rows, D width.
"""

from __future__ import annotations

from typing import Any, Protocol

import jax
import jax.numpy as jnp

from models.attribution import contributions as c
from models.attribution.gradients import ROW_BATCH, gradient_x_input, integrated_gradients, occlusion

LAYERED = ("norm", "alti", "value-zeroing")  # read per layer from one pass's captures
GRADIENT = ("gradient-x-input", "integrated-gradients", "occlusion")  # of the target, over the input stream
METHODS = (*LAYERED, "chefer", *GRADIENT)


class Adapter(Protocol):
    """What the methods read of one architecture (models/attribution/adapters.py builds one per forward)."""

    num_layers: int
    num_heads: int

    def captures(self) -> dict[str, Any]: ...  # "maps" L × [H, Q, S], "values" L × [K, S, d], "heads", "residual"
    def out_projection(self, layer: int) -> tuple[Any, Any]: ...  # (W_O [H·d, D], b_O [D])
    def value_bias(self, layer: int) -> Any: ...  # [K, d]: the part of every value vector no token changes
    def alti_block(self, layer: int, parts: dict) -> tuple[Any, Any, Any]: ...  # (residual, norm, block output)
    def zeroed(self, layer) -> tuple[Any, Any]: ...  # ([S, Q, D] layer output with key j zeroed, [Q, D] plain)
    def stream(self) -> tuple[Any, Any]: ...  # (the input stream x [S, D], its replacement/baseline)
    def targets(self, x) -> Any: ...  # [R] of the input stream
    def targets_of_maps(self, maps) -> Any: ...  # [R] with α (L × [1, H, S, S]) put in place of each layer's


def norm_based(model: Adapter) -> dict[str, Any]:
    """Returns {"weights": [L, Q, S]}: ‖Σ_h α f(x_j)‖ per layer (Kobayashi et al. 2020)."""
    parts = model.captures()
    layers = [
        c.norm_based(parts["maps"][i], parts["values"][i], model.out_projection(i)[0]) for i in range(model.num_layers)
    ]
    return {"weights": jnp.stack(layers)}


def alti(model: Adapter) -> dict[str, Any]:
    """Returns {"weights": [L, Q, S] rolled out to each layer, "per_layer": [L, Q, S] contributions,
    "reconstruction_error": [L] max |Σ_j T_ij + ε_i − y_i|} (Ferrando et al. 2022)."""
    parts = model.captures()
    layers, errors = [], []
    for i in range(model.num_layers):
        w_o, b_o = model.out_projection(i)
        bias = model.value_bias(i)
        residual, norm, output = model.alti_block(i, parts)
        terms = c.alti_terms(parts["maps"][i], parts["values"][i] - bias[:, None], w_o, residual)
        through = c.bias_through_heads(bias, w_o, model.num_heads) + b_o
        if norm is None:
            rebuilt = jnp.sum(terms, axis=1) + through
        else:
            terms, epsilon = c.through_layer_norm(terms, through, *norm)
            rebuilt = jnp.sum(terms, axis=1) + epsilon
        errors.append(jnp.max(jnp.abs(rebuilt - output)))
        layers.append(c.alti_contributions(terms, output))
    per_layer = jnp.stack(layers)
    return {"weights": c.rollout(per_layer), "per_layer": per_layer, "reconstruction_error": jnp.stack(errors)}


def value_zeroing(model: Adapter) -> dict[str, Any]:
    """Returns {"weights": [L, Q, S]}: per layer, the cosine distance of each token's layer output when key j's
    value vectors are zeroed, rows normalised (Mohebbi et al. 2023). One forward of S rows per layer."""
    return {"weights": jax.lax.map(lambda layer: c.value_zeroing(*model.zeroed(layer)), jnp.arange(model.num_layers))}


def chefer(model: Adapter) -> dict[str, Any]:
    """Returns {"weights": [L, R, S]}: row r of R ← R + mean_h (∇A ⊙ A)⁺ R after each layer, the gradient of
    target r (Chefer et al. 2021), with R = I at the start; row r is query position r."""
    maps = tuple(m[None] for m in model.captures()["maps"])
    y, pullback = jax.vjp(model.targets_of_maps, maps)
    stacked = jnp.stack([m[0] for m in maps])

    def row(r):
        grads = pullback(jnp.zeros_like(y).at[r].set(1.0))[0]
        return c.chefer_relevance(stacked, jnp.stack([g[0] for g in grads]))[:, r]  # [L, S]

    rows = jax.lax.map(row, jnp.arange(y.shape[0]), batch_size=min(ROW_BATCH, y.shape[0]))
    return {"weights": jnp.moveaxis(rows, 0, 1)}


def gradients(model: Adapter, method: str, steps: int = 64) -> dict[str, Any]:
    """Returns {"weights": [R, S], "targets": [R]} (and "completeness_gap" [R] for IG) of the targets over the
    input stream: gradient × input, integrated gradients from the baseline, or occlusion by the replacement."""
    x, baseline = model.stream()
    out: dict[str, Any] = {"targets": model.targets(x)}
    if method == "gradient-x-input":
        out["weights"] = gradient_x_input(model.targets, x)
    elif method == "integrated-gradients":
        out["weights"], out["completeness_gap"] = integrated_gradients(model.targets, x, baseline, steps)
    else:
        out["weights"] = occlusion(model.targets, x, baseline)
    return out


def run(model: Adapter, method: str, steps: int = 64) -> dict[str, Any]:
    """Returns the method's arrays (see each function) of one adapter."""
    if method == "norm":
        return norm_based(model)
    if method == "alti":
        return alti(model)
    if method == "value-zeroing":
        return value_zeroing(model)
    if method == "chefer":
        return chefer(model)
    if method in GRADIENT:
        return gradients(model, method, steps)
    raise ValueError(f"unknown attribution method {method!r}; choose one of {', '.join(METHODS)}")
