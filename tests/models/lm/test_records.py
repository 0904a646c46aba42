"""Decoder LM records: tokens as the folder's tokenizer gives them, causal maps, layers, notices, size bound."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np
import pytest

from models.lm import records as lm_records
from models.lm.records import MAX_RECORD_BYTES, LMRunner, load_runner, parse_layers, record_bytes
from models.record import InputError
from models.registry import get_mechanism

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "lm"


@pytest.fixture(scope="module")
def llama():
    return load_runner(FIXTURES / "llama")


def test_a_record_holds_every_layers_causal_maps_with_the_tokens(llama):
    reference = np.load(FIXTURES / "llama" / "reference.npz")
    record = llama.attention(str(reference["text_0"]))
    t = len(reference["ids_0"])
    assert record.mechanism == "lm" and record.axes == ("layer", "head", "query", "key")
    assert record.weights.shape == (2, 8, t, t) and record.weights.dtype == np.float32
    np.testing.assert_allclose(record.weights, reference["attention_0"], atol=1e-4)
    assert record.extras["input_ids"].tolist() == reference["ids_0"].tolist()
    assert record.query_labels[0] == "<s>" and record.meta["special_first"]  # the post-processor's BOS
    assert "".join(record.query_labels[1:]) == str(reference["text_0"])  # labels spell the text
    assert record.meta["architecture"] == "llama" and record.meta["num_kv_heads"] == 2
    assert record.meta["notice"] is None and not record.meta["truncated"]
    # loss_nats is the mean next-token loss, from the reference logits
    logits = reference["logits_0"].astype(np.float64)
    log_probs = logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True)) - logits.max(-1, keepdims=True)
    expected = -np.mean(log_probs[np.arange(t - 1), reference["ids_0"][1:]])
    assert record.meta["loss_nats"] == pytest.approx(expected, abs=1e-4)


def test_chosen_layers_only(llama):
    full = llama.attention("the lazy dog sleeps")
    one = llama.attention("the lazy dog sleeps", layers="1")
    assert one.weights.shape[0] == 1 and one.meta["layers"] == [1]
    np.testing.assert_allclose(one.weights[0], full.weights[1], atol=1e-6)


@pytest.mark.parametrize("spec, expected", [(None, (0, 1, 2, 3)), ("", (0, 1, 2, 3)), ("2", (2,)), ("0-2", (0, 1, 2)),
                                            ("3, 0", (0, 3)), ("1-2,2", (1, 2))])
def test_layer_specs(spec, expected):
    assert parse_layers(spec, 4) == expected


@pytest.mark.parametrize("spec", ["4", "-1", "2-1", "a", "0-", "1,,2", "9" * 30])
def test_a_bad_layer_spec_is_one_line(spec):
    with pytest.raises(InputError, match=r"^layers must be layer numbers from 0 to 3: one \(0\), a range \(0-3\) or a list \(0,3\); got"):
        parse_layers(spec, 4)


def test_a_text_outside_what_the_model_knows_gets_a_notice(llama):
    record = llama.attention("我爱自然语言处理。今天天气很好！")
    assert "are pieces of characters or unknown to the tokenizer" in record.meta["notice"]
    assert record.query_labels[1:3] == ("我", "…我")


def test_a_long_text_is_cut_with_a_notice():
    runner = load_runner(FIXTURES / "gpt2")  # 128 positions
    record = runner.attention("the dog " * 200)
    assert record.weights.shape[-1] == 128 and record.meta["truncated"]
    total = len(runner.lm.tokenizer.encode("the dog " * 200).ids)
    assert record.meta["notice"] == f"the text was cut to its first 128 of {total} tokens (gpt2 reads at most 128 here)"


def test_the_cut_notice_names_the_model_trained_here_in_the_readers_language():
    from ui.i18n import notice_text
    from viz.i18n_text import gettext_for

    runner = load_runner(None)  # the GPT trained here: 128 positions
    notice = runner.attention("the dog " * 200).meta["notice"]
    assert "(the GPT trained here reads at most 128 here)" in notice  # the English text, as the CLI prints it
    chinese = notice_text(notice, gettext_for("zh"))
    assert "在此训练的 GPT" in chinese and "trained here" not in chinese
    folder = load_runner(FIXTURES / "gpt2").attention("the dog " * 200).meta["notice"]
    assert "gpt2" in notice_text(folder, gettext_for("zh"))  # a folder keeps its own name


def test_maps_above_the_bound_are_refused_naming_layers_that_fit(llama, monkeypatch):
    monkeypatch.setattr(lm_records, "MAX_RECORD_BYTES", record_bytes(1, 8, 30) + 1)
    with pytest.raises(InputError) as info:
        llama.attention("the quick brown fox " * 6, layers="0-1")
    assert str(info.value).startswith("the attention of 2 layers × 8 heads over ")
    assert "choose fewer layers (layers 0) or a shorter text" in str(info.value)
    assert MAX_RECORD_BYTES >= record_bytes(12, 12, 1024)  # GPT-2 small's every map at 1,024 tokens fits


def test_empty_text_is_one_line(llama):
    for text in ("", "   "):
        with pytest.raises(InputError, match="type some text"):
            llama.attention(text)


def test_the_registry_builds_from_a_folder_and_bounds_its_size(tmp_path):
    mechanism = get_mechanism("lm")
    record = mechanism.build({"text": "the dog", "model_dir": str(FIXTURES / "qwen3"), "layers": "0"})
    assert record.weights.shape[:2] == (1, 4) and record.meta["architecture"] == "qwen3"
    estimate = mechanism.estimated_bytes({"text": "the dog", "model_dir": str(FIXTURES / "qwen3")})
    assert estimate >= record_bytes(2, 4, len(record.query_labels)) * 2
    with pytest.raises(InputError, match="layers must be"):
        mechanism.build({"text": "the dog", "model_dir": str(FIXTURES / "qwen3"), "layers": "7"})


def test_the_default_model_is_the_one_trained_here_or_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(lm_records, "DEFAULT_MODEL_DIR", tmp_path / "checkpoints" / "lm")
    monkeypatch.setattr(lm_records, "ROOT", tmp_path)
    with pytest.raises(InputError, match=r"^the model trained here is not in checkpoints/lm: train it with"):
        load_runner(None)
    monkeypatch.setattr(lm_records, "DEFAULT_MODEL_DIR", FIXTURES / "gpt2")
    runner = load_runner(None)
    assert isinstance(runner, LMRunner) and runner.name == lm_records.DEFAULT_MODEL_NAME


def test_one_runner_per_folder_is_shared_bounded_and_still_checked_against_a_bound(monkeypatch):
    monkeypatch.setattr(lm_records, "shared_runner", type(lm_records.shared_runner)(lm_records.shared_runner._load, lm_records.RUNNERS_KEPT))
    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "lm"
    gpt2 = lm_records.shared_runner(str(fixtures / "gpt2"))
    # Another spelling of the same folder (relative, with ..) is the same loaded model, not a second copy.
    monkeypatch.chdir(fixtures)
    assert lm_records.shared_runner("llama/../gpt2") is gpt2
    assert gpt2.weight_bytes == sum(4 * int(np.prod(x.shape)) for x in jax.tree.leaves(gpt2.lm.state))
    # A bounded caller is refused a model already loaded for an unbounded one, in one line.
    with pytest.raises(InputError, match="more than the .* this server allows"):
        lm_records.shared_runner(fixtures / "gpt2", max_bytes=gpt2.weight_bytes - 1)
    assert lm_records.shared_runner(fixtures / "gpt2", max_bytes=gpt2.weight_bytes) is gpt2
    # At most RUNNERS_KEPT folders stay loaded; the least recently used goes first.
    llama = lm_records.shared_runner(fixtures / "llama")
    lm_records.shared_runner(fixtures / "gpt2")
    lm_records.shared_runner(fixtures / "mistral")
    assert lm_records.shared_runner.loaded() == [str(fixtures / "gpt2"), str(fixtures / "mistral")]
    assert lm_records.shared_runner(fixtures / "llama") is not llama  # loaded again after it was dropped
