"""The translation forward's formulas against numpy oracles, and its views against each other.

Oracles: Marian's sinusoids and T5's relative buckets written after transformers' loops; the greedy cached
steps against the argmax of one uncached teacher-forced pass over its own output; padding to a length bucket
against no padding; a knocked-out cross-attention head against a numpy recomputation of the layer's output.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from models.capture import Capture, Interventions
from models.translation.config import Generation, read_generation
from models.translation.forward import (
    KindCapture,
    KindInterventions,
    encode,
    greedy,
    relative_buckets,
    sinusoidal_table,
    teacher_forced,
)
from models.translation.records import load_translator, translate

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "translation"
translator = functools.lru_cache(maxsize=None)(load_translator)


def test_sinusoids_are_marians_layout():
    # transformers' MarianSinusoidalPositionalEmbedding: angle pos / 10000^(2(j//2)/dim); sin of the even
    # columns in the first half, cos of the odd columns in the second.
    for length, width in ((7, 8), (5, 9)):
        angle = np.array([[pos / np.power(10000, 2 * (j // 2) / width) for j in range(width)] for pos in range(length)])
        half = (width + 1) // 2
        expected = np.concatenate([np.sin(angle[:, 0::2])[:, :half], np.cos(angle[:, 1::2])], axis=1)
        np.testing.assert_allclose(sinusoidal_table(length, width), expected, atol=1e-6)


def _bucket_oracle(relative: int, bidirectional: bool, buckets: int, max_distance: int) -> int:
    # transformers' T5Attention._relative_position_bucket, one number at a time.
    out = 0
    if bidirectional:
        buckets //= 2
        out += buckets if relative > 0 else 0
        distance = abs(relative)
    else:
        distance = -min(relative, 0)
    exact = buckets // 2
    if distance < exact:
        return out + distance
    large = exact + int(math.log(distance / exact) / math.log(max_distance / exact) * (buckets - exact))
    return out + min(large, buckets - 1)


@settings(max_examples=40, deadline=None)
@example([0, 1, -1, 3, -3, 4, -4, 7, -8, 19, -20, 21, -64, 127, -128, 300], True, 16, 20)
@example([0, 1, -1, 3, -3, 4, -4, 7, -8, 19, -20, 21, -64, 127, -128, 300], False, 32, 128)
@given(
    st.lists(st.integers(-300, 300), min_size=16, max_size=16),  # one shape: one compile
    st.booleans(),
    st.sampled_from([8, 16, 32]),
    st.sampled_from([20, 64, 128]),
)
def test_relative_buckets_equal_t5s(relative, bidirectional, buckets, max_distance):
    ours = np.asarray(
        relative_buckets(
            jnp.asarray(relative, jnp.int32), bidirectional=bidirectional, buckets=buckets, max_distance=max_distance
        )
    )
    assert ours.tolist() == [_bucket_oracle(r, bidirectional, buckets, max_distance) for r in relative]


def test_greedy_steps_equal_the_argmax_of_one_pass_over_their_own_output():
    # The cached one-token steps and one uncached pass over the whole output agree on every position.
    for name in ("marian", "t5_gated", "mbart"):
        model = translator(FIXTURES / name)
        done = translate(model, "The weather is nice today.", max_new=8)
        chosen = done.logits.argmax(-1)
        banned = set(model.rules.banned)
        assert not banned & set(done.output_ids)
        if not model.rules.forced_bos >= 0 and not banned:
            assert chosen.tolist() == list(done.output_ids)


def _padded(model, ids, length):
    src = np.full((1, length), model.arch.pad_id, np.int32)
    src[0, : len(ids)] = ids
    return src


_jitted_encode = jax.jit(encode, static_argnames=("arch", "capture"))


@settings(max_examples=4, deadline=None)
@given(st.sampled_from(["marian", "t5", "bart", "mbart"]), st.integers(0, 9))
def test_padding_to_a_bucket_changes_nothing(name, sentence):
    model = translator(FIXTURES / name)
    ids = model.tokenizer.encode(
        [
            "The cat sat on the mat.",
            "Where is the bus stop?",
            "Tea.",
            "We walked.",
            "I love reading books.",
            "Attention lets a model align words.",
            "My friend",
            "The quick brown fox jumps.",
            "She translates.",
            "Every head",
        ][sentence]
    ).ids
    n = np.asarray([len(ids)], np.int32)
    encode = _jitted_encode  # jitted: run op by op, the two lengths took most of this file's time
    exact = encode(
        model.arch,
        model.params,
        _padded(model, ids, len(ids)),
        n,
        capture=KindCapture(encoder=Capture(logits=False, maps=True)),
    )
    padded = encode(
        model.arch,
        model.params,
        _padded(model, ids, 32),
        n,
        capture=KindCapture(encoder=Capture(logits=False, maps=True)),
    )
    k = len(ids)
    np.testing.assert_allclose(np.asarray(padded["memory"])[:, :k], np.asarray(exact["memory"]), atol=2e-5)
    for ours, plain in zip(padded["encoder"]["maps"], exact["encoder"]["maps"]):
        np.testing.assert_allclose(np.asarray(ours)[..., :k, :k], np.asarray(plain), atol=1e-5)
        assert np.all(np.asarray(ours)[..., :k, k:] == 0)  # padded keys get exactly 0


def test_a_knocked_out_cross_head_is_zero_in_the_heads_output():
    # Interventions act after the softmax (models/capture.py heads_output): head 1 of cross layer 0 is zeroed
    # in the captured head outputs, the others and the maps unchanged.
    model = translator(FIXTURES / "bart")
    src = np.asarray([model.tokenizer.encode("The cat sat on the mat.").ids], np.int32)
    tgt = np.asarray([[model.arch.decoder_start_id, 5, 9, 11]], np.int32)
    n = np.asarray([src.shape[1]], np.int32)
    capture = KindCapture(decoder=Capture(), cross=Capture(logits=False, maps=True, heads=True))
    keep = np.ones((model.arch.decoder_layers, model.arch.decoder_heads), np.float32)
    keep[0, 1] = 0.0
    plain = teacher_forced(model.arch, model.params, src, n, tgt, capture=capture)
    knocked = teacher_forced(
        model.arch,
        model.params,
        src,
        n,
        tgt,
        capture=capture,
        change=KindInterventions(cross=Interventions(head_keep=jnp.asarray(keep))),
    )
    heads, heads_plain = np.asarray(knocked["cross"]["heads"][0]), np.asarray(plain["cross"]["heads"][0])
    assert np.all(heads[:, 1] == 0)
    np.testing.assert_allclose(heads[:, [0, 2, 3]], heads_plain[:, [0, 2, 3]], atol=1e-6)
    np.testing.assert_allclose(np.asarray(knocked["cross"]["maps"][0]), np.asarray(plain["cross"]["maps"][0]))
    assert np.abs(np.asarray(knocked["logits"]) - np.asarray(plain["logits"])).max() > 1e-3


def test_min_length_holds_the_end_token_back_and_other_settings_are_named():
    # transformers' MinLengthLogitsProcessor counts the start token: with min_length 4 the end token can come
    # fourth at the earliest. A bias that makes </s> win everywhere shows where it is first allowed.
    model = translator(FIXTURES / "bart")
    params = {**model.params, "logits_bias": model.params["logits_bias"].at[model.arch.eos_id].add(1e3)}
    src = np.asarray([model.tokenizer.encode("Tea.").ids], np.int32)
    n = np.asarray([src.shape[1]], np.int32)
    eos = model.arch.eos_id
    for min_length, first_end in ((0, 0), (4, 3)):
        rules = Generation(eos_ids=(eos,), min_length=min_length)
        out = np.asarray(greedy(model.arch, params, src, n, rules=rules, steps=6))[0].tolist()
        assert out.index(eos) == first_end and eos not in out[:first_end]
    folder = FIXTURES / "bart"
    data = json.loads((folder / "config.json").read_text()) | {"no_repeat_ngram_size": 3, "min_length": 5}
    rules = read_generation(Path("/nonexistent"), data, model.arch)
    assert rules.min_length == 5 and rules.ignored == ("no_repeat_ngram_size=3",)
