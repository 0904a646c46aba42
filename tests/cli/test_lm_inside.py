"""The CLI for lm-generate and lm-neuron: every format, the arrays each holds, and one line (exit 2) for bad values."""

import json
from pathlib import Path

import numpy as np
import pytest

import cli

ROOT = Path(__file__).resolve().parents[2]
LLAMA = str(ROOT / "tests" / "fixtures" / "lm" / "llama")
TEXT = "The cat sat on the mat. The cat"


def _export(tmp_path, mechanism, fmt, *args):
    out = tmp_path / f"out.{fmt}"
    code = cli.main(["export", "--mechanism", mechanism, "--model-dir", LLAMA, "--text", TEXT, *args,
                     "--format", fmt, "--out", str(out)])
    return code, out


def test_generate_exports_the_maps_and_the_probabilities(tmp_path):
    code, out = _export(tmp_path, "lm-generate", "npz", "--max-new", "5", "--temperature", "0.8", "--top-k", "4",
                        "--seed", "3")
    assert code == 0
    z = np.load(out)
    meta = json.loads(str(z["meta_json"]))
    n = meta["n_prompt"]
    assert z["weights"].shape == (2, 8, n + 5, n + 5) and z["chosen_prob"].shape == (5,)
    assert z["top_ids"].shape == (5, 5) and int(z["n_prompt"]) == n and len(z["ids"]) == n + 5
    assert meta["temperature"] == 0.8 and meta["top_k"] == 4 and meta["seed"] == 3


def test_neuron_exports_q_k_and_their_product(tmp_path):
    code, out = _export(tmp_path, "lm-neuron", "npz", "--layer", "1", "--head", "3", "--position", "4")
    assert code == 0
    z = np.load(out)
    assert z["weights"].shape == (len(z["k"]),) and z["q"].shape == (4,)
    np.testing.assert_allclose(z["product"], z["q"][None] * z["k"], rtol=1e-6)
    assert json.loads(str(z["meta_json"]))["query"] == 4


@pytest.mark.parametrize("mechanism", ["lm-generate", "lm-neuron"])
@pytest.mark.parametrize("fmt", ["csv", "json", "png"])
def test_every_format(tmp_path, mechanism, fmt):
    code, out = _export(tmp_path, mechanism, fmt, *(["--max-new", "3"] if mechanism == "lm-generate" else []))
    assert code == 0 and out.stat().st_size > 0
    if fmt == "json":
        assert json.loads(out.read_text())["mechanism"] == mechanism


@pytest.mark.parametrize("mechanism, args, message", [
    ("lm-generate", ["--max-new", "300"], "max_new must be a whole number from 1 to 256"),
    ("lm-generate", ["--temperature", "3"], "temperature must be a number from 0 to 2"),
    ("lm-generate", ["--top-k", "101"], "top_k must be a whole number from 0 to 100"),
    ("lm-neuron", ["--layer", "5"], "layer must be a whole number from 0 to 1"),
    ("lm-neuron", ["--head", "8"], "head must be a whole number from 0 to 7"),
    ("lm-neuron", ["--position", "900"], "query position must be a whole number from 0 to"),
])
def test_bad_values_are_one_line_and_exit_2(tmp_path, capsys, mechanism, args, message):
    code, _ = _export(tmp_path, mechanism, "npz", *args)
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and message in err and "Traceback" not in err, err


def test_knockout_and_lens_exports_draw_the_pages_figures_not_an_alpha_map():
    # A knock-out grid holds signed changes: its export is centred on 0 (a map of α from 0 would paint every
    # negative change in the lowest colour); a lens grid writes each layer's top token in its cells.
    from models.registry import get_mechanism
    from viz.export import export_bytes

    text = {"text": "The cat sat on the mat. The cat sat on the"}
    knockout = get_mechanism("lm-knockout").build(text)
    assert knockout.weights.min() < 0 < knockout.weights.max()
    page = export_bytes(knockout, "html").decode()
    assert '"zmid":0.0' in page.replace(" ", "") and "\\u0394 probability" in page  # Δ, as JSON writes it
    lens = get_mechanism("lm-logit-lens").build(text)
    page = export_bytes(lens, "html").decode()
    assert '"texttemplate":"%{text}"' in page.replace(" ", "")


def test_flow_exports_the_graph_and_its_route_and_refuses_a_bad_threshold(tmp_path, capsys):
    code, out = _export(tmp_path, "flow", "npz", "--threshold", "0.04", "--position", "-1")
    assert code == 0
    z = np.load(out)
    layers, tokens = z["weights"].shape[:2]
    assert z["weights"].shape == (layers, tokens, tokens) and z["head_edges"].shape[::2] == (layers, tokens)
    # An attention edge is the sum of its heads' parts; the route starts at the last token's last state.
    np.testing.assert_allclose(z["weights"], z["head_edges"].sum(1), atol=1e-5)
    assert z["route_nodes"][-1, -1] and z["route_nodes"][-1].sum() == 1
    assert np.all(z["weights"][z["route_edges"]] > 0.04)
    code, _ = _export(tmp_path, "flow", "npz", "--threshold", "1.5")
    assert code == 2 and len(capsys.readouterr().err.strip().splitlines()) == 1
