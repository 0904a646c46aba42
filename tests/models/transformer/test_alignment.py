"""Sentence-pair alignment: numpy oracles over given vectors, then the pretrained encoder."""

import numpy as np
import pytest

from models.record import InputError
from models.registry import get_mechanism
from models.transformer import alignment as sa

ALIGNMENT = get_mechanism("sentence-alignment")


def softmax(x, tau):
    z = x / tau
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def vectors(seed=0, t=4, s=5, d=6):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(t, d)).astype(np.float32), rng.normal(size=(s, d)).astype(np.float32)


QT = ["a", "b", "c", "d"]
KT = ["v", "w", "x", "y", "z"]


@pytest.mark.parametrize("score", sa.SCORES)
def test_global_alignment_matches_numpy_oracle(score):
    u, v = vectors()
    raw = {
        "dot": u @ v.T,
        "scaled-dot": u @ v.T / np.sqrt(u.shape[1]),
        "cosine": (u / np.linalg.norm(u, axis=1, keepdims=True)) @ (v / np.linalg.norm(v, axis=1, keepdims=True)).T,
    }[score]
    record = sa.align_vectors(u, v, QT, KT, score=score, temperature=0.7)
    np.testing.assert_allclose(record.extras["scores"], raw, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(record.weights, softmax(raw, 0.7), rtol=1e-4, atol=1e-6)
    assert record.axes == ("query", "key") and record.query_labels == tuple(QT) and record.key_labels == tuple(KT)
    assert record.meta["score"] == score and record.meta["window"] is None and record.meta["temperature"] == 0.7


def test_default_temperature_depends_on_the_score():
    u, v = vectors()
    record = sa.align_vectors(u, v, QT, KT, score="cosine")
    assert record.meta["temperature"] == sa.DEFAULT_TEMPERATURES["cosine"] == 0.05
    np.testing.assert_allclose(record.weights, softmax(record.extras["scores"], 0.05), rtol=1e-4, atol=1e-6)
    at_one = sa.align_vectors(u, v, QT, KT, score="cosine", temperature=1.0)
    np.testing.assert_allclose(at_one.weights, softmax(record.extras["scores"], 1.0), rtol=1e-4, atol=1e-6)
    assert at_one.weights.max() < record.weights.max()  # cosine ∈ [−1, 1]: at τ = 1 α is nearly flat


def test_local_window_centred_at_proportional_position_matches_oracle():
    u, v = vectors(t=4, s=8)
    keys = [f"k{j}" for j in range(8)]
    record = sa.align_vectors(u, v, QT, keys, score="dot", window=1, temperature=1.0)
    centers = np.arange(4) * 8 / 4  # p_t = t·S/T
    np.testing.assert_allclose(record.extras["window_center"], centers)
    assert int(record.extras["window_half_width"]) == 1
    raw = u @ v.T
    oracle = np.zeros((4, 8))
    for t in range(4):
        inside = np.abs(np.arange(8) - centers[t]) <= 1
        a = np.where(inside, np.exp(raw[t] - raw[t][inside].max()), 0.0)
        a /= a.sum()
        sigma = 0.5
        oracle[t] = a * np.exp(-((np.arange(8) - centers[t]) ** 2) / (2 * sigma**2))
    np.testing.assert_allclose(record.weights, oracle, rtol=1e-4, atol=1e-6)
    assert np.all(record.weights[0, 2:] == 0)  # outside the window: exactly zero


def test_best_pairs_take_each_rows_argmax_and_flag_mutual_pairs():
    u = np.eye(3, dtype=np.float32)
    v = np.array([[0, 1, 0], [1, 0, 0], [0.9, 0, 0.1]], dtype=np.float32)
    record = sa.align_vectors(u, v, ["a", "b", "c"], ["B", "A", "C"], score="cosine", temperature=0.05)
    pairs = sa.best_pairs(record)
    found = {(p.query_token, p.key_token): p for p in pairs}
    assert set(found) == {("a", "A"), ("b", "B"), ("c", "C")}
    assert found[("a", "A")].mutual and found[("b", "B")].mutual and found[("c", "C")].mutual
    assert found[("b", "B")].score == pytest.approx(1.0)
    assert [p.mutual for p in pairs] == sorted([p.mutual for p in pairs], reverse=True)


def test_bad_score_and_window_are_input_errors():
    u, v = vectors()
    with pytest.raises(InputError, match="cosine"):
        sa.align_vectors(u, v, QT, KT, score="bilinear")
    with pytest.raises(InputError, match="window"):
        sa.align_vectors(u, v, QT, KT, score="dot", window=999)


class FakeRunner:
    """hidden_states like models.transformer.records's runner: one-hot vectors per word."""

    def hidden_states(self, text, text_pair=None):
        words = text.lower().split()
        vocab = sorted({"the", "a", "cat", "sat", "on", "mat", "rug", "was", "sitting", *words})
        tokens = ["[CLS]", *words, "[SEP]"]
        hidden = np.zeros((len(tokens), len(vocab)), np.float32)
        for i, w in enumerate(words, start=1):
            hidden[i, vocab.index(w)] = 1.0
        hidden[0] = hidden[-1] = 1.0
        return tokens, hidden


def test_align_sentences_drops_special_tokens_and_rejects_empty_text():
    record = sa.align_sentences(FakeRunner(), "the cat", "a cat", score="cosine")
    assert record.query_labels == ("the", "cat") and record.key_labels == ("a", "cat")
    assert record.meta["text"] == "the cat"
    with pytest.raises(InputError, match="both"):
        sa.align_sentences(FakeRunner(), "   ", "a cat")
    with pytest.raises(InputError):
        sa.align_sentences(FakeRunner(), "the cat", "")


@pytest.fixture(scope="module")
def minilm():
    from models.transformer.records import shared_runner

    return shared_runner(None)


def test_paraphrases_align_with_the_pretrained_encoder(minilm):
    record = ALIGNMENT.build({"text": "The cat sat on the mat", "text_pair": "A cat was sitting on the rug"})
    q, k, w = list(record.query_labels), list(record.key_labels), record.weights
    assert q == ["the", "cat", "sat", "on", "the", "mat"]
    assert k == ["a", "cat", "was", "sitting", "on", "the", "rug"]
    best = {q[i]: k[j] for i, j in enumerate(w.argmax(axis=1))}
    assert best["cat"] == "cat" and best["mat"] == "rug" and best["sat"] == "sitting" and best["on"] == "on"
    assert w[q.index("cat"), k.index("cat")] > 0.9  # cosine at the default τ
    pairs = {(p.query_token, p.key_token) for p in sa.best_pairs(record) if p.mutual}
    assert {("cat", "cat"), ("mat", "rug"), ("sat", "sitting")} <= pairs
    # "mat" is closer to "rug" than to any other word of sentence 2 by raw cosine, too.
    assert record.extras["scores"][q.index("mat")].argmax() == k.index("rug")


def test_local_window_limits_alignment_to_the_proportional_band(minilm):
    record = ALIGNMENT.build(
        {"text": "The cat sat on the mat", "text_pair": "A cat was sitting on the rug", "window": 1, "score": "scaled-dot"}
    )
    centers = record.extras["window_center"]
    far = np.abs(np.arange(7)[None, :] - centers[:, None]) > 1
    assert np.all(record.weights[far] == 0) and record.meta["window"] == 1
    assert record.query_labels[5] == "mat" and record.key_labels[record.weights[5].argmax()] == "rug"


def test_cli_exports_the_alignment_with_score_and_window(minilm, tmp_path, capsys):
    import cli

    out = tmp_path / "align.npz"
    code = cli.main([
        "export", "--mechanism", "sentence-alignment", "--text", "The cat sat on the mat",
        "--text-pair", "A cat was sitting on the rug", "--score", "cosine", "--window", "2",
        "--format", "npz", "--out", str(out),
    ])
    assert code == 0
    data = np.load(out)
    assert data["weights"].shape == (6, 7) and data["weights"].dtype == np.float32
    assert list(data["query_labels"]) == ["the", "cat", "sat", "on", "the", "mat"]
    assert list(data["key_labels"])[-1] == "rug"
    assert data["window_center"].shape == (6,) and int(data["window_half_width"]) == 2
    assert '"score": "cosine"' in str(data["meta_json"])
    assert cli.main(["export", "--mechanism", "sentence-alignment", "--text", "cat", "--score", "bilinear",
                     "--format", "npz", "--out", str(out)]) == 2
    assert "score must be one of dot, scaled-dot, cosine" in capsys.readouterr().err
