"""Parity with Hugging Face transformers (eager, PyTorch CPU) on the pretrained MiniLM.

The reference arrays are tests/fixtures/minilm_hf_attention.npz, written by
tools/make_hf_fixture.py (torch is needed only there, not here).
"""

from pathlib import Path

import numpy as np
import pytest

from models.transformer.records import shared_runner

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "minilm_hf_attention.npz"
CASES = ("english", "paragraph", "chinese", "emoji", "accented", "pair", "two_tokens")
TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def reference():
    with np.load(FIXTURE) as data:
        return {key: data[key] for key in data.files}


@pytest.fixture(scope="module")
def runner():
    return shared_runner(None)


def _inputs(reference, name):
    text = str(reference[f"{name}/text"])
    pair = str(reference[f"{name}/text_pair"]) or None
    return text, pair


@pytest.mark.parametrize("name", CASES)
def test_attention_matches_hugging_face(reference, runner, name):
    text, pair = _inputs(reference, name)
    record = runner.attention(text, pair)
    np.testing.assert_array_equal(record.extras["input_ids"], reference[f"{name}/input_ids"])
    np.testing.assert_array_equal(record.extras["token_type_ids"], reference[f"{name}/token_type_ids"])
    ours = record.weights
    assert ours.shape[:2] == (6, 12) and ours.dtype == np.float32
    if name == "paragraph":
        heads, rows = reference[f"{name}/head_ids"], reference[f"{name}/row_ids"]
        assert ours.shape[-1] == reference[f"{name}/input_ids"].shape[0] > 280
        full = ours[np.arange(6), heads]  # one full map per layer
        np.testing.assert_allclose(full, reference[f"{name}/head_maps"], atol=TOLERANCE, rtol=0)
        np.testing.assert_allclose(ours[:, :, rows, :], reference[f"{name}/rows"], atol=TOLERANCE, rtol=0)
    else:
        np.testing.assert_allclose(ours, reference[f"{name}/attention"], atol=TOLERANCE, rtol=0)


def test_special_cases_tokenize_as_expected(reference, runner):
    assert runner.attention(*_inputs(reference, "two_tokens")).query_labels == ("[CLS]", "[SEP]")
    pair = runner.attention(*_inputs(reference, "pair"))
    assert pair.meta["segments"] == reference["pair/token_type_ids"].tolist()
    assert pair.query_labels.count("[SEP]") == 2


@pytest.mark.parametrize("name", ["english", "pair"])
def test_last_hidden_states_match_hugging_face(reference, runner, name):
    tokens, hidden = runner.hidden_states(*_inputs(reference, name))
    assert len(tokens) == hidden.shape[0] and hidden.dtype == np.float32
    np.testing.assert_allclose(hidden, reference[f"{name}/last_hidden"], atol=1e-4, rtol=0)


def test_the_shipped_compiler_settings_match_hugging_face_too():
    # The suite compiles with a faster, less tuned XLA backend (tests/conftest.py); the app does not.
    import os
    import subprocess
    import sys

    env = {**os.environ, "ATTENTION_LAB_TEST_FAST_COMPILE": "0",
           "XLA_FLAGS": os.environ.get("ATTENTION_LAB_SHIPPED_XLA_FLAGS", "")}
    root = Path(__file__).resolve().parents[3]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "english or paragraph or pair",
         "tests/models/transformer/test_parity.py::test_attention_matches_hugging_face"],
        cwd=root, env=env, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout[-2000:]
    assert "3 passed" in result.stdout, result.stdout[-2000:]
