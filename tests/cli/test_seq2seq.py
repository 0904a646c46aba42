"""`cli.py export` for the seq2seq mechanisms, on the committed checkpoints (in-process)."""

import json

import numpy as np
import pytest

from cli import main
from models.seq2seq.model import VARIANTS

TEXT = "Wednesday 9 May 2018"


@pytest.mark.parametrize("variant", VARIANTS)
def test_export_npz_for_every_variant(variant, tmp_path):
    out = tmp_path / "f.npz"
    assert main(["export", "--mechanism", variant, "--text", TEXT, "--format", "npz", "--out", str(out)]) == 0
    data = np.load(out)
    assert data["weights"].dtype == np.float32 and data["weights"].shape == (10, len(TEXT))
    assert list(data["key_labels"]) == list(TEXT)
    assert len(data["query_labels"]) == 10
    assert np.all(data["weights"].sum(-1) <= 1 + 1e-5)
    # "Wednesday 9 May 2018" mixes two training formats, so only the shape of the output is
    # asserted; a year-first date is in every variant's reach (local-m included).
    assert "".join(data["query_labels"])[4::3] == "--"
    iso = tmp_path / "iso.npz"
    assert main(["export", "--mechanism", variant, "--text", "2018/05/09", "--format", "npz", "--out", str(iso)]) == 0
    assert "".join(np.load(iso)["query_labels"]) == "2018-05-09"
    if variant in ("local-m", "local-p"):
        assert data["window_center"].shape == (10,) and data["window_center"].dtype == np.float32
        assert int(data["window_half_width"]) == 3
    else:
        assert "window_center" not in data.files


def test_window_flag_input_file_and_unknown_characters(tmp_path):
    out = tmp_path / "w.npz"
    assert main(["export", "--mechanism", "local-p", "--text", "2018/05/09", "--window", "5",
                 "--format", "npz", "--out", str(out)]) == 0
    assert int(np.load(out)["window_half_width"]) == 5
    lines = tmp_path / "in.txt"
    lines.write_text("9 May 2018\n2018年5月9日\n\n9 May 2018 ☃\n", encoding="utf-8")
    folder = tmp_path / "many"
    assert main(["export", "--mechanism", "bahdanau", "--input-file", str(lines), "--format", "json",
                 "--out", str(folder)]) == 0
    files = sorted(folder.iterdir())
    assert [f.name for f in files] == ["0001.json", "0002.json", "0004.json"]  # named by input line
    records = [json.loads(f.read_text(encoding="utf-8")) for f in files]
    assert records[1]["key_labels"] == list("2018年5月9日")
    assert "".join(records[1]["query_labels"]) == "2018-05-09"
    assert records[2]["key_labels"][-1] == "<unk>"
    assert any("☃" in n for n in records[2]["meta"]["notices"])


@pytest.mark.parametrize(
    "args, message",
    [
        (["--text", "   "], "empty"),
        (["--text", "9 May 2018", "--window", "0"], "window must be a whole number from 1 to 10, got '0'"),
        ([], "give the text"),
    ],
)
def test_bad_input_exits_2_with_one_line(args, message, tmp_path, capsys):
    code = main(["export", "--mechanism", "local-m", *args, "--format", "npz", "--out", str(tmp_path / "x.npz")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1


def test_too_long_text_is_truncated_with_a_notice(tmp_path):
    out = tmp_path / "long.json"
    assert main(["export", "--mechanism", "luong-general", "--text", "9 May 2018, " * 8, "--format", "json",
                 "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert len(record["key_labels"]) == 40 and record["meta"]["truncated"]
    assert any("capped at 40" in n for n in record["meta"]["notices"])


def test_notices_go_to_stderr_one_line_each(tmp_path, capsys):
    # A CSV holds no notice: what the page would say beside the figure is said on stderr.
    assert main(["export", "--mechanism", "bahdanau", "--text", "03/03/1998", "--format", "csv",
                 "--out", str(tmp_path / "x.csv")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("notice: this does not look like a date the model knows")
    lines = tmp_path / "in.txt"
    lines.write_text("9 May 2018\n\n12/25/2019\n", encoding="utf-8")
    assert main(["export", "--mechanism", "bahdanau", "--input-file", str(lines), "--format", "csv",
                 "--out", str(tmp_path / "many")]) == 0
    captured = capsys.readouterr()
    assert [e[:30] for e in captured.err.splitlines()] == ["notice: line 3: this does not "]
    assert "1 blank line skipped" in captured.out


def test_no_attention_exports_the_output_and_its_context_vector(tmp_path):
    from models.seq2seq.records import variant_weights

    width = 2 * variant_weights("no-attention")[0].encoder_hidden
    date = "Wednesday, May 9, 2018"
    paths = {}
    for fmt in ("npz", "json", "csv", "npy", "html"):
        paths[fmt] = tmp_path / f"c.{fmt}"
        assert main(["export", "--mechanism", "no-attention", "--text", date, "--format", fmt,
                     "--out", str(paths[fmt])]) == 0
    data = np.load(paths["npz"])
    c = data["weights"]
    assert c.dtype == np.float32 and c.shape == (width,) and list(data["axes"]) == ["unit"]
    assert np.any(c < 0) and np.all(np.abs(c) <= 1)  # a GRU state, not a distribution
    meta = json.loads(str(data["meta_json"]))
    assert meta["output"] == "2018-05-09" and meta["attention"] is False and "h_T" in meta["context"]
    record = json.loads(paths["json"].read_text())
    np.testing.assert_allclose(record["weights"], c, atol=1e-6)
    assert record["meta"]["output"] == "2018-05-09" and record["key_labels"][0] == "fwd 0"
    np.testing.assert_array_equal(np.load(paths["npy"]), c)
    header, row = paths["csv"].read_text().splitlines()
    assert header.split(",")[1:3] == ["fwd 0", "fwd 1"] and row.startswith("c,")
    np.testing.assert_allclose([float(x) for x in row.split(",")[1:]], c, rtol=1e-6)
    assert "no-attention" in paths["html"].read_text()
    from models.registry import get_mechanism
    from viz.figures import record_figure

    fig = record_figure(get_mechanism("no-attention").build({"text": date}))  # what png/svg/pdf/html draw
    assert fig.layout.yaxis.title.text == "c" and np.allclose(fig.data[0].y, c)


def test_no_attention_takes_no_window(tmp_path, capsys):
    code = main(["export", "--mechanism", "no-attention", "--text", "9 May 2018", "--window", "3",
                 "--format", "npz", "--out", str(tmp_path / "x.npz")])
    err = capsys.readouterr().err
    assert code == 2 and "window" in err and err.count("\n") == 1
