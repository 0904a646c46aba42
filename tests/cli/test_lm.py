"""The CLI for decoder LMs: export from any folder, the default model, and one line for every bad folder."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import cli
from models.lm import records as lm_records

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "lm"


def _export(tmp_path, *args):
    out = tmp_path / "out.npz"
    code = cli.main(["export", "--mechanism", "lm", *args, "--format", "npz", "--out", str(out)])
    return code, out


def test_export_writes_weights_and_tokens(tmp_path):
    reference = np.load(FIXTURES / "qwen2" / "reference.npz")
    text = str(reference["text_1"])
    code, out = _export(tmp_path, "--model-dir", str(FIXTURES / "qwen2"), "--text", text)
    assert code == 0
    z = np.load(out)
    t = len(reference["ids_1"])
    assert z["weights"].shape == (2, 6, t, t) and z["weights"].dtype == np.float32
    np.testing.assert_allclose(z["weights"], reference["attention_1"], atol=1e-4)
    assert z["input_ids"].tolist() == reference["ids_1"].tolist() and len(z["tokens"]) == t
    meta = json.loads(str(z["meta_json"]))
    assert meta["architecture"] == "qwen2" and meta["layers"] == [0, 1]


def test_export_of_chosen_layers(tmp_path):
    code, out = _export(tmp_path, "--model-dir", str(FIXTURES / "gpt2_untied_scaled"), "--text", "the dog", "--layers", "2")
    assert code == 0 and np.load(out)["weights"].shape[:2] == (1, 3)


def test_without_a_folder_the_model_trained_here_is_used(tmp_path, monkeypatch):
    monkeypatch.setattr(lm_records, "DEFAULT_MODEL_DIR", FIXTURES / "gpt2")
    lm_records.forget_runners()
    code, out = _export(tmp_path, "--text", "the dog")
    lm_records.forget_runners()
    assert code == 0 and json.loads(str(np.load(out)["meta_json"]))["model"] == lm_records.DEFAULT_MODEL_NAME


def _broken(tmp_path, how):
    folder = tmp_path / "model"
    shutil.copytree(FIXTURES / "gpt2", folder)
    how(folder)
    return folder


def _drop_tensor(folder):
    tensors = load_file(str(folder / "model.safetensors"))
    del tensors["transformer.h.0.attn.c_attn.weight"]
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})


def _bad_config(folder):
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "n_head": 5}))


@pytest.mark.parametrize("how, message", [
    (_drop_tensor, "error: model: missing tensor transformer.h.0.attn.c_attn.weight (config.json asks for it)"),
    (_bad_config, "error: n_embd 32 is not divisible by n_head 5"),
    (lambda f: (f / "model.safetensors").rename(f / "pytorch_model.bin"), "holds only pickled PyTorch weights"),
    (lambda f: (f / "config.json").write_text('{"model_type": "t5"}'),
     "error: model_type 't5' is not supported; supported: gpt2, llama, mistral, qwen2, qwen3"),
])
def test_a_bad_folder_is_one_line_and_status_2(tmp_path, capsys, how, message):
    lm_records.forget_runners()
    code, _ = _export(tmp_path, "--model-dir", str(_broken(tmp_path, how)), "--text", "the dog")
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and message in err and "Traceback" not in err
