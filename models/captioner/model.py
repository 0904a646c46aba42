"""A small Show, Attend and Tell captioner (Xu et al., 2015) for the scene world (models/captioner/task.py).

Encoder: four small convolutions (no pooling, no global layer) turn a 64×64 image into an
8×8 grid of annotation vectors a_i, each with two coordinate channels appended. The receptive
field of a cell is 23×23 pixels, about one object (objects are 12–24 px), so a cell's vector
says what is in and around that cell and nothing about the rest of the image: the decoder has
to look at the right cells to name an object.

Decoder: an LSTM. At step t it scores every cell with Bahdanau's additive score from the
previous state and the word just written, e_ti = vᵀ tanh(W [h_{t−1}; E y_{t−1}] + U a_i)
(the paper uses h_{t−1} alone; with the word the shape step can look for "the red one"),
α_t = softmax(e_t), and reads
- soft (deterministic) attention: z_t = β_t Σ_i α_ti a_i, β_t = σ(f_β(h_{t−1})) (the paper's gate);
- hard (stochastic) attention: z_t = a_s with s ~ Categorical(α_t) (or the argmax cell).
Input of the LSTM: [E y_{t−1}; z_t]; output p(y_t) ∝ exp(L_o tanh(E y_{t−1} + L_h h_t + L_z z_t)).
The LSTM reads only the coordinate channels of z_t (``lstm_reads="where"``); the paper feeds it
all of z_t. With all of it, the state remembers an object's shape from the colour step, and the
attention at the shape word is free to wander; with coordinates only, every colour and shape
word must be read from the cells attended at its own step, while the remembered positions
still give the relations. The initial state is learned (not the mean annotation as in the paper): a mean over all cells
would let the decoder read colours without looking.

Training objectives live in models/captioner/train.py; this file holds the model, pure
jit-able functions over its split state, greedy decoding and strict checkpoint I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models import attention as core
from models.family_checkpoint import FamilyCheckpoint

VARIANTS = ("soft", "hard")

PAD, BOS, EOS = 0, 1, 2
WORDS = ("a", "red", "green", "blue", "yellow", "circle", "square", "triangle",
         "left", "right", "of", "above", "below")  # fmt: skip
VOCAB = ("<pad>", "<bos>", "<eos>", *WORDS)
WORD_ID = {w: i for i, w in enumerate(VOCAB)}
MAX_WORDS = 8  # "a red circle left of a blue square"
STEPS = MAX_WORDS + 1  # + <eos>


@dataclass(frozen=True)
class CaptionerConfig:
    """Sizes of the captioner; frozen, so it doubles as a cache key."""

    variant: str = "soft"
    channels: tuple[int, int, int, int] = (8, 16, 16, 32)
    embed: int = 16
    hidden: int = 64
    attention: int = 32
    vocab: int = len(VOCAB)
    image_size: int = 64
    grid: int = 8
    lstm_reads: str = "where"  # "where": only z_t's coordinates enter the LSTM; "all": as in the paper

    @property
    def annotation(self) -> int:
        return self.channels[-1] + 2  # + (row, col) coordinate channels

    @property
    def cells(self) -> int:
        return self.grid * self.grid


PRESETS = {
    "default": CaptionerConfig(),
    "tiny": CaptionerConfig(channels=(4, 8, 8, 8), embed=8, hidden=16, attention=8),
}


def cell_coordinates(grid: int) -> np.ndarray:
    """Returns float32 [grid², 2]: each cell's (row, col) in [−1, 1], row-major (a constant, not a parameter)."""
    rows, cols = np.meshgrid(np.linspace(-1, 1, grid), np.linspace(-1, 1, grid), indexing="ij")
    return np.stack([rows, cols], -1).reshape(grid * grid, 2).astype(np.float32)


class Encoder(nnx.Module):
    """Image [B, 64, 64, 3] uint8/float -> annotations [B, 64 cells, D] (row-major cells)."""

    def __init__(self, cfg: CaptionerConfig, *, rngs: nnx.Rngs):
        c1, c2, c3, c4 = cfg.channels
        self.conv1 = nnx.Conv(3, c1, (3, 3), strides=2, rngs=rngs)  # 64 -> 32, RF 3
        self.conv2 = nnx.Conv(c1, c2, (3, 3), strides=2, rngs=rngs)  # 32 -> 16, RF 7
        self.conv3 = nnx.Conv(c2, c3, (3, 3), strides=1, rngs=rngs)  # 16 -> 16, RF 15
        self.conv4 = nnx.Conv(c3, c4, (3, 3), strides=2, rngs=rngs)  # 16 -> 8,  RF 23

    def __call__(self, images):
        x = jnp.asarray(images, jnp.float32) / 127.5 - 1.0
        x = jax.nn.relu(self.conv1(x))
        x = jax.nn.relu(self.conv2(x))
        x = jax.nn.relu(self.conv3(x))
        x = jax.nn.relu(self.conv4(x))  # [B, g, g, C]
        b, g, _, c = x.shape
        coords = jnp.broadcast_to(cell_coordinates(g), (b, g * g, 2))
        return jnp.concatenate([x.reshape(b, g * g, c), coords], axis=-1)  # [B, L, D]


class Captioner(nnx.Module):
    """Show, Attend and Tell: Encoder + additive attention + LSTM decoder."""

    def __init__(self, cfg: CaptionerConfig, *, rngs: nnx.Rngs):
        self.cfg = cfg
        d, h, a = cfg.annotation, cfg.hidden, cfg.attention
        self.encoder = Encoder(cfg, rngs=rngs)
        self.embed = nnx.Embed(cfg.vocab, cfg.embed, rngs=rngs)
        init = nnx.initializers.normal(0.1)
        self.att_w = nnx.Param(init(rngs.params(), (a, h + cfg.embed)))  # W: [h_{t-1}; E y_{t-1}] -> attention
        self.att_u = nnx.Param(init(rngs.params(), (a, d)))  # U: annotation -> attention space
        self.att_v = nnx.Param(init(rngs.params(), (a,)))
        self.gate = nnx.Linear(h, 1, rngs=rngs)  # β_t
        self.lstm = nnx.LSTMCell(cfg.embed + d, h, rngs=rngs)
        self.h0 = nnx.Param(jnp.zeros((h,)))
        self.c0 = nnx.Param(jnp.zeros((h,)))
        self.out_h = nnx.Linear(h, cfg.embed, rngs=rngs)
        self.out_z = nnx.Linear(d, cfg.embed, use_bias=False, rngs=rngs)
        self.out = nnx.Linear(cfg.embed, cfg.vocab, rngs=rngs)

    def initial_carry(self, batch: int):
        hid = self.cfg.hidden
        return (jnp.broadcast_to(self.c0[...], (batch, hid)), jnp.broadcast_to(self.h0[...], (batch, hid)))

    def attend(self, h, prev_word, annotations, temperature=1.0):
        """Returns α [B, L] from the state h [B, hidden] and the previous word [B] over annotations [B, L, D]."""
        query = jnp.concatenate([h, self.embed(prev_word)], axis=-1)[:, None, :]  # [B, 1, hidden + E]
        scores = core.additive_scores(query, annotations, self.att_w[...], self.att_u[...], self.att_v[...])
        return core.masked_softmax(scores[:, 0, :], None, temperature)

    def step(self, carry, prev_word, context):
        """Returns (new carry, logits [B, V]): one LSTM step given the context z_t [B, D]."""
        e = self.embed(prev_word)  # [B, E]
        beta = jax.nn.sigmoid(self.gate(carry[1]))  # [B, 1]
        if self.cfg.lstm_reads == "where":
            # The LSTM learns where it looked (the coordinate channels), not what it saw:
            # a cell's content reaches a word only through L_z z_t at that word's own step.
            context_in = jnp.concatenate([jnp.zeros_like(context[:, :-2]), context[:, -2:]], axis=-1)
        else:
            context_in = context
        carry, h = self.lstm(carry, jnp.concatenate([e, beta * context_in], axis=-1))
        logits = self.out(jnp.tanh(e + self.out_h(h) + self.out_z(context)))
        return carry, logits


# ------------------------------------------------------------------ pure functions


# checkpoints/captioner/<variant>.safetensors: the parameters, the config and the training facts
# (steps, seconds, λs, seed, where it started from).
CHECKPOINT = FamilyCheckpoint("captioner", CaptionerConfig, Captioner)


def teacher_forced(model: Captioner, images, inputs, key=None, soft_share: float = 0.5):
    """Returns (logits [B, T, V], alphas [B, T, L], locations [B, T], used_soft [B]).

    inputs int [B, T] (<bos> then the caption words). Soft variant: context = Σ α a.
    Hard variant: a location s_t ~ Categorical(α_t) per step (key required); as in the paper,
    a random `soft_share` of the examples use the expectation Σ α a instead (used_soft).
    """
    annotations = model.encoder(images)  # [B, L, D]
    batch = annotations.shape[0]
    hard = model.cfg.variant == "hard"
    key = jax.random.key(0) if key is None else key
    k_mix, k_loc = jax.random.split(key)
    used_soft = jax.random.uniform(k_mix, (batch,)) < soft_share if hard else jnp.ones((batch,), bool)
    step_keys = jax.random.split(k_loc, inputs.shape[1])

    def body(carry, xs):
        word, k = xs
        alpha = model.attend(carry[1], word, annotations)
        soft_z = jnp.einsum("bl,bld->bd", alpha, annotations)
        if hard:
            loc = jax.random.categorical(k, jnp.log(alpha + 1e-12), axis=-1)
            hard_z = jnp.take_along_axis(annotations, loc[:, None, None], axis=1)[:, 0]
            z = jnp.where(used_soft[:, None], soft_z, hard_z)
        else:
            loc = jnp.argmax(alpha, axis=-1)
            z = soft_z
        carry, logits = model.step(carry, word, z)
        return carry, (logits, alpha, loc)

    _, (logits, alphas, locs) = jax.lax.scan(body, model.initial_carry(batch), (inputs.T, step_keys))
    return (jnp.swapaxes(logits, 0, 1), jnp.swapaxes(alphas, 0, 1), locs.T, used_soft)


def greedy_decode(model: Captioner, images, key, mode: str = "soft", temperature=1.0):
    """Returns (tokens [B, STEPS], alphas [B, STEPS, L], locations [B, STEPS]).

    mode "soft": context Σ α a; "sample": a_s, s ~ Categorical(α) (α at `temperature`);
    "argmax": the most attended cell. Words are chosen greedily; decoding runs all STEPS
    (cut at <eos> afterwards, see tokens_to_words).
    """
    annotations = model.encoder(images)
    batch = annotations.shape[0]
    keys = jax.random.split(key, STEPS)

    def body(state, k):
        carry, word = state
        alpha = model.attend(carry[1], word, annotations, temperature)
        if mode == "soft":
            loc = jnp.argmax(alpha, axis=-1)
            z = jnp.einsum("bl,bld->bd", alpha, annotations)
        else:
            if mode == "sample":
                loc = jax.random.categorical(k, jnp.log(alpha + 1e-12), axis=-1)
            else:
                loc = jnp.argmax(alpha, axis=-1)
            z = jnp.take_along_axis(annotations, loc[:, None, None], axis=1)[:, 0]
        carry, logits = model.step(carry, word, z)
        word = jnp.argmax(logits, axis=-1).astype(jnp.int32)
        return (carry, word), (word, alpha, loc)

    start = jnp.full((batch,), BOS, jnp.int32)
    _, (tokens, alphas, locs) = jax.lax.scan(body, (model.initial_carry(batch), start), keys)
    return tokens.T, jnp.swapaxes(alphas, 0, 1), locs.T


def tokens_to_words(tokens) -> list[str]:
    """Returns the words of one token row [T], up to (not including) <eos>."""
    words = []
    for t in np.asarray(tokens).tolist():
        if t in (EOS, PAD):
            break
        words.append(VOCAB[t] if 0 <= t < len(VOCAB) else "<unk>")
    return words


def encode_captions(captions: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Returns (inputs [B, STEPS], targets [B, STEPS], mask [B, STEPS]) int32/float32."""
    n = len(captions)
    inputs = np.full((n, STEPS), PAD, np.int32)
    targets = np.full((n, STEPS), PAD, np.int32)
    mask = np.zeros((n, STEPS), np.float32)
    for i, caption in enumerate(captions):
        ids = [WORD_ID[w] for w in caption.split()] + [EOS]
        inputs[i, 0] = BOS
        inputs[i, 1 : len(ids)] = ids[:-1]
        targets[i, : len(ids)] = ids
        mask[i, : len(ids)] = 1.0
    return inputs, targets, mask


# ------------------------------------------------------------------ inference API


class CaptionerRunner:
    """A loaded captioner with its jitted decoder (split once, jit a pure function)."""

    def __init__(self, model: Captioner):
        self.cfg = model.cfg
        self.graphdef, self.state = nnx.split(model)
        self._decode = jax.jit(self._decode_pure, static_argnames="mode")

    def _decode_pure(self, state, images, key, temperature, mode):
        model = nnx.merge(self.graphdef, state)
        return greedy_decode(model, images, key, mode=mode, temperature=temperature)

    def decode(self, images: np.ndarray, *, mode: str = "soft", seed: int = 0, temperature: float = 1.0):
        """Returns numpy (tokens [B, STEPS], alphas [B, STEPS, L], locations [B, STEPS])."""
        images = np.asarray(images, np.uint8)
        out = self._decode(self.state, images, jax.random.key(int(seed)), jnp.float32(temperature), mode)
        return tuple(np.asarray(x) for x in out)

    def decode_batched(self, images: np.ndarray, batch: int = 250, **kwargs):
        """Returns decode() over `images` in fixed-size chunks (one compile)."""
        outs = []
        n = len(images)
        for i in range(0, n, batch):
            chunk = images[i : i + batch]
            pad = batch - len(chunk)
            if pad:
                chunk = np.concatenate([chunk, np.repeat(chunk[-1:], pad, 0)])
            kw = dict(kwargs)
            if "seed" in kw:
                kw["seed"] = kw["seed"] + i
            outs.append([x[: batch - pad] for x in self.decode(chunk, **kw)])
        return tuple(np.concatenate(parts) for parts in zip(*outs))
