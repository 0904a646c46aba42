"""`cli.py export --mechanism han`: word α per sentence, sentence α, labels, prediction."""

import json

import numpy as np

from cli import main

TEXT = "We went there on a Monday. The waiter was rude and slow. We took the bus home."


def test_export_han_npz(tmp_path):
    out = tmp_path / "han.npz"
    assert main(["export", "--mechanism", "han", "--text", TEXT, "--format", "npz", "--out", str(out)]) == 0
    data = np.load(out)
    weights, sentence_weights = data["weights"], data["sentence_weights"]
    assert weights.shape == (3, 6)  # 3 sentences; the longest has 6 words
    assert list(data["query_labels"]) == ["We went there on a Monday.", "The waiter was rude and slow.", "We took the bus home."]
    assert list(data["key_labels"]) == [f"w{j}" for j in range(1, 7)]
    assert list(data["words"][2]) == ["We", "took", "the", "bus", "home.", ""]
    assert weights[2, 5] == 0.0  # padding past the sentence's end
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(sentence_weights.sum(), 1.0, rtol=1e-5)
    assert int(np.argmax(sentence_weights)) == 1  # the opinion sentence
    assert list(data["prediction"]) == ["negative", "service"]
    assert data["probabilities_sentiment"].shape == (2,) and data["probabilities_topic"].shape == (4,)
    assert list(data["classes_topic"]) == ["quality", "service", "price", "ambience"]
    assert str(data["mechanism"]) == "han" and list(data["axes"]) == ["sentence", "word"]


def test_export_han_json_and_batch(tmp_path):
    out = tmp_path / "han.json"
    assert main(["export", "--mechanism", "han", "--text", TEXT, "--format", "json", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["meta"]["prediction"] == {"sentiment": "negative", "topic": "service"}
    lines = tmp_path / "docs.txt"
    lines.write_text(TEXT + "\nThe soup was delicious. We sat outside.\n")
    folder = tmp_path / "many"
    assert main(["export", "--mechanism", "han", "--input-file", str(lines), "--format", "npz", "--out", str(folder)]) == 0
    second = np.load(folder / "0002.npz")
    assert list(second["prediction"]) == ["positive", "quality"]


def test_export_han_bad_input(tmp_path, capsys):
    out = tmp_path / "x.npz"
    assert main(["export", "--mechanism", "han", "--text", "   ", "--format", "npz", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "empty" in err and len(err.splitlines()) == 1
