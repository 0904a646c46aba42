"""`cli.py corpus`: a text file or a CSV column in, heads.csv / top_inputs.csv / statistics.npz out; bad input in one line."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

import cli
from models.corpus import run
from models.transformer.records import load_runner
from tests.cli.test_cli import cli as run_cli
from tests.models.transformer.tiny_bert import make_tiny_bert

ROOT = Path(__file__).resolve().parents[2]
LINES = ["the cat sat on the mat .", "", "hello world !", "a dog , a cat , a dog", "b"]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_bert(tmp_path_factory.mktemp("corpus-tiny"))


def test_a_text_file_gives_one_row_per_head_equal_to_the_pass(tiny_dir, tmp_path, capsys):
    corpus = tmp_path / "texts.txt"
    corpus.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    out = tmp_path / "stats"
    status = cli.main(["corpus", "--mechanism", "transformer", "--input-file", str(corpus), "--out", str(out),
                       "--model-dir", str(tiny_dir), "--quiet"])
    assert status == 0
    assert "4 texts" in capsys.readouterr().out
    with (out / "heads.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 2 * 4 and rows[0]["layer"] == "0" and rows[-1]["head"] == "3"
    expected = run.corpus_statistics(LINES, run.CorpusModel(load_runner(tiny_dir)))
    z = np.load(out / "statistics.npz")
    np.testing.assert_allclose(z["mean"], expected.mean, atol=1e-6)
    assert float(rows[5]["entropy_mean"]) == pytest.approx(expected.mean[1, 1, 0], abs=1e-6)
    assert int(z["count"]) == 4 and int(z["skipped"]) == 1 and not bool(z["stopped"])
    with (out / "top_inputs.csv").open(encoding="utf-8") as handle:
        top = list(csv.DictReader(handle))
    assert {row["text"] for row in top} <= set(LINES)
    # An existing output is not overwritten without --force.
    status = cli.main(["corpus", "--mechanism", "transformer", "--input-file", str(corpus), "--out", str(out),
                       "--model-dir", str(tiny_dir), "--quiet"])
    assert status == 2 and "--force" in capsys.readouterr().err


def test_the_lm_mechanism_writes_the_decoder_statistics(tmp_path, capsys):
    from models.corpus.heads import LM_STATISTIC_IDS
    from models.corpus.lm import LMCorpusModel
    from models.lm.records import load_runner as load_lm

    corpus = tmp_path / "texts.txt"
    corpus.write_text("The for statement iterates.\n\nprint(x) and print(x)\n", encoding="utf-8")
    out = tmp_path / "lm-stats"
    status = cli.main(["corpus", "--mechanism", "lm", "--input-file", str(corpus), "--out", str(out), "--quiet"])
    assert status == 0, capsys.readouterr().err
    z = np.load(out / "statistics.npz")
    assert tuple(z["statistics"]) == LM_STATISTIC_IDS and int(z["count"]) == 2
    expected = run.corpus_statistics(corpus.read_text(encoding="utf-8").splitlines(), LMCorpusModel(load_lm()))
    np.testing.assert_allclose(z["mean"], expected.mean, atol=1e-6)
    with (out / "heads.csv").open(encoding="utf-8") as handle:
        assert "first_mean" in next(csv.DictReader(handle))


def test_a_csv_column(tiny_dir, tmp_path, capsys):
    data = tmp_path / "data.csv"
    data.write_text('id,Text\n1,"the cat, the dog"\n2,hello world !\n3,"multi\nline cell"\n', encoding="utf-8")
    out = tmp_path / "csv-stats"
    status = cli.main(["corpus", "--mechanism", "transformer", "--input-file", str(data), "--column", "text",
                       "--out", str(out), "--model-dir", str(tiny_dir), "--quiet"])
    assert status == 0, capsys.readouterr().err
    assert int(np.load(out / "statistics.npz")["count"]) == 3
    status = cli.main(["corpus", "--mechanism", "transformer", "--input-file", str(data), "--column", "body",
                       "--out", str(tmp_path / "x"), "--model-dir", str(tiny_dir), "--quiet"])
    err = capsys.readouterr().err
    assert status == 2 and "no column 'body'" in err and "id, text" in err


@pytest.mark.parametrize("content,args,message", [
    (None, [], "input file not found"),
    (b"\xff\xfe bad", [], "not UTF-8"),
    (b"ok\n", ["--limit", "0"], "limit must be a whole number from 1"),
    (b"ok\n", ["--mechanism", "nope"], "invalid choice"),
    (b"\n \n", [], "no non-empty texts"),
])
def test_bad_input_is_one_line_with_status_2(tiny_dir, tmp_path, content, args, message):
    corpus = tmp_path / "in.txt"
    if content is not None:
        corpus.write_bytes(content)
    argv = ["corpus", "--input-file", str(corpus), "--out", str(tmp_path / "o"), "--model-dir", str(tiny_dir), "--quiet"]
    argv += args if "--mechanism" in args else ["--mechanism", "transformer", *args]
    result = run_cli(*argv)
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_the_registry_entry_exports_the_same_statistics(tmp_path, capsys):
    # `export --mechanism corpus` builds through the registry (Mechanism.read, then models/corpus/cli.py's
    # builder): the record holds the pass's means, one row per head, and the spread beside them.
    from models.corpus.lm import LMCorpusModel
    from models.lm.records import load_runner as load_lm

    corpus = tmp_path / "texts.txt"
    corpus.write_text("The for statement iterates.\n\nprint(x) and print(x)\nA third line.\n", encoding="utf-8")
    out = tmp_path / "corpus.npz"
    result = run_cli("export", "--mechanism", "corpus", "--corpus", str(corpus), "--model", "lm", "--limit", "3",
                     "--format", "npz", "--out", str(out))
    assert result.returncode == 0, result.stderr
    expected = run.corpus_statistics(corpus.read_text(encoding="utf-8").splitlines(), LMCorpusModel(load_lm()), limit=3)
    z = np.load(out)
    layers, heads, count = expected.mean.shape
    np.testing.assert_allclose(z["weights"], expected.mean.reshape(layers * heads, count), atol=1e-6)
    assert list(z["axes"]) == ["head", "statistic"]  # rows are heads, columns statistics (not queries and keys)
    assert int(expected.count) == 2  # the limit counts lines read, the blank one among them
    bad = run_cli("export", "--mechanism", "corpus", "--model", "gpt", "--format", "npz", "--out", str(out))
    assert bad.returncode == 2 and "model must be one of transformer, lm" in bad.stderr
