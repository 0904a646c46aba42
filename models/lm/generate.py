"""Text generation with a KV cache that keeps every attention map, as one AttentionRecord.

``generate`` runs the whole decode in one jitted function: a ``lax.fori_loop`` over positions whose
body is the one forward (models/lm/forward.py ``decoder``) for one token with the cache as an
argument, writing that token's key and value into fixed-size cache buffers [K, T_b, d] per layer and
its attention rows into [L, H, T_b, T_b]. T_b is a length bucket of prompt + new tokens; positions, the prompt
length, the temperature, top-k and the seed are traced values, so neither a new step nor a new
length inside a bucket compiles again. The prompt runs through the same step, one token at a time.

Row t of a map is the query at token t, which wrote token t + 1; keys above the diagonal get
exactly 0 (their scores are the float32 minimum, whose exp underflows to 0).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models.lm.forward import LENGTH_BUCKETS, Capture, decoder, empty_cache
from models.lm.loader import LoadedLM
from models.lm.records import LMRunner, shared_runner
from models.model_folders import model_dir_option
from models.padding import bucket
from models.record import AttentionRecord, InputError
from models.text import N_, Notice

AXES = ("layer", "head", "query", "key")
MAX_NEW = 256  # tokens one generation writes at most
MAX_TOP_K = 100  # top-k sampling keeps at most this many tokens
MAX_PROMPT_TOKENS = 256  # prompt tokens read at most (the rest is cut, with a notice)
ALTERNATIVES = 5  # the top alternatives kept per step
STEP = Capture(logits=True, maps=True)  # what one decode step hands back
PREFILL = Capture(logits=False, maps=True)  # what reading the prompt hands back


@dataclass(frozen=True)
class Generation:
    """One generation: ids int32 [T], n_prompt, maps float32 [L, H, T, T] (row t wrote token t + 1),
    chosen_prob [T - n_prompt] (the model's probability of each generated token, before temperature
    and top-k), top_ids int32 / top_probs float32 [T - n_prompt, A] (the A most probable tokens)."""

    ids: np.ndarray
    n_prompt: int
    maps: np.ndarray
    chosen_prob: np.ndarray
    top_ids: np.ndarray
    top_probs: np.ndarray


def choose_token(logits, key, temperature, top_k, *, k_max: int):
    """Returns the next token id: argmax when temperature == 0, else a draw from softmax(logits / temperature)
    over the top_k most probable tokens (top_k == 0: all). logits [V]; temperature, top_k traced scalars."""
    # Each branch runs only when chosen (lax.cond): greedy decoding skips the draw, and only top-k sampling pays
    # for the k-th largest logit (XLA:CPU's top_k of 100 over GPT-2's 50,257 logits costs about 8 ms a step).
    def kth_largest():
        return jax.lax.top_k(logits, k_max)[0][jnp.clip(top_k - 1, 0, k_max - 1)]

    def draw():
        kth = jax.lax.cond(top_k > 0, kth_largest, lambda: jnp.array(-jnp.inf, logits.dtype))
        kept = jnp.where(logits < kth, -jnp.inf, logits)
        return jax.random.categorical(key, kept / jnp.maximum(temperature, 1e-6)).astype(jnp.int32)

    return jax.lax.cond(temperature > 0, draw, lambda: jnp.argmax(logits).astype(jnp.int32))


@functools.partial(jax.jit, static_argnames=("graphdef", "alternatives", "prompt_bucket"))
def generate_loop(state, ids, n_prompt, total, temperature, top_k, seed, *, graphdef, alternatives: int = ALTERNATIVES,
                  prompt_bucket: int):
    """Returns (ids [T_b], maps [L, H, T_b, T_b], chosen_prob [T_b], top_ids [T_b, A], top_probs [T_b, A]).

    ids int32 [T_b] hold the prompt in 0..n_prompt-1; positions n_prompt..total-1 are generated.
    Per-position outputs sit at the query that predicted the next token (position t: token t + 1).
    Traced: n_prompt, total, temperature, top_k, seed; one compile per (graphdef, T_b, A, prompt_bucket P_b >= n_prompt).
    """
    model = nnx.merge(graphdef, state)
    cfg = model.config
    t_b = ids.shape[0]
    k_max = min(MAX_TOP_K, cfg.vocab_size)
    # The prompt is read in one call over its own bucket P_b (its rows and its cache; what lies past the prompt is
    # padding, overwritten by the steps or cut off), then one cached step per position from its last token on.
    # The call's shapes do not depend on T_b, so the first tokens of a longer generation stay bit for bit those
    # of a shorter one (ui/inside_lm_generate.py cuts them from the longest).
    prefill = decoder(model, ids[None, :prompt_bucket], cache=empty_cache(cfg, 1, prompt_bucket), capture=PREFILL)
    pad = ((0, 0), (0, 0), (0, t_b - prompt_bucket), (0, 0))
    carry = dict(
        ids=ids, cache=tuple((jnp.pad(k, pad), jnp.pad(v, pad)) for k, v in prefill["cache"]),
        maps=jnp.pad(jnp.stack([m[0] for m in prefill["maps"]]), ((0, 0), (0, 0), *pad[2:3] * 2)),
        chosen=jnp.zeros((t_b,), jnp.float32),
        top_ids=jnp.zeros((t_b, alternatives), jnp.int32), top_probs=jnp.zeros((t_b, alternatives), jnp.float32),
    )
    key = jax.random.PRNGKey(seed)

    def body(position, c):
        step = decoder(model, c["ids"][position][None, None], start=position, cache=c["cache"], capture=STEP)
        logits, rows = step["logits"][0, 0], jnp.stack([m[0, :, 0] for m in step["maps"]])  # [V], [L, H, T_b]
        probs = jax.nn.softmax(logits)
        token = choose_token(logits, jax.random.fold_in(key, position), temperature, top_k, k_max=k_max)
        writes = position + 1 >= n_prompt
        nxt = jnp.minimum(position + 1, t_b - 1)
        new_ids = c["ids"].at[nxt].set(jnp.where(writes & (position + 1 < total), token, c["ids"][nxt]))
        top_p, top_i = jax.lax.top_k(probs, alternatives)
        return dict(
            ids=new_ids, cache=step["cache"],
            maps=jax.lax.dynamic_update_slice(c["maps"], rows[:, :, None], (0, 0, position, 0)),
            chosen=c["chosen"].at[position].set(probs[new_ids[nxt]]),
            top_ids=c["top_ids"].at[position].set(top_i.astype(jnp.int32)),
            top_probs=c["top_probs"].at[position].set(top_p),
        )

    out = jax.lax.fori_loop(n_prompt - 1, total, body, carry)
    return out["ids"], out["maps"], out["chosen"], out["top_ids"], out["top_probs"]


def length_buckets(cfg) -> tuple[int, ...]:
    """Returns the total-length buckets of a config: LENGTH_BUCKETS below its position limit, then the limit."""
    limit = min(cfg.max_positions, MAX_PROMPT_TOKENS + MAX_NEW)
    return tuple(b for b in LENGTH_BUCKETS if b < limit) + (limit,)


def generate(loaded: LoadedLM, prompt_ids, *, max_new: int, temperature: float = 0.0, top_k: int = 0,
             seed: int = 0, alternatives: int = ALTERNATIVES) -> Generation:
    """Returns the Generation of max_new tokens after prompt_ids (int [P], P >= 1).

    Greedy when temperature == 0, else temperature sampling, restricted to the top_k most probable
    tokens when top_k > 0, drawn with jax.random.PRNGKey(seed) folded with each position.
    """
    cfg = loaded.config
    prompt = np.asarray(prompt_ids, np.int32).reshape(-1)
    n_prompt, total = len(prompt), len(prompt) + int(max_new)
    buckets = length_buckets(cfg)
    if n_prompt < 1 or max_new < 1 or total > buckets[-1]:
        raise InputError(f"a prompt of {n_prompt} tokens and {max_new} new ones do not fit: {loaded.name} "
                         f"generates at most {buckets[-1]} tokens in all here")
    t_b = bucket(total, buckets)
    ids = np.zeros(t_b, np.int32)
    ids[:n_prompt] = prompt
    out = generate_loop(loaded.state, ids, np.int32(n_prompt), np.int32(total), np.float32(temperature),
                        np.int32(top_k), np.uint32(seed), graphdef=loaded.graphdef,
                        alternatives=min(alternatives, cfg.vocab_size), prompt_bucket=bucket(n_prompt, buckets))
    ids, maps, chosen, top_ids, top_probs = (np.asarray(a) for a in out)
    new = slice(n_prompt - 1, total - 1)
    return Generation(ids[:total].copy(), n_prompt, np.ascontiguousarray(maps[:, :, :total, :total]),
                      chosen[new].copy(), top_ids[new].copy(), top_probs[new].copy())


# ----------------------------------------------------------------------------- the registry builder


def generation_record(runner: LMRunner, text: str, *, max_new: int, temperature: float = 0.0, top_k: int = 0,
                      seed: int = 0) -> AttentionRecord:
    """Returns the lm-generate record of a prompt: maps [L, H, T, T] over prompt + generated tokens. The settings
    are typed and in the registry's ranges (Mechanism.read); what depends on the model is checked here."""
    settings = {"max_new": max_new, "temperature": temperature, "top_k": top_k, "seed": seed}
    encoding = runner.encode(text)
    notices = list(encoding.notices)
    ids = encoding.ids
    limit = min(MAX_PROMPT_TOKENS, length_buckets(runner.config)[-1] - settings["max_new"])
    if limit < 1:
        raise InputError(Notice(N_("{count} new tokens leave no room for a prompt: {model} reads at most {limit} "
                                   "tokens here"), count=settings["max_new"], model=runner.notice_name,
                                limit=length_buckets(runner.config)[-1]))
    if len(ids) > limit:
        notices.append(Notice(N_("the prompt was cut to its last {kept} of {total} tokens"), kept=limit, total=len(ids)))
        ids = ids[-limit:]
    result = generate(runner.lm, ids, **settings)
    tokenizer = runner.lm.tokenizer
    labels = list(encoding.labels[-len(ids):])
    labels += [tokenizer.decode([int(i)], skip_special_tokens=False).replace("\n", "\\n") or str(int(i))
               for i in result.ids[len(ids):]]
    n = result.n_prompt
    return AttentionRecord(
        mechanism="lm-generate", weights=result.maps, axes=AXES, query_labels=labels, key_labels=labels,
        meta={
            "model": runner.name,
            "architecture": runner.config.model_type,
            "num_layers": runner.config.num_layers, "num_heads": runner.config.num_heads,
            "n_prompt": n, "n_new": len(result.ids) - n,
            "prompt_tokens": f"0-{n - 1}", "generated_tokens": f"{n}-{len(result.ids) - 1}",
            "rows": "row t is the query at token t, which wrote token t + 1",
            "probabilities": "the model's softmax before temperature and top-k",
            **settings,
            "generated_text": tokenizer.decode([int(i) for i in result.ids[n:]], skip_special_tokens=False),
            "notice": Notice.join(notices),
        },
        extras={
            "ids": result.ids, "n_prompt": np.int32(n), "chosen_prob": result.chosen_prob,
            "top_ids": result.top_ids, "top_probs": result.top_probs,
            "top_tokens": np.asarray([[tokenizer.id_to_token(int(i)) or str(int(i)) for i in row]
                                      for row in result.top_ids], dtype=str).reshape(result.top_ids.shape),
        },
    )


def generate_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Registry builder: typed options text, model_dir, max_new, temperature, top_k, seed -> one lm-generate record."""
    return generation_record(shared_runner(model_dir_option(options)), options["text"], max_new=options["max_new"],
                             temperature=options["temperature"], top_k=options["top_k"], seed=options["seed"])


def generate_record_size(mechanism, options: Mapping[str, Any]) -> int:
    """Registry estimate: float32 maps of the whole bucket twice (the loop's buffer and the record)."""
    runner = shared_runner(model_dir_option(options))
    cfg = runner.config
    t_b = length_buckets(cfg)[-1]
    return 8 * cfg.num_layers * cfg.num_heads * t_b * t_b
