"""Parity with Hugging Face transformers (eager, PyTorch CPU) for every encoder family beside BERT.

tests/fixtures/encoders/<family>/ holds a tiny random folder as save_pretrained writes it (saved from the class
people download, with its prefix and pre-training head) and reference.npz, written by
tools/make_encoder_fixtures.py: AutoTokenizer's ids, every layer's attention and the last hidden states.
"""

from pathlib import Path

import numpy as np
import pytest

from models.transformer.records import load_runner

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "encoders"
CASES = {
    "roberta": ("english", "pair"),
    "xlm_roberta": ("english", "chinese", "pair"),
    "distilbert": ("english", "pair"),
    "electra": ("english", "pair"),
    "modernbert": ("long", "pair"),
}
TOLERANCE = 1e-4
LAYERS = {"roberta": 2, "xlm_roberta": 2, "distilbert": 2, "electra": 2, "modernbert": 4}


@pytest.fixture(scope="module")
def loaded():
    """{family: (runner, reference arrays)}, each loaded once."""
    out = {}
    for family in CASES:
        with np.load(FIXTURES / family / "reference.npz") as data:
            out[family] = (load_runner(FIXTURES / family), {key: data[key] for key in data.files})
    return out


def _inputs(reference, name):
    return str(reference[f"{name}/text"]), str(reference[f"{name}/text_pair"]) or None


@pytest.mark.parametrize("family, name", [(family, name) for family, names in CASES.items() for name in names])
def test_maps_and_last_hidden_states_match_transformers(loaded, family, name):
    runner, reference = loaded[family]
    text, pair = _inputs(reference, name)
    record = runner.attention(text, pair)
    np.testing.assert_array_equal(record.extras["input_ids"], reference[f"{name}/input_ids"])
    if f"{name}/token_type_ids" in reference:
        np.testing.assert_array_equal(record.extras["token_type_ids"], reference[f"{name}/token_type_ids"])
    assert record.weights.shape == (LAYERS[family], 4, *reference[f"{name}/attention"].shape[-2:])
    np.testing.assert_allclose(record.weights, reference[f"{name}/attention"], atol=TOLERANCE, rtol=0)
    tokens, hidden = runner.hidden_states(text, pair)
    assert tuple(tokens) == record.query_labels
    np.testing.assert_allclose(hidden, reference[f"{name}/last_hidden"], atol=TOLERANCE, rtol=0)


def test_the_references_are_not_trivial(loaded):
    # A map near uniform would match a forward that ignores positions or the window; these are not.
    for family, (_, reference) in loaded.items():
        for name in CASES[family]:
            maps = reference[f"{name}/attention"]
            assert maps.max() > 0.5, family
    modern = loaded["modernbert"][1]["long/attention"]  # layers 1 and 3 are sliding (window 8: 4 each side)
    t = modern.shape[-1]
    far = np.abs(np.arange(t)[:, None] - np.arange(t)[None, :]) > 4
    assert np.all(modern[[1, 3]][..., far] == 0) and np.all(modern[[0, 2]][..., far] > 0)


def test_special_tokens_are_the_familys_own(loaded):
    roberta, reference = loaded["roberta"]
    pair = roberta.attention(*_inputs(reference, "pair"))
    assert pair.query_labels[0] == "<s>" and pair.query_labels[-1] == "</s>"
    assert pair.query_labels.count("</s>") == 3  # <s> A </s></s> B </s>
    # RoBERTa's token types are all 0: the pair's segments come from the tokenizer's sequence ids
    first_b = pair.query_labels.index("</s>") + 2
    assert pair.meta["segments"] == [0] * first_b + [1] * (len(pair.query_labels) - first_b)
    assert not pair.extras["token_type_ids"].any()
    modern, reference = loaded["modernbert"]
    assert modern.attention(*_inputs(reference, "pair")).query_labels.count("[SEP]") == 2
    assert loaded["xlm_roberta"][0].config.max_tokens == 80  # 82 positions, offset by padding index 1 + 1


def test_the_unknown_notice_names_the_familys_unknown_token(loaded):
    # The tiny Unigram vocabulary has no full-width "！": XLM-R gives it <unk>'s id (keeping "！" as the token's
    # text), and the notice names <unk>.
    runner, reference = loaded["xlm_roberta"]
    record = runner.attention(*_inputs(reference, "chinese"))
    assert record.extras["input_ids"][record.query_labels.index("！")] == 3
    assert "<unk>" in str(record.meta["notice"]) and "！" in str(record.meta["notice"])


@pytest.mark.parametrize("family", ["roberta", "modernbert", "distilbert"])
def test_a_batch_padded_together_gives_each_texts_own_maps(loaded, family):
    # RoBERTa's positions count non-padding ids and ModernBERT's window meets the padding: neither may
    # change a shorter text's maps when it shares a padded batch with a longer one.
    runner, reference = loaded[family]
    texts = [_inputs(reference, name)[0] for name in CASES[family]] + ["the cat"]
    batch = runner.attention_batch(texts)
    for text, record in zip(texts, batch):
        np.testing.assert_allclose(record.weights, runner.attention(text).weights, atol=2e-6, rtol=0)
