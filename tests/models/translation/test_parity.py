"""Parity with Hugging Face transformers on tiny random translation models (no torch here).

tests/fixtures/translation/<name>/ holds folders as save_pretrained leaves them, with their tokenizer files
(Marian's .spm models and vocab.json; T5's, BART's and mBART's tokenizer.json), and transformers' outputs
(tools/make_translation_fixtures.py, run in the torch venv): the tokenizers' ids of a source and a target,
eager attentions (encoder, decoder, cross) and logits of the teacher-forced pair, and generate's greedy ids.
"""

from __future__ import annotations

import functools

import numpy as np

from models.translation.records import load_translator, translate
from tests.models.parity_helpers import fixture_names, reference_case

FIXTURES, NAMES = fixture_names("translation")
TOLERANCE = 1e-4
# Logits reach ±22 with these weights: transformers' own float32 logits differ from its float64 ones by up to 2.1e-4
# on them and ours by up to 3.3e-4 (t5_gated; measured when the fixtures were made), so the logits' bound is
# float32's reproducibility here, not the maps' 1e-4.
LOGITS_TOLERANCE = 1e-3
translator = functools.lru_cache(maxsize=None)(load_translator)


case = reference_case("translation", translator)


def test_every_family_has_a_fixture_each_under_1_mb():
    types = {translator(FIXTURES / name).arch.model_type for name in NAMES}
    assert types == {"marian", "t5", "bart", "mbart"}
    assert {translator(FIXTURES / name).arch.gated for name in NAMES if name.startswith("t5")} == {True, False}
    for name in NAMES:
        assert sum(p.stat().st_size for p in (FIXTURES / name).iterdir()) < 1_000_000


def test_tokenizer_ids_equal_transformers(case):
    model, ref = case
    for i in range(2):
        assert list(model.tokenizer.encode(str(ref[f"source_{i}"])).ids) == ref[f"src_ids_{i}"].tolist()
        assert list(model.tokenizer.encode(str(ref[f"target_{i}"]), target=True).ids) == ref[f"labels_{i}"].tolist()


def test_tokenizer_ids_of_harder_texts_equal_transformers(case):
    # Runs of spaces, a tab, emoji, accents, mixed scripts, a language code, a special token's text.
    model, ref = case
    texts = sorted(name for name in ref.files if name.startswith("tok_text_"))
    assert len(texts) == 5
    for name in texts:
        i, text = name.rsplit("_", 1)[1], str(ref[name])
        assert list(model.tokenizer.encode(text).ids) == ref[f"tok_source_{i}"].tolist(), text
        assert list(model.tokenizer.encode(text, target=True).ids) == ref[f"tok_target_{i}"].tolist(), text


def test_teacher_forced_attention_and_logits_equal_transformers(case):
    model, ref = case
    for i in range(2):
        done = translate(model, str(ref[f"source_{i}"]), str(ref[f"target_{i}"]))
        fed = (
            [model.tokenizer.encode(str(ref[f"target_{i}"]), target=True).ids[-1]]
            if model.arch.wrap_last_label
            else [model.arch.decoder_start_id]
        )
        assert [*fed, *done.output_ids[:-1]] == ref[f"decoder_in_{i}"].tolist()  # the model's own teacher forcing
        for kind in ("encoder", "decoder", "cross"):
            ours = getattr(done, kind)
            assert ours.dtype == np.float32 and ours.shape == ref[f"{kind}_{i}"].shape
            np.testing.assert_allclose(ours, ref[f"{kind}_{i}"], atol=TOLERANCE, rtol=0, err_msg=kind)
        np.testing.assert_allclose(done.logits, ref[f"logits_{i}"], atol=LOGITS_TOLERANCE, rtol=0)


def test_greedy_output_equals_generate(case):
    model, ref = case
    for i in range(2):
        expected = ref[f"generated_{i}"].tolist()
        ends = [j for j, token in enumerate(expected) if token in model.rules.eos_ids]
        expected = expected[: ends[0] + 1] if ends else expected  # generate pads after the end token
        done = translate(model, str(ref[f"source_{i}"]), max_new=len(ref[f"generated_{i}"]))
        assert list(done.output_ids) == expected
        assert not done.teacher_forced and done.cross.shape[2] == len(expected)


def test_the_fixtures_exercise_what_they_claim():
    # Each rule would pass unnoticed if no fixture depended on it.
    t5, gated = translator(FIXTURES / "t5"), translator(FIXTURES / "t5_gated")
    assert t5.arch.output_scale == t5.arch.width**-0.5 and gated.arch.output_scale == 1.0  # scale_decoder_outputs
    assert translator(FIXTURES / "marian").rules.banned == (translator(FIXTURES / "marian").arch.pad_id,)
    bart = translator(FIXTURES / "bart").rules
    assert bart.forced_bos >= 0 and bart.forced_eos >= 0
    mbart = translator(FIXTURES / "mbart")
    assert mbart.arch.wrap_last_label and mbart.arch.pre_norm and mbart.arch.encoder_layers != mbart.arch.decoder_layers
    for name in ("marian", "t5", "bart", "mbart"):  # the maps are far from uniform
        ref = np.load(FIXTURES / name / "reference.npz")
        assert ref["cross_0"].max() > 0.5 and ref["encoder_0"].max() > 0.5
