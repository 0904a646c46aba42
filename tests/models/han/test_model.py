"""HAN model tests on tiny configs: shapes, masks, numpy oracles, the losses, strict checkpoints, text handling."""

import json

import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from hypothesis import given, settings
from hypothesis import strategies as st

from models.checkpoint import CheckpointError, config_dict
from models.han.data import encode_document, make_batch, word_weights
from models.han.features import feature_batch
from models.han.model import CHECKPOINT, HAN, TINY, HANConfig, compiled_forward
from models.han.records import HANPredictor, result_record
from models.han.train import TrainState, head_losses, one_hot_targets, spread_penalty, train_epochs

RNG = np.random.default_rng(0)
TABLE = RNG.normal(size=(30522, TINY.embed_dim)).astype(np.float32)  # stands in for MiniLM's vectors
DOCS = [encode_document("The soup was cold. We left early! My friend paid the bill."), encode_document("Lovely garden.")]
# One model, one jitted forward, one padded shape (8 rows, the predictor's bucket for <= 8
# documents) shared by most tests: every new shape costs a compile.
MODEL = HAN(TINY, rngs=nnx.Rngs(0))
GRAPHDEF, STATE = nnx.split(MODEL, nnx.Param)


def featurize(docs):
    return [tuple(TABLE[np.asarray(p)] for p in doc.pieces) for doc in docs]


PREDICTOR = HANPredictor(TINY, GRAPHDEF, STATE, featurize=featurize)


def _forward(batch, docs=DOCS):
    x = feature_batch(featurize(docs), batch)
    return compiled_forward(GRAPHDEF)(STATE, x, batch.piece_mask, batch.sentence_mask)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _numpy_gru(x, w_in, b_in, w_rec, b_rec):
    # x [T, F]; weights stored (in, out) like nnx.Linear; returns [T, H]
    h = np.zeros(w_rec.shape[0])
    hidden = w_rec.shape[0]
    out = []
    for xt in x:
        xp, hp = xt @ w_in + b_in, h @ w_rec + b_rec
        r = _sigmoid(xp[:hidden] + hp[:hidden])
        z = _sigmoid(xp[hidden : 2 * hidden] + hp[hidden : 2 * hidden])
        n = np.tanh(xp[2 * hidden :] + r * hp[2 * hidden :])
        h = (1 - z) * n + z * h
        out.append(h)
    return np.array(out)


def test_shapes_and_weights_sum_to_one_over_real_pieces_only():
    batch = make_batch(DOCS, 8)
    logits, word_alpha, sent_alpha, word_scores, sent_scores = _forward(batch)
    b, s, t = batch.ids.shape
    assert logits[0].shape == (8, 2) and word_alpha.shape == (b, s, t) and sent_alpha.shape == (b, s)
    word_alpha, sent_alpha = np.asarray(word_alpha), np.asarray(sent_alpha)
    np.testing.assert_allclose(word_alpha.sum(-1)[batch.sentence_mask], 1.0, rtol=1e-5)
    assert np.all(word_alpha[~batch.piece_mask] == 0.0)
    np.testing.assert_allclose(sent_alpha[:2].sum(-1), 1.0, rtol=1e-5)
    assert np.all(sent_alpha[~batch.sentence_mask] == 0.0)
    assert np.all(sent_alpha[2:] == 0.0)  # empty rows: all zeros, not NaN


def test_word_attention_matches_a_numpy_oracle():
    model = MODEL
    batch = make_batch(DOCS, 8)
    _, word_alpha, _, word_scores, _ = _forward(batch)
    x = TABLE[batch.ids[0, 0]]
    n = int(batch.piece_mask[0, 0].sum())
    enc = model.word_encoder
    fwd = _numpy_gru(x[:n], enc.fwd_in.kernel[...], enc.fwd_in.bias[...], enc.fwd_rec.kernel[...], enc.fwd_rec.bias[...])
    bwd = _numpy_gru(x[:n][::-1], enc.bwd_in.kernel[...], enc.bwd_in.bias[...], enc.bwd_rec.kernel[...], enc.bwd_rec.bias[...])[::-1]
    h = np.concatenate([fwd, bwd], axis=-1)  # [n, 2H]
    att = model.word_attention
    u = np.tanh(h @ np.asarray(att.proj.kernel[...]) + np.asarray(att.proj.bias[...]))
    scores = u @ np.asarray(att.context[...])
    alpha = np.exp(scores - scores.max())
    alpha /= alpha.sum()
    np.testing.assert_allclose(np.asarray(word_scores)[0, 0, :n], scores, atol=1e-4)
    np.testing.assert_allclose(np.asarray(word_alpha)[0, 0, :n], alpha, atol=1e-5)


def test_padding_to_a_larger_bucket_changes_nothing():
    small = _forward(make_batch(DOCS, 8))
    large = _forward(make_batch(DOCS, 8, shape=(32, 48)))
    np.testing.assert_allclose(np.asarray(small[0][0])[:2], np.asarray(large[0][0])[:2], atol=1e-5)
    s, t = np.asarray(small[2]).shape[1], np.asarray(small[1]).shape[2]
    np.testing.assert_allclose(np.asarray(small[1])[:2], np.asarray(large[1])[:2, :s, :t], atol=1e-6)
    np.testing.assert_allclose(np.asarray(small[2])[:2], np.asarray(large[2])[:2, :s], atol=1e-6)


def test_word_weight_is_the_sum_of_its_pieces():
    np.testing.assert_allclose(word_weights(np.array([0.1, 0.2, 0.3, 0.4, 0.0]), [0, 0, 1, 2], 3), [0.3, 0.3, 0.4])
    doc = encode_document("Scrumptiousness overwhelmed everyone.")
    assert len(doc.pieces[0]) > len(doc.words[0])  # some words have several pieces
    result = PREDICTOR.run_batch([encode_document("Scrumptiousness overwhelmed everyone. We left."), DOCS[1]])[0]
    assert len(result.word_alpha[0]) == 3
    np.testing.assert_allclose(result.word_alpha[0].sum(), 1.0, rtol=1e-5)


def test_record_layout_pads_shorter_sentences_with_zeros():
    record = result_record(PREDICTOR.run_batch([encode_document("The soup was cold and very salty. We left."), DOCS[1]])[0])
    assert record.axes == ("sentence", "word")
    assert record.weights.shape == (2, 7)
    assert record.query_labels == ("The soup was cold and very salty.", "We left.")
    assert record.key_labels == tuple(f"w{j}" for j in range(1, 8))
    assert list(record.extras["words"][1]) == ["We", "left.", "", "", "", "", ""]
    assert np.all(record.weights[1, 2:] == 0.0)
    np.testing.assert_allclose(record.weights.sum(1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(record.extras["sentence_weights"].sum(), 1.0, rtol=1e-5)



def test_csv_export_names_each_word_and_leaves_padding_out():
    import csv
    import io

    from viz.export import record_bytes

    record = result_record(PREDICTOR.run_batch([encode_document("The soup was cold and very salty. =We left."), DOCS[1]])[0])
    rows = list(csv.reader(io.StringIO(record_bytes(record, "csv").decode())))
    assert rows[0] == ["sentence index", "sentence", "word index", "word", "weight"]
    assert len(rows) == 1 + 7 + 2  # seven words, then two: the five padding slots are left out
    assert rows[1][:4] == ["0", "The soup was cold and very salty.", "0", "The"]
    assert rows[-1][:4] == ["1", "'=We left.", "1", "left."]  # a formula-looking sentence is defused
    for row in rows[1:]:
        assert float(row[4]) == pytest.approx(float(record.weights[int(row[0]), int(row[2])]), rel=1e-6)

def test_checkpoint_round_trip_and_strict_loading():
    data = CHECKPOINT.to_bytes(TINY, STATE, {"trained_on": "test"})
    cfg, _, loaded, info = CHECKPOINT.load_bytes(data)
    assert cfg == TINY and info == {"trained_on": "test"}
    a, b = dict(nnx.to_flat_state(STATE)), dict(nnx.to_flat_state(loaded))
    for path in a:
        np.testing.assert_array_equal(np.asarray(a[path][...]), np.asarray(b[path][...]))

    from safetensors.numpy import load, save

    tensors = load(data)
    metadata = {"format": "attention-lab", "version": "1", "family": "han", "config": json.dumps(config_dict(TINY))}
    missing = dict(tensors)
    missing.pop("word_attention.context")
    with pytest.raises(ValueError, match="missing.*word_attention.context"):
        CHECKPOINT.load_bytes(save(missing, metadata=metadata))
    with pytest.raises(ValueError, match="unknown.*extra.weight"):
        CHECKPOINT.load_bytes(save({**tensors, "extra.weight": np.zeros(2, np.float32)}, metadata=metadata))
    bad = dict(tensors)
    bad["word_attention.context"] = np.zeros(5, np.float32)
    with pytest.raises(ValueError, match="shape"):
        CHECKPOINT.load_bytes(save(bad, metadata=metadata))
    with pytest.raises(CheckpointError, match="not an Attention Lab checkpoint"):
        CHECKPOINT.load_bytes(save(tensors))
    with pytest.raises(CheckpointError, match="holds a 'seq2seq' model"):
        CHECKPOINT.load_bytes(save(tensors, metadata={**metadata, "family": "seq2seq"}))
    with pytest.raises(CheckpointError, match="not a checkpoint file"):
        CHECKPOINT.load_bytes(b"\x00" * 40)


def _tiny_training():
    """Returns (config, 16 documents, their labels, a fresh TrainState) of a tiny two-class HAN."""
    cfg = HANConfig(heads=(("label", ("neg", "pos")),), word_hidden=4, word_attention=4,
                    sentence_hidden=4, sentence_attention=4, embed_dim=8)
    docs = [encode_document(t) for t in ["Great food. We sat down.", "Awful food. We sat down."] * 8]
    return cfg, docs, np.array([[1], [0]] * 8, np.int32), TrainState.create(cfg, seed=0, learning_rate=5e-2)


def test_training_runs_a_few_steps_and_lowers_the_loss():
    cfg, docs, labels, train = _tiny_training()
    steps = []

    class Recorder:
        def update(self, step, total, **metrics):
            steps.append((step, total))

        def close(self):
            pass

    losses = train_epochs(train, docs, one_hot_targets(labels, cfg), vectors=featurize(docs), epochs=6, batch_size=4,
                          progress=Recorder())  # batch 4: the compiled step of the next test
    assert steps[-1] == (24, 24)
    assert losses[-1] < losses[0]


def test_a_stop_request_ends_training_after_the_current_step_and_keeps_it():
    from models.training import StopRequest

    cfg, docs, labels, train = _tiny_training()
    before = {k: np.asarray(v) for k, v in nnx.to_flat_state(train.state)}
    stop = StopRequest()

    class StopAfterTwo:
        def update(self, step, total, **metrics):
            if step == 2:
                stop.request()

        def close(self):
            pass

    losses = train_epochs(train, docs, one_hot_targets(labels, cfg), vectors=featurize(docs), epochs=6, batch_size=4,
                          progress=StopAfterTwo(), stop=stop)
    assert len(losses) == 1  # the first epoch, cut after its second step
    after = {k: np.asarray(v) for k, v in nnx.to_flat_state(train.state)}
    assert any(not np.array_equal(before[k], after[k]) for k in before)


def _numpy_spread(scores, mask):
    # KL(uniform || softmax over the real sentences), one document
    real = scores[mask]
    alpha = np.exp(real - real.max())
    alpha /= alpha.sum()
    uniform = np.full(len(real), 1 / len(real))
    return float(np.sum(uniform * (np.log(uniform) - np.log(alpha))))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-6, 6), min_size=8, max_size=8), st.integers(1, 8))
def test_spread_penalty_is_kl_from_uniform_over_real_sentences(scores, real):
    scores = np.asarray(scores, np.float32)[None]
    mask = np.arange(8)[None] < real
    penalty = float(spread_penalty(jnp.asarray(scores), jnp.asarray(mask))[0])
    assert penalty == pytest.approx(_numpy_spread(scores[0], mask[0]), abs=1e-4)
    assert penalty >= -1e-6  # a KL divergence
    padded = scores.copy()
    padded[0, real:] = 100.0  # what padded sentences score changes nothing
    assert float(spread_penalty(jnp.asarray(padded), jnp.asarray(mask))[0]) == pytest.approx(penalty, abs=1e-5)
    even = np.zeros_like(scores)
    assert float(spread_penalty(jnp.asarray(even), jnp.asarray(mask))[0]) == pytest.approx(0.0, abs=1e-6)


def test_head_losses_are_soft_cross_entropy_plus_the_weighted_spread_of_marked_rows():
    batch = make_batch(DOCS, 8)
    x = feature_batch(featurize(DOCS), batch)
    logits, _, _, _, sentence_scores = compiled_forward(GRAPHDEF)(STATE, x, batch.piece_mask, batch.sentence_mask)
    target = np.zeros((8, 2), np.float32)
    target[0], target[1] = [0.5, 0.5], [0.0, 1.0]  # a soft target (no opinion) and a hard one
    spread = np.zeros(8, np.float32)
    spread[0] = 1.0
    row_mask = np.zeros(8, np.float32)
    row_mask[:2] = 1.0
    arrays = {"x": x, "piece_mask": batch.piece_mask, "sentence_mask": batch.sentence_mask, "targets": (target,),
              "row_mask": row_mask, "spread": spread}
    loss = float(head_losses(MODEL, arrays, spread_weight=0.7))
    lg = np.asarray(logits[0], np.float64)[:2]
    log_p = lg - lg.max(-1, keepdims=True) - np.log(np.exp(lg - lg.max(-1, keepdims=True)).sum(-1, keepdims=True))
    cross_entropy = -(target[:2] * log_p).sum(-1).mean()
    expected = cross_entropy + 0.7 * _numpy_spread(np.asarray(sentence_scores)[0], batch.sentence_mask[0])
    assert loss == pytest.approx(expected, rel=1e-4)


def test_one_hot_targets_follow_the_heads():
    cfg = HANConfig(heads=(("a", ("x", "y", "z")), ("b", ("p", "q"))), embed_dim=8)
    first, second = one_hot_targets(np.array([[2, 0], [0, 1]]), cfg)
    assert first.tolist() == [[0, 0, 1], [1, 0, 0]] and second.tolist() == [[1, 0], [0, 1]]
