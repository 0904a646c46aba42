"""The 2019 tests on the committed Bahdanau model: the α override (the model's own α gives its own outputs bit for
bit), the adversary's bound checked by a separate forward per step, the shuffles against a python loop, the
records."""

import jax
import numpy as np
import pytest

from models.counterfactual import measures
from models.counterfactual import seq2seq as cs
from models.seq2seq import model as s2s
from models.seq2seq import task as dates
from models.seq2seq.config import teacher_inputs
from models.seq2seq.records import decode_batch, load_variant

TEXTS = ["Wednesday, May 9, 2018", "2018/05/09", "le 3 mars 1999"]
# The adversary's mean JSD over the steps of TEXTS, measured 0.5x nats (0.537 over 6 held-out dates); the bar
# leaves room for another machine's float order.
JSD_BAR = 0.4


def _numpy_jsd(p, q):
    p, q = np.asarray(p, np.float64), np.asarray(q, np.float64)
    m = (p + q) / 2
    kl = lambda a: sum(a_i * np.log(a_i / m_i) for a_i, m_i in zip(a, m) if a_i > 1e-30)  # noqa: E731
    return (kl(p) + kl(q)) / 2


def _batch(texts):
    src, lengths = s2s.pad_batch([dates.encode_source(t).ids for t in texts], cs.WIDTH)
    return src, lengths, np.zeros((len(texts), dates.OUTPUT_LENGTH), np.int32)


def _teacher_step(variant, text, override, step):
    # The reference: the model's own forward, α overridden at every step, teacher-forced on its greedy output.
    _, graphdef, params, _ = load_variant(variant)
    src, lengths, dummy = _batch([text])
    logits = s2s.apply(graphdef, params, src, lengths, dummy, np.float32(3))[0]
    tgt_in = teacher_inputs(np.asarray(logits).argmax(-1))
    out = s2s.apply(graphdef, params, src, lengths, tgt_in, np.float32(3), teacher_forcing=True, alpha=override)[0]
    return np.asarray(jax.nn.softmax(out[0, step]))


@pytest.fixture(scope="module")
def runs():
    return [cs.run_tests(t, seed=i) for i, t in enumerate(TEXTS)]


@pytest.mark.parametrize("variant", ["bahdanau", "luong-general"])  # the local variants share Luong's code path
@pytest.mark.parametrize("teacher", [False, True])
def test_override_with_the_models_own_alpha_gives_its_own_outputs_exactly(variant, teacher):
    cfg = s2s.Seq2SeqConfig(**{**s2s.PRESETS["tiny"].__dict__, "variant": variant})
    graphdef, params = s2s.make_model(cfg, seed=3)
    src, lengths, _ = _batch(TEXTS)
    tgt = np.random.default_rng(0).integers(2, cfg.target_vocab, (len(TEXTS), dates.OUTPUT_LENGTH)).astype(np.int32)
    own = [np.asarray(x) for x in s2s.apply(graphdef, params, src, lengths, tgt, np.float32(3), teacher)]
    again = s2s.apply(graphdef, params, src, lengths, tgt, np.float32(3), teacher, alpha=own[1])
    for a, b in zip(own, again):
        np.testing.assert_array_equal(a, np.asarray(b))
    even = np.where(np.arange(cs.WIDTH) < lengths[:, None, None], 1.0 / lengths[:, None, None], 0.0)
    even = np.broadcast_to(even, own[1].shape)
    moved = s2s.apply(graphdef, params, src, lengths, tgt, np.float32(3), teacher, alpha=even.astype(np.float32))
    np.testing.assert_array_equal(np.asarray(moved[1]), even.astype(np.float32))  # the α read is the one returned
    assert not np.allclose(np.asarray(moved[0]), own[0])


def test_no_attention_has_nothing_to_override():
    cfg = s2s.Seq2SeqConfig(**{**s2s.PRESETS["tiny"].__dict__, "variant": "no-attention"})
    graphdef, params = s2s.make_model(cfg)
    src, lengths, tgt = _batch(TEXTS[:1])
    with pytest.raises(ValueError, match="no attention"):
        s2s.apply(graphdef, params, src, lengths, tgt, np.float32(3), alpha=np.zeros((1, 10, cs.WIDTH), np.float32))


def test_the_tests_start_from_the_models_own_alpha_and_greedy_output(runs):
    for text, run in zip(TEXTS, runs):
        decoded = decode_batch("bahdanau", [text])[0]
        np.testing.assert_allclose(run.alpha, decoded.weights, atol=1e-6)
        assert dates.decode_target(run.tokens) == decoded.output


def test_adversary_keeps_every_step_within_the_bound_and_moves_alpha(runs):
    for text, run in zip(TEXTS, runs):
        assert run.tvd.max() <= 0.01
        n = len(run.source.ids)
        for step in (0, 5, 9):
            override = np.zeros((1, dates.OUTPUT_LENGTH, cs.WIDTH), np.float32)
            override[0, :, :n] = run.alpha
            base = _teacher_step("bahdanau", text, override, step)
            override[0, step, :n] = run.tilde[step]
            moved = _teacher_step("bahdanau", text, override, step)
            np.testing.assert_allclose(0.5 * np.abs(moved - base).sum(), run.tvd[step], atol=2e-5)
            assert 0.5 * np.abs(moved - base).sum() <= 0.01 + 2e-5
            np.testing.assert_allclose(moved, run.probs_tilde[step], atol=2e-5)
        oracle = [_numpy_jsd(a, b) for a, b in zip(run.tilde, run.alpha)]
        np.testing.assert_allclose(run.jsd, oracle, atol=1e-5)
    assert np.mean([r.jsd.mean() for r in runs]) > JSD_BAR


def test_permutation_spread_against_a_python_loop(runs):
    text, run = TEXTS[0], runs[0]
    n = len(run.source.ids)
    orders = measures.permutation_orders(np.full(dates.OUTPUT_LENGTH, n), cs.WIDTH, cs.SHUFFLES, 0)
    override = np.zeros((1, dates.OUTPUT_LENGTH, cs.WIDTH), np.float32)
    override[0, :, :n] = run.alpha
    for step in (2, 7):
        base = _teacher_step("bahdanau", text, override, step)
        expected = []
        for order in orders[step]:
            shuffled = override.copy()
            shuffled[0, step] = override[0, step, order]
            expected.append(0.5 * np.abs(_teacher_step("bahdanau", text, shuffled, step) - base).sum())
        np.testing.assert_allclose(run.shuffled_tvd[step], expected, atol=2e-5)


def test_records_hold_alpha_and_the_other_side_by_side(runs):
    record = cs.adversary_record(TEXTS[0])
    run = runs[0]
    assert record.axes == ("which", "query", "key") and record.weights.shape == (2, 10, len(run.source.ids))
    np.testing.assert_allclose(record.matrix(which=0), run.alpha, atol=1e-7)
    np.testing.assert_allclose(record.matrix(which=1), run.tilde, atol=1e-7)
    assert record.meta["output_alpha"] == record.meta["output_tilde"] == "2018-05-09"
    shuffled = cs.permutation_record(TEXTS[0])
    np.testing.assert_allclose(shuffled.extras["shuffled_tvd"], run.shuffled_tvd)
    assert shuffled.meta["max_tvd"] == [round(float(x), 6) for x in run.shuffled_tvd.max(-1)]
    even = cs.uniform_record(TEXTS[0])
    np.testing.assert_allclose(even.matrix(which=1).sum(-1), 1.0, atol=1e-6)
    assert len(even.meta["output_uniform"]) == 10


def test_registry_builder_names_the_record_after_its_entry(runs):
    from types import SimpleNamespace

    from models.counterfactual.records import seq2seq_test_record

    entry = SimpleNamespace(id="bahdanau-adversary", variant="adversary")
    record = seq2seq_test_record(entry, {"text": TEXTS[0], "seed": 0})
    assert record.mechanism == "bahdanau-adversary"
    np.testing.assert_allclose(record.matrix(which=1), runs[0].tilde, atol=1e-7)


def test_summary_gathers_the_runs_of_the_held_out_dates():
    figures = cs.summary(2, held_out=16)
    examples = dates.generate(16, cs.HELD_OUT_SEED)
    runs = [cs.run_tests(e.source, seed=i) for i, e in enumerate(examples[:2])]
    jsd = np.stack([r.jsd for r in runs])
    np.testing.assert_allclose(figures["all steps"]["jsd_mean"], jsd.mean(), rtol=1e-6)
    np.testing.assert_allclose(figures["digit steps"]["jsd_max"], jsd[:, cs.DIGITS].max(), rtol=1e-6)
    assert figures["all steps"]["tvd_max"] <= 0.01
    shuffled = np.stack([r.shuffled_tvd for r in runs])
    np.testing.assert_allclose(figures["all steps"]["permutation_tvd_median"], np.median(shuffled), rtol=1e-6)
    assert figures["exact_match_bahdanau"] == 1.0 and figures["held_out"] == 16
    outputs = cs.uniform_outputs("bahdanau", [e.source for e in examples])
    assert figures["exact_match_uniform"] == np.mean([o == e.target for o, e in zip(outputs, examples)])
