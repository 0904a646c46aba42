"""The 2019 tests on the committed HAN: the α override (its own α gives its own outputs bit for bit), the
adversary's bound checked by a separate forward, the shuffles against a python loop, the decision flips against
a loop of forwards, the records."""

import functools

import jax
import numpy as np
import pytest
from flax import nnx

from models.counterfactual import han as ch
from models.counterfactual import measures
from models.han.model import HAN, TINY, compiled_forward

# The adversary's mean JSD over three held-out reviews, measured 0.2x (sentence α) and 0.5x (word α of the top
# sentence) nats; the bars leave room for another machine's float order.
JSD_BARS = {"sentence": 0.1, "word": 0.3}


def _numpy_jsd(p, q):
    p, q = np.asarray(p, np.float64), np.asarray(q, np.float64)
    m = (p + q) / 2
    kl = lambda a: sum(a_i * np.log(a_i / m_i) for a_i, m_i in zip(a, m) if a_i > 1e-30)  # noqa: E731
    return (kl(p) + kl(q)) / 2


@functools.cache
def _forward(graphdef):
    # The reference: the model's forward with its overrides, jitted apart from the code under test.
    return jax.jit(lambda state, x, pm, sm, wa, sa: nnx.merge(graphdef, state)(x, pm, sm, wa, sa))


def _probs(predictor, inputs, word=None, sentence=None):
    logits = _forward(predictor.graphdef)(
        predictor.state, inputs.x, inputs.piece_mask, inputs.sentence_mask, word, sentence
    )[0]
    return [np.asarray(jax.nn.softmax(lg, -1))[0] for lg in logits]


def _tvd(ps, qs):
    return max(0.5 * np.abs(p - q).sum() for p, q in zip(ps, qs))


@pytest.fixture(scope="module")
def predictor():
    return ch.default_predictor()


@pytest.fixture(scope="module")
def inputs(predictor):
    return ch.held_out_inputs(predictor, 3)


@pytest.fixture(scope="module")
def runs(predictor, inputs):
    return {level: [ch.run_tests(predictor, doc, level, seed=i) for i, doc in enumerate(inputs)] for level in ch.LEVELS}


def test_override_with_the_networks_own_alpha_gives_its_own_outputs_exactly(predictor, inputs):
    # A random tiny network with a batch of two, and the committed one on held-out reviews.
    tiny = nnx.split(HAN(TINY, rngs=nnx.Rngs(0)))
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 5, TINY.embed_dim)).astype(np.float32)
    pm = np.arange(5)[None, None, :] < rng.integers(1, 6, (2, 3))[..., None]
    cases = [(*tiny, x, pm, pm.any(-1))]
    cases += [(predictor.graphdef, predictor.state, d.x, d.piece_mask, d.sentence_mask) for d in inputs[:2]]
    for graphdef, state, *batch in cases:
        own = jax.tree.map(np.asarray, compiled_forward(graphdef)(state, *batch))
        for word, sentence in ((own[1], own[2]), (own[1], None), (None, own[2])):
            again = jax.tree.map(np.asarray, _forward(graphdef)(state, *batch, word, sentence))
            jax.tree.map(np.testing.assert_array_equal, own, again)


def test_override_is_read_at_each_level(predictor, inputs):
    doc = inputs[0]
    own = compiled_forward(predictor.graphdef)(predictor.state, doc.x, doc.piece_mask, doc.sentence_mask)
    even = np.asarray(measures.uniform(doc.sentence_mask))
    out = _forward(predictor.graphdef)(predictor.state, doc.x, doc.piece_mask, doc.sentence_mask, None, even)
    np.testing.assert_array_equal(np.asarray(out[2]), even)
    assert not np.allclose(np.asarray(out[0][0]), np.asarray(own[0][0]))
    words = np.asarray(measures.uniform(doc.piece_mask))
    out = _forward(predictor.graphdef)(predictor.state, doc.x, doc.piece_mask, doc.sentence_mask, words, None)
    np.testing.assert_array_equal(np.asarray(out[1]), words)
    assert not np.allclose(np.asarray(out[0][0]), np.asarray(own[0][0]))


@pytest.mark.parametrize("level", ch.LEVELS)
def test_adversary_keeps_the_output_within_the_bound_and_moves_alpha(predictor, inputs, runs, level):
    for doc, run in zip(inputs, runs[level]):
        own = compiled_forward(predictor.graphdef)(predictor.state, doc.x, doc.piece_mask, doc.sentence_mask)
        word, sentence = np.asarray(own[1]).copy(), np.asarray(own[2]).copy()
        # α̃ read at one level; the other level's α follows from it (the word level) or is not touched.
        if level == "sentence":
            base = _probs(predictor, doc, None, sentence)
            sentence[0, : len(run.tilde)] = run.tilde
            moved = _probs(predictor, doc, None, sentence)
        else:
            base = _probs(predictor, doc, word, None)
            word[0, run.sentence, : len(run.tilde)] = run.tilde
            moved = _probs(predictor, doc, word, None)
        assert _tvd(moved, base) <= 0.01 + 1e-6 and run.tvd <= 0.01
        np.testing.assert_allclose(_tvd(moved, base), run.tvd, atol=1e-5)
        np.testing.assert_allclose(run.jsd, _numpy_jsd(run.tilde, run.alpha), atol=1e-5)
        np.testing.assert_allclose(run.tilde.sum(), 1.0, atol=1e-5)
    assert np.mean([r.jsd for r in runs[level]]) > JSD_BARS[level]


def test_permutation_spread_against_a_python_loop(predictor, inputs, runs):
    doc, run = inputs[0], runs["sentence"][0]
    n, width = len(run.alpha), doc.sentence_mask.shape[-1]
    own = np.asarray(compiled_forward(predictor.graphdef)(predictor.state, doc.x, doc.piece_mask, doc.sentence_mask)[2])
    base = _probs(predictor, doc, None, own)
    orders = measures.permutation_orders(np.asarray(n), width, ch.SHUFFLES, 0)
    expected = [_tvd(_probs(predictor, doc, None, own[:, order]), base) for order in orders]
    np.testing.assert_allclose(run.shuffled_tvd, expected, atol=1e-5)


def test_decision_flips_against_a_loop_of_forwards(predictor, inputs):
    for doc in inputs:
        found = ch.document_flips(predictor, doc)
        own = compiled_forward(predictor.graphdef)(predictor.state, doc.x, doc.piece_mask, doc.sentence_mask)
        alpha = np.asarray(own[2])[0]
        n = found.sentences
        original = int(np.argmax(np.asarray(own[0][0])[0]))

        def decision(keep, alpha=alpha, doc=doc):
            kept = alpha * keep
            return int(np.argmax(_probs(predictor, doc, None, (kept / kept.sum())[None])[0]))

        single = [decision(np.arange(len(alpha)) != j) != original for j in range(n)]
        top = int(np.argmax(alpha))
        assert found.top_flips == single[top]
        np.testing.assert_allclose(found.random_flip_rate, np.mean([s for j, s in enumerate(single) if j != top]))
        order, keep, count = np.argsort(-alpha[:n], kind="stable"), np.ones(len(alpha)), None
        for k in range(n - 1):
            keep[order[k]] = 0
            if decision(keep) != original:
                count = k + 1
                break
        assert found.removals_to_flip == count


def test_records_hold_alpha_and_the_other_side_by_side(predictor):
    text = "The bus was late. The soup was cold and bland. We sat by the window."
    record = ch.adversary_record(text)
    assert record.axes == ("which", "query", "key") and record.weights.shape == (2, 1, 3)
    assert record.key_labels == ("The bus was late.", "The soup was cold and bland.", "We sat by the window.")
    assert set(record.meta["probabilities_tilde"]) == {"sentiment", "topic"} and record.meta["tvd"] <= 0.01
    words = ch.permutation_record(text, "word")
    top = words.meta["sentence"]
    assert words.weights.shape[-1] == len(text.split(". ")[top].split())
    np.testing.assert_allclose(words.weights.sum(-1), 1.0, atol=1e-5)
    assert words.extras["shuffled_tvd"].shape == (ch.SHUFFLES,)


def test_registry_builder_checks_its_options(predictor):
    from types import SimpleNamespace

    from models.counterfactual.records import han_test_record
    from models.record import InputError

    entry = SimpleNamespace(id="han-adversary", variant="adversary")
    text = "The bus was late. The soup was cold and bland."
    record = han_test_record(entry, {"text": text, "level": "word", "sentence": 2})
    assert record.mechanism == "han-adversary" and record.meta["sentence"] == 1
    assert record.weights.shape == (2, 1, 6)
    with pytest.raises(InputError, match="sentence must be 1 to 2"):
        han_test_record(entry, {"text": text, "sentence": 3})
    with pytest.raises(InputError, match="level"):
        han_test_record(entry, {"text": text, "level": "page"})


def test_summary_gathers_the_runs_and_flips(predictor, inputs, runs):
    figures = ch.summary(3, predictor)
    assert figures["documents"] == 3
    for level in ch.LEVELS:
        jsd = [r.jsd for r in runs[level]]
        np.testing.assert_allclose(figures[level]["jsd_mean"], np.mean(jsd), rtol=1e-5)
        np.testing.assert_allclose(figures[level]["jsd_max"], np.max(jsd), rtol=1e-5)
        assert figures[level]["tvd_max"] <= 0.01
    found = [ch.document_flips(predictor, doc) for doc in inputs]
    assert figures["flips_sentiment"]["top_removed_flips"] == np.mean([f.top_flips for f in found])
    assert figures["flips_sentiment"]["sentences_mean"] == np.mean([f.sentences for f in found])
    assert set(figures) == {"documents", "sentence", "word", "flips_sentiment", "flips_topic"}
