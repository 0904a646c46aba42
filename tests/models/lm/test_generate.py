"""Generation with a KV cache against step-by-step recomputation without one; one compile per bucket;
sampling by seed and within top-k; the record and its server bounds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from models.lm.generate import generate, generate_loop, generation_record, length_buckets
from models.lm.model import run
from models.lm.records import load_runner
from models.record import InputError
from models.registry import get_mechanism

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "lm"
PROMPT = "The cat sat on the mat. The cat"


@pytest.fixture(scope="module", params=["trained", "llama", "mistral"])
def runner(request):
    return load_runner(None if request.param == "trained" else FIXTURES / request.param)


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_greedy_generation_equals_recomputation_without_the_cache(runner):
    prompt = runner.encode(PROMPT).ids
    result = generate(runner.lm, prompt, max_new=12)
    n, total = len(prompt), len(prompt) + 12
    assert result.ids.shape == (total,) and result.ids[:n].tolist() == prompt.tolist()
    for step in range(12):  # each step: a plain forward over the tokens so far, no cache
        prefix = result.ids[: n + step]
        logits, maps = run(runner.lm.graphdef, runner.lm.state, prefix[None])
        assert result.ids[n + step] == int(np.argmax(logits[0, -1]))
        np.testing.assert_allclose(result.maps[:, :, : n + step, : n + step], maps[:, 0], atol=1e-5)
        probs = _softmax(logits[0, -1].astype(np.float64))
        assert result.chosen_prob[step] == pytest.approx(probs[result.ids[n + step]], abs=1e-5)
        order = np.argsort(-probs)[: result.top_ids.shape[1]]
        assert result.top_ids[step].tolist() == order.tolist()
        np.testing.assert_allclose(result.top_probs[step], probs[order], atol=1e-5)
    # the last token's row too, and exactly 0 above the diagonal
    _, maps = run(runner.lm.graphdef, runner.lm.state, result.ids[None])
    np.testing.assert_allclose(result.maps, maps[:, 0], atol=1e-5)
    assert np.all(result.maps[..., np.triu_indices(total, 1)[0], np.triu_indices(total, 1)[1]] == 0)
    np.testing.assert_allclose(result.maps.sum(-1), 1.0, atol=1e-5)


def test_no_compile_per_step_length_or_setting(runner):
    prompt = runner.encode(PROMPT).ids
    generate(runner.lm, prompt, max_new=4)
    compiled = generate_loop._cache_size()
    t_b = min(b for b in length_buckets(runner.config) if b >= len(prompt) + 4)
    for max_new, temperature, top_k, seed in [(3, 0.0, 0, 0), (t_b - len(prompt), 1.0, 5, 3), (1, 0.7, 0, 9)]:
        generate(runner.lm, prompt[: len(prompt) - 2], max_new=max_new, temperature=temperature, top_k=top_k, seed=seed)
    assert generate_loop._cache_size() == compiled


def test_sampling_is_reproducible_by_seed_and_stays_within_top_k(runner):
    prompt = runner.encode(PROMPT).ids
    one = generate(runner.lm, prompt, max_new=16, temperature=1.5, top_k=3, seed=7)
    again = generate(runner.lm, prompt, max_new=16, temperature=1.5, top_k=3, seed=7)
    assert one.ids.tolist() == again.ids.tolist()
    other = [generate(runner.lm, prompt, max_new=16, temperature=1.5, top_k=3, seed=s).ids.tolist() for s in (8, 9)]
    assert any(ids != one.ids.tolist() for ids in other)
    for step, token in enumerate(one.ids[len(prompt):]):
        assert token in one.top_ids[step, :3]  # the 3 most probable under the model
    greedy = generate(runner.lm, prompt, max_new=16)
    unsampled = generate(runner.lm, prompt, max_new=16, temperature=0.0, top_k=3, seed=5)
    assert unsampled.ids.tolist() == greedy.ids.tolist()  # temperature 0 is greedy whatever the seed


def test_top_1_sampling_is_greedy(runner):
    prompt = runner.encode(PROMPT).ids
    greedy = generate(runner.lm, prompt, max_new=8)
    assert generate(runner.lm, prompt, max_new=8, temperature=2.0, top_k=1, seed=1).ids.tolist() == greedy.ids.tolist()


def test_the_record_tells_prompt_from_generated_tokens():
    runner = load_runner(FIXTURES / "llama")
    record = generation_record(runner, PROMPT, max_new=5)
    n = record.meta["n_prompt"]
    t = n + 5
    assert record.mechanism == "lm-generate" and record.axes == ("layer", "head", "query", "key")
    assert record.weights.shape == (2, 8, t, t) and len(record.query_labels) == t
    assert record.extras["chosen_prob"].shape == (5,) and record.extras["top_ids"].shape == (5, 5)
    assert record.meta["generated_tokens"] == f"{n}-{t - 1}" and record.extras["ids"].shape == (t,)


@pytest.mark.parametrize("options, message", [
    ({"max_new": 0}, "max_new must be a whole number from 1 to 256, got 0"),
    ({"max_new": 257}, "max_new must be a whole number from 1 to 256, got 257"),
    ({"top_k": 101}, "top_k must be a whole number from 0 to 100, got 101"),
    ({"temperature": 2.5}, "temperature must be a number from 0 to 2, got 2.5"),
    ({"temperature": -0.1}, "temperature must be a number from 0 to 2, got -0.1"),
])
def test_server_bounds_are_one_line(options, message):
    # The registry's options are the one validator: the builder is never reached with such a value.
    with pytest.raises(InputError) as info:
        get_mechanism("lm-generate").build({"text": PROMPT, **options})
    assert str(info.value) == message


def test_a_long_prompt_is_cut_to_fit_the_positions():
    runner = load_runner(FIXTURES / "gpt2")  # 128 positions
    record = generation_record(runner, "the dog " * 100, max_new=40)
    assert record.weights.shape[-1] == 128 and record.meta["n_prompt"] == 88
    assert "the prompt was cut to its last 88 of" in record.meta["notice"]
