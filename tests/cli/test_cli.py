"""The command line: list, export in every format, batch files, bad input."""

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from models.registry import mechanism_ids

ROOT = Path(__file__).resolve().parents[2]


def cli(*args, cwd=ROOT) -> subprocess.CompletedProcess:
    """Runs `cli.py *args` in this process, in the folder `cwd`: its exit status, stdout and stderr.

    In-process, the models load and compile once per test worker, where a process of its own costs
    about 1.3 s of CPU; cli_process runs cli.py as its own process, as a user does."""
    from cli import main

    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main([str(arg) for arg in args])
            except SystemExit as stop:  # what argparse does on its own errors
                status = stop.code if isinstance(stop.code, int) else 1
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(["cli.py", *args], status, out.getvalue(), err.getvalue())


def cli_process(*args, cwd=ROOT) -> subprocess.CompletedProcess:
    """Runs `python cli.py *args` as a process of its own."""
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def test_list_prints_every_registered_id():
    for result in (cli("list"), cli_process("list")):  # in this process, and as a script of its own
        assert result.returncode == 0
        assert result.stdout.split() == mechanism_ids()


def test_a_bad_command_exits_2_with_one_line_from_the_script_too(tmp_path):
    result = cli_process("export", "--mechanism", "qkv-dot", "--query", "a,b", "--format", "json", "--out", "x.json",
                         cwd=tmp_path)
    assert result.returncode == 2 and "numbers" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


@pytest.mark.parametrize("fmt", ["npz", "json", "csv", "npy", "png", "svg", "pdf", "html"])
def test_export_every_format(tmp_path, fmt):
    out = tmp_path / f"a.{fmt}"
    result = cli("export", "--mechanism", "qkv-scaled-dot", "--query", "1,2", "--format", fmt, "--out", str(out))
    assert result.returncode == 0, result.stderr
    data = out.read_bytes()
    signatures = {"png": b"\x89PNG", "pdf": b"%PDF", "svg": b"<svg", "npy": b"\x93NUMPY", "npz": b"PK"}
    if fmt in signatures:
        assert data.startswith(signatures[fmt])
    if fmt == "npz":
        z = np.load(io.BytesIO(data))
        assert z["weights"].dtype == np.float32 and z["weights"].shape == (1, 5)
        assert str(z["mechanism"]) == "qkv-scaled-dot"
        assert z["key_labels"].tolist() == ["cat", "dog", "car", "truck", "bicycle"]
        np.testing.assert_allclose(z["weights"].sum(), 1.0, rtol=1e-5)
    if fmt == "json":
        assert json.loads(data)["query_labels"] == ["query"]


def test_input_file_writes_one_file_per_line_named_by_its_line(tmp_path):
    # A blank line is skipped and said, and the files keep the input's line numbers: 0003 is line 3.
    lines = tmp_path / "queries.txt"
    lines.write_text("3,0\n\n0,3\n-1,-1\n")
    out = tmp_path / "out"
    result = cli("export", "--mechanism", "qkv-dot", "--input-file", str(lines), "--format", "json", "--out", str(out))
    assert result.returncode == 0, result.stderr
    files = sorted(p.name for p in out.iterdir())
    assert files == ["0001.json", "0003.json", "0004.json"]
    assert "wrote 3 files" in result.stdout and "1 blank line skipped" in result.stdout
    first = json.loads((out / "0001.json").read_text())
    second = json.loads((out / "0003.json").read_text())
    assert np.argmax(first["weights"][0]) == 0 and np.argmax(second["weights"][0]) == 2  # cat, then car


@pytest.mark.parametrize(
    "args, message",
    [
        (["export", "--mechanism", "nope", "--format", "json", "--out", "x.json"], "unknown mechanism"),
        (["export", "--mechanism", "qkv-dot", "--format", "json", "--out", "no_such_folder/x.json"],
         "--out's folder no_such_folder does not exist"),
        (["export", "--mechanism", "qkv-dot", "--query", "a,b", "--format", "json", "--out", "x.json"], "numbers"),
        (["export", "--mechanism", "qkv-dot", "--format", "gif", "--out", "x.gif"], "invalid choice"),
        (["export", "--mechanism", "qkv-dot", "--input-file", "missing.txt", "--format", "json", "--out", "d"], "not found"),
        (["export", "--mechanism", "qkv-dot", "--temperature", "0", "--format", "json", "--out", "x.json"], "temperature"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, args, message):
    result = cli(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_an_existing_out_is_refused_unless_forced_and_the_input_is_never_overwritten(tmp_path):
    out = tmp_path / "a.json"
    out.write_text("keep me")
    args = ["export", "--mechanism", "qkv-dot", "--query", "1,2", "--format", "json", "--out", str(out)]
    refused = cli(*args)
    assert refused.returncode == 2 and "exists; pass --force" in refused.stderr
    assert out.read_text() == "keep me"
    assert cli(*args, "--force").returncode == 0 and json.loads(out.read_text())["mechanism"] == "qkv-dot"
    lines = tmp_path / "queries.txt"
    lines.write_text("1,0\n0,1\n")
    folder = tmp_path / "batch"
    folder.mkdir()
    (folder / "old.txt").write_text("x")
    batch = ["export", "--mechanism", "qkv-dot", "--input-file", str(lines), "--format", "json", "--out", str(folder)]
    assert "not empty; pass --force" in cli(*batch).stderr
    into_input = cli("export", "--mechanism", "qkv-dot", "--input-file", str(lines), "--format", "json",
                     "--out", str(tmp_path))
    assert into_input.returncode == 2 and "input file's folder" in into_input.stderr
    named_like_an_output = tmp_path / "0001.json"
    named_like_an_output.write_text("1,0\n")
    forced = cli("export", "--mechanism", "qkv-dot", "--input-file", str(named_like_an_output), "--format", "json",
                 "--out", str(tmp_path), "--force")
    assert forced.returncode == 2 and "is the input file" in forced.stderr
    assert named_like_an_output.read_text() == "1,0\n" and lines.read_text() == "1,0\n0,1\n"
    image = tmp_path / "scene.png"
    image.write_bytes((ROOT / "docs" / "examples" / "scene.png").read_bytes())
    same = cli("export", "--mechanism", "soft", "--image", str(image), "--format", "png", "--out", str(image), "--force")
    assert same.returncode == 2 and "overwrite the input image" in same.stderr


def test_a_flag_the_mechanism_does_not_declare_exits_2_naming_what_it_takes():
    result = cli("export", "--mechanism", "han", "--text", "Good food. We left.", "--patch", "8", "--format", "json",
                 "--out", "x.json")
    assert result.returncode == 2
    assert result.stderr.strip() == "error: han does not take --patch; it takes --text"
    listing = cli("options", "hard")
    assert listing.returncode == 0 and "--samples" in listing.stdout and "from 0 to 2,000" in listing.stdout


def test_batches_are_built_and_written_in_chunks(tmp_path, monkeypatch, capsys):
    import cli as cli_module
    from models.registry import Mechanism

    sizes = []
    original = Mechanism.build_many

    def counting(self, raw_list):
        sizes.append(len(raw_list))
        return original(self, raw_list)

    monkeypatch.setattr(Mechanism, "build_many", counting)
    lines = tmp_path / "q.txt"
    lines.write_text("\n".join(f"{i % 3},1" for i in range(70)))
    assert cli_module.main(["export", "--mechanism", "qkv-dot", "--input-file", str(lines), "--format", "npy",
                            "--out", str(tmp_path / "out")]) == 0
    assert sizes == [32, 32, 6] and len(list((tmp_path / "out").iterdir())) == 70
    big = tmp_path / "big.txt"
    big.write_bytes(b"1,1\n" * (cli_module.MAX_INPUT_FILE_BYTES // 4 + 1))
    assert cli_module.main(["export", "--mechanism", "qkv-dot", "--input-file", str(big), "--format", "npy",
                            "--out", str(tmp_path / "o2")]) == 2
    assert "over 5 MB" in capsys.readouterr().err
