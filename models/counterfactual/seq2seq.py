"""The 2019 tests on a date model with attention (the committed Bahdanau model by default).

The output of step i is its distribution over output characters under teacher forcing on the model's own greedy
output, with α changed at step i only (the other steps keep their own α): the model's one forward
(models/seq2seq/model.py ``decode``) with its α override. Per input, one jitted call runs, for each of the 10
steps (vmap): Jain & Wallace's adversary, P shuffles of α and the uniform α (measures.py).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models.counterfactual import measures
from models.record import AttentionRecord
from models.seq2seq import task as dates
from models.seq2seq.config import BOS_ID, DIGITS, NO_ATTENTION_VARIANTS, batch_rows, pad_batch
from models.seq2seq.model import apply
from models.seq2seq.quality import HELD_OUT_SEED
from models.seq2seq.records import load_variant

WIDTH = dates.MAX_INPUT_CHARS  # every input is padded to the input cap: one compile
SHUFFLES = 100


@dataclass(frozen=True)
class StepTests:
    """The tests of one input, per output step (numpy; T = the real input length).

    tokens [10] the greedy output; alpha, tilde [10, T] the model's α and the adversary's α̃; jsd, tvd [10]
    (α̃ against α, and the output's TVD under α̃); probs, probs_tilde [10, V] the step's output under α and under
    α̃; shuffled_tvd [10, P] under each shuffle; worst_shuffle [10, T] the shuffle of largest TVD; uniform_tvd [10].
    """

    source: dates.EncodedSource
    tokens: np.ndarray
    alpha: np.ndarray
    tilde: np.ndarray
    jsd: np.ndarray
    tvd: np.ndarray
    probs: np.ndarray
    probs_tilde: np.ndarray
    shuffled_tvd: np.ndarray
    worst_shuffle: np.ndarray
    uniform_tvd: np.ndarray


def _step_output(model, enc, s0, src_len, tgt_in, window, own_alpha):
    """Returns output(α̃ [T], step) -> (p [V],): step's output with α̃ read at that step (teacher forcing)."""

    def output(tilde, step):
        override = own_alpha.at[0, step].set(tilde)
        logits = model.decode(enc, s0, src_len, tgt_in, window, teacher_forcing=True, alpha=override)[0]
        return (jax.nn.softmax(logits[0, step]),)

    return output


@functools.partial(jax.jit, static_argnames=("graphdef", "settings"))
def _tests(graphdef, params, src_ids, src_len, keys, orders, settings: measures.AdversarySettings):
    # One input (src_ids [1, W], src_len [1]); keys [10, 2]; orders [10, P, W].
    model = nnx.merge(graphdef, params)
    window = jnp.float32(model.cfg.window)
    enc, s0 = model.encode(src_ids, src_len)
    dummy = jnp.zeros((1, dates.OUTPUT_LENGTH), jnp.int32)
    logits, alpha, _ = model.decode(enc, s0, src_len, dummy, window, teacher_forcing=False)
    tokens = jnp.argmax(logits, -1).astype(jnp.int32)
    tgt_in = jnp.concatenate([jnp.full((1, 1), BOS_ID, jnp.int32), tokens[:, :-1]], axis=1)
    output = _step_output(model, enc, s0, src_len, tgt_in, window, alpha)
    mask = jnp.arange(src_ids.shape[1]) < src_len[0]
    steps = jnp.arange(dates.OUTPUT_LENGTH)
    own = alpha[0]
    tilde, divergence, distance = jax.vmap(lambda a, i, k: measures.adversary(output, i, a, mask, k, settings))(
        own, steps, keys
    )
    probs = jax.vmap(lambda a, i: output(a, i)[0])(own, steps)
    probs_tilde = jax.vmap(lambda a, i: output(a, i)[0])(tilde, steps)
    shuffled = jax.vmap(lambda a, i, o: measures.permutation_tvd(output, i, a, o))(own, steps, orders)
    even = measures.uniform(mask)
    uniform_tvd = jax.vmap(lambda a, i: measures.heads_tvd(output(even, i), output(a, i)))(own, steps)
    return tokens[0], own, tilde, divergence, distance, probs, probs_tilde, shuffled, uniform_tvd


def run_tests(
    text: str,
    *,
    variant: str = "bahdanau",
    seed: int = 0,
    shuffles: int = SHUFFLES,
    settings: measures.AdversarySettings = measures.AdversarySettings(),
) -> StepTests:
    """Returns the StepTests of one input text (seed: the adversary's start and the shuffles)."""
    if variant in NO_ATTENTION_VARIANTS:
        raise ValueError(f"{variant} has no attention to test")
    _, graphdef, params, _ = load_variant(variant)
    source = dates.encode_source(text)
    src, lengths = pad_batch([source.ids], WIDTH)
    n = len(source.ids)
    orders = measures.permutation_orders(np.full(dates.OUTPUT_LENGTH, n), WIDTH, shuffles, seed)
    keys = jax.random.split(jax.random.key(seed), dates.OUTPUT_LENGTH)
    out = [np.asarray(x) for x in _tests(graphdef, params, src, lengths, keys, orders, settings)]
    tokens, alpha, tilde, divergence, distance, probs, probs_tilde, shuffled, uniform_tvd = out
    worst = orders[np.arange(dates.OUTPUT_LENGTH), shuffled.argmax(-1)]  # [10, W]
    worst_alpha = np.take_along_axis(alpha, worst, axis=-1)
    return StepTests(
        source,
        tokens,
        alpha[:, :n],
        tilde[:, :n],
        divergence,
        distance,
        probs,
        probs_tilde,
        shuffled,
        worst_alpha[:, :n],
        uniform_tvd,
    )


def _output_chars(tokens: np.ndarray) -> tuple[str, ...]:
    return tuple(dates.TARGET_VOCAB[int(t)] for t in tokens)


def _pair_record(
    mechanism: str, tests: StepTests, second: np.ndarray, which: str, meta: dict[str, Any], extras: dict[str, Any]
) -> AttentionRecord:
    # α and a second attention side by side: axes ("which", "query", "key").
    return AttentionRecord(
        mechanism=mechanism,
        weights=np.stack([tests.alpha, second]),
        axes=("which", "query", "key"),
        query_labels=_output_chars(tests.tokens),
        key_labels=tests.source.labels,
        meta={"input": tests.source.text, "output": dates.decode_target(tests.tokens), "which": ["α", which], **meta},
        extras={"which": np.asarray(["alpha", which]), **extras},
    )


def adversary_record(text: str, *, variant: str = "bahdanau", seed: int = 0) -> AttentionRecord:
    """Returns Jain & Wallace's test of one input: weights [2, 10, T] = (α, α̃), α̃ found per step (the others
    keep α); meta: each step's output under α and under α̃ and its probability; extras: jsd, tvd [10]."""
    t = run_tests(text, variant=variant, seed=seed)
    steps = np.arange(dates.OUTPUT_LENGTH)
    under_tilde = t.probs_tilde.argmax(-1)
    meta = {
        "test": "adversarial attention (Jain & Wallace 2019): α̃ as far from α as possible (JSD, nats) while each "
        "step's output stays within TVD 0.01 (teacher forcing, α̃ at that step only)",
        "epsilon": measures.AdversarySettings().epsilon,
        "output_alpha": "".join(_output_chars(t.tokens)),
        "output_tilde": "".join(_output_chars(under_tilde)),
        "probability_alpha": [round(float(x), 6) for x in t.probs[steps, t.tokens]],
        "probability_tilde": [round(float(x), 6) for x in t.probs_tilde[steps, t.tokens]],
        "mean_jsd": round(float(t.jsd.mean()), 6),
        "max_tvd": round(float(t.tvd.max()), 6),
    }
    return _pair_record(variant, t, t.tilde, "alpha_tilde", meta, {"jsd": t.jsd, "tvd": t.tvd})


def permutation_record(text: str, *, variant: str = "bahdanau", seed: int = 0) -> AttentionRecord:
    """Returns the permutation test of one input: weights [2, 10, T] = (α, the shuffle of largest TVD), each
    step shuffled alone; meta: median and max TVD per step; extras: shuffled_tvd [10, P]."""
    t = run_tests(text, variant=variant, seed=seed)
    meta = {
        "test": f"permutation (Jain & Wallace 2019): α shuffled {t.shuffled_tvd.shape[1]} times over the input's "
        "characters at one step; the step's output TVD against the output under α",
        "median_tvd": [round(float(x), 6) for x in np.median(t.shuffled_tvd, -1)],
        "max_tvd": [round(float(x), 6) for x in t.shuffled_tvd.max(-1)],
    }
    return _pair_record(variant, t, t.worst_shuffle, "worst_shuffle", meta, {"shuffled_tvd": t.shuffled_tvd})


def uniform_record(text: str, *, variant: str = "bahdanau", seed: int = 0) -> AttentionRecord:
    """Returns the uniform-α control of one input (Wiegreffe & Pinter 2019): weights [2, 10, T] = (α, uniform);
    extras: uniform_tvd [10] (one step uniform); meta: the greedy output with uniform α at every step."""
    t = run_tests(text, variant=variant, seed=seed)
    even = np.full_like(t.alpha, 1.0 / t.alpha.shape[1])
    meta = {
        "test": "uniform attention (Wiegreffe & Pinter 2019): each step's output TVD with α uniform at that step; "
        "and the output with α uniform at every step",
        "output_uniform": uniform_outputs(variant, [text])[0],
    }
    return _pair_record(variant, t, even, "uniform", meta, {"uniform_tvd": t.uniform_tvd})


def uniform_outputs(variant: str, texts: Sequence[str]) -> list[str]:
    """Returns the greedy outputs with α uniform over the input at every step."""
    _, graphdef, params, _ = load_variant(variant)
    sources = [dates.encode_source(t) for t in texts]
    src, lengths = pad_batch([s.ids for s in sources], WIDTH, batch_rows(len(sources)))
    mask = np.arange(WIDTH)[None, :] < lengths[:, None]
    even = np.repeat((mask / mask.sum(-1, keepdims=True)).astype(np.float32)[:, None], dates.OUTPUT_LENGTH, 1)
    dummy = np.zeros((len(src), dates.OUTPUT_LENGTH), np.int32)
    logits = apply(graphdef, params, src, lengths, dummy, np.float32(3), teacher_forcing=False, alpha=even)[0]
    return [dates.decode_target(row) for row in np.asarray(logits).argmax(-1)[: len(texts)]]


def summary(
    count: int = 50, *, variant: str = "bahdanau", seed: int = HELD_OUT_SEED, held_out: int = 1000
) -> dict[str, Any]:
    """Returns the figures of the three tests over `count` held-out dates (the quality test's generator), per step
    over all 10 steps and over the 8 digit steps: the adversary's JSD (mean, max) and the TVD it kept (max), the
    permutation TVD (median, max), the uniform-α TVD (mean), and the exact match with α uniform at every step
    beside the model's and the no-attention models' (their committed checkpoints), on the first `held_out` dates."""
    from models.seq2seq.quality import evaluate

    examples = dates.generate(max(count, held_out), seed)
    runs = [run_tests(e.source, variant=variant, seed=i) for i, e in enumerate(examples[:count])]
    jsd = np.stack([r.jsd for r in runs])
    tvd = np.stack([r.tvd for r in runs])
    shuffled = np.stack([r.shuffled_tvd for r in runs])
    uniform_tvd = np.stack([r.uniform_tvd for r in runs])
    figures: dict[str, Any] = {"inputs": count, "variant": variant}
    for name, steps in (("all steps", slice(None)), ("digit steps", DIGITS)):
        figures[name] = {
            "jsd_mean": float(jsd[:, steps].mean()),
            "jsd_max": float(jsd[:, steps].max()),
            "tvd_max": float(tvd[:, steps].max()),
            "permutation_tvd_median": float(np.median(shuffled[:, steps])),
            "permutation_tvd_max": float(shuffled[:, steps].max()),
            "uniform_tvd_mean": float(uniform_tvd[:, steps].mean()),
        }
    targets = [e.target for e in examples]
    outputs = uniform_outputs(variant, [e.source for e in examples])
    figures["held_out"] = len(examples)
    figures["exact_match_uniform"] = float(np.mean([o == t for o, t in zip(outputs, targets)]))
    for name in (variant, *NO_ATTENTION_VARIANTS):
        figures[f"exact_match_{name}"] = evaluate(name, examples).exact_match
    return figures
