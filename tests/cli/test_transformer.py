"""The CLI for the transformer mechanism: single export, pairs, --model-dir, batch files, bad input."""

import io
import json
from pathlib import Path

import numpy as np
import pytest

import cli
from tests.cli.test_cli import cli as run_cli
from tests.models.transformer.tiny_bert import make_tiny_bert

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_bert(tmp_path_factory.mktemp("cli-tiny"))


def test_export_pair_with_the_default_model(tmp_path):
    out = tmp_path / "pair.npz"
    args = ["export", "--mechanism", "transformer", "--text", "Hello world!", "--text-pair", "Bonjour."]
    result = run_cli(*args, "--format", "npz", "--out", str(out))
    assert result.returncode == 0, result.stderr
    z = np.load(io.BytesIO(out.read_bytes()))
    tokens = ["[CLS]", "hello", "world", "!", "[SEP]", "bon", "##jou", "##r", ".", "[SEP]"]
    assert z["query_labels"].tolist() == z["key_labels"].tolist() == tokens
    assert z["weights"].shape == (6, 12, 10, 10) and z["weights"].dtype == np.float32
    assert z["token_type_ids"].tolist() == [0] * 5 + [1] * 5
    assert json.loads(str(z["meta_json"]))["model"] == "all-MiniLM-L6-v2"


def test_model_dir_and_input_file_write_one_record_per_line(tiny_dir, tmp_path, capsys):
    lines = tmp_path / "lines.txt"
    lines.write_text("the cat sat\n\n" + " ".join(["dog"] * 40) + "\nhello world\n", encoding="utf-8")
    out = tmp_path / "out"
    export = ["export", "--mechanism", "transformer", "--model-dir", str(tiny_dir)]
    code = cli.main([*export, "--input-file", str(lines), "--format", "json", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    files = sorted(p.name for p in out.iterdir())
    assert files == ["0001.json", "0003.json", "0004.json"]  # named by input line
    records = [json.loads((out / name).read_text()) for name in files]
    assert records[0]["query_labels"] == ["[CLS]", "the", "cat", "sat", "[SEP]"]
    assert records[1]["shape"] == [2, 4, 42, 42] and records[2]["query_labels"][1:3] == ["hello", "world"]
    assert records[0]["meta"]["model"] == tiny_dir.name


def test_truncation_notice_is_exported(tiny_dir, tmp_path):
    out = tmp_path / "long.npz"
    export = ["export", "--mechanism", "transformer", "--model-dir", str(tiny_dir)]
    code = cli.main([*export, "--text", "cat " * 100, "--format", "npz", "--out", str(out)])
    assert code == 0
    z = np.load(out)
    meta = json.loads(str(z["meta_json"]))
    assert z["weights"].shape == (2, 4, 64, 64) and meta["truncated"] and "cut to 64 tokens" in meta["notice"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--text", "   "], "The text is empty"),
        (["--text", "hi", "--model-dir", "{missing}"], "model folder not found"),
        (["--text", "hi", "--model-dir", "{not_bert}"], "not a BERT-family encoder"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, extra, message):
    not_bert = tmp_path / "gpt"
    not_bert.mkdir()
    (not_bert / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    extra = [a.format(missing=tmp_path / "missing", not_bert=not_bert) for a in extra]
    code = cli.main(
        ["export", "--mechanism", "transformer", *extra, "--format", "npz", "--out", str(tmp_path / "x.npz")]
    )
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1


ENCODERS = Path(__file__).resolve().parents[1] / "fixtures" / "encoders"


@pytest.mark.parametrize("family", ["roberta", "xlm_roberta", "distilbert", "electra", "modernbert"])
def test_an_encoder_folder_of_each_family_exports_hugging_faces_maps(family, tmp_path):
    reference = np.load(ENCODERS / family / "reference.npz")
    case = "long" if family == "modernbert" else "english"  # ModernBERT's case is longer than its window
    out = tmp_path / "maps.npz"
    code = cli.main(["export", "--mechanism", "transformer", "--model-dir", str(ENCODERS / family),
                     "--text", str(reference[f"{case}/text"]), "--format", "npz", "--out", str(out)])
    assert code == 0
    np.testing.assert_allclose(np.load(out)["weights"], reference[f"{case}/attention"], atol=1e-4)
