"""Records of translation folders: labels, shapes, the alignment summary (against a hand-made oracle), the
registry builders' dispatch between the date model and a folder, refusals of configs and folders."""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from models import options as o
from models.encdec.records import decoding_step_record
from models.entry import Mechanism
from models.record import InputError
from models.registry_translation import BATCH_BUILDER, BUILDER, TRANSLATION_OPTIONS
from models.translation.config import read_arch
from models.translation.records import alignment_summary, load_translator, to_record, translate

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "translation"
translator = functools.lru_cache(maxsize=None)(load_translator)


def _entry(variant: str) -> Mechanism:
    return Mechanism(
        id=f"transformer-{variant}",
        name=variant,
        paper="",
        formula="",
        page="pages/x.py",
        summary="",
        family="encdec",
        variant=variant,
        builder=BUILDER,
        batch_builder=BATCH_BUILDER,
        options=(*o.ENCDEC_OPTIONS, *TRANSLATION_OPTIONS),
    )


def test_alignment_summary_equals_a_hand_made_oracle():
    # 2 layers × 2 heads, 3 output pieces (the last one special) × 4 source pieces (the last one special).
    rng = np.random.default_rng(0)
    cross = rng.dirichlet(np.ones(4), size=(2, 2, 3)).astype(np.float32)
    out, src = ("▁猫", "坐", "</s>"), ("▁The", "▁cat", "▁sat", "</s>")
    summary = alignment_summary(cross, out, src, {"</s>"})
    mean = cross.mean(axis=(0, 1))
    np.testing.assert_allclose(summary["alignment"], mean, atol=1e-7)
    np.testing.assert_allclose(summary["alignment"].sum(-1), 1.0, atol=1e-6)
    np.testing.assert_allclose(summary["alignment_by_layer"], cross.mean(axis=1), atol=1e-7)
    expected = sorted(
        (
            [out[t], src[int(np.argmax(mean[t, :3]))], float(mean[t, :3].max()), t, int(np.argmax(mean[t, :3]))]
            for t in range(2)
        ),
        key=lambda p: -p[2],
    )
    assert [p[:2] + p[3:] for p in summary["pairs"]] == [p[:2] + p[3:] for p in expected]
    assert [p[2] for p in summary["pairs"]] == pytest.approx([p[2] for p in expected], abs=1e-6)
    chosen = {p[4] for p in expected}
    unattended = [[src[s], s, float(mean[:, s].max())] for s in range(3) if s not in chosen]
    assert [p[:2] for p in summary["unattended"]] == [p[:2] for p in unattended] and unattended
    assert [p[2] for p in summary["unattended"]] == pytest.approx([p[2] for p in unattended], abs=1e-6)


def test_records_of_a_teacher_forced_pair():
    model = translator(FIXTURES / "marian")
    done = translate(model, "The cat sat on the mat.", "猫坐在垫子上。")
    layers, heads = model.arch.decoder_layers, model.arch.decoder_heads
    s, t = len(done.source.ids), len(done.output_ids)
    records = {
        kind: to_record(f"transformer-{kind}", kind, done, model.specials()) for kind in ("encoder", "decoder", "cross")
    }
    assert records["encoder"].weights.shape == (model.arch.encoder_layers, model.arch.encoder_heads, s, s)
    assert records["cross"].weights.shape == (layers, heads, t, s)
    assert records["cross"].axes == ("layer", "head", "query", "key")
    assert records["cross"].key_labels == done.source.pieces and done.source.pieces[-1] == "</s>"
    assert records["cross"].query_labels == done.output_pieces
    assert records["decoder"].key_labels[0] == "<pad>"  # Marian's decoder starts with its pad token
    assert np.all(np.triu(records["decoder"].weights, 1) == 0)
    np.testing.assert_allclose(records["cross"].weights.sum(-1), 1.0, atol=1e-5)
    meta = records["cross"].meta
    assert meta["teacher_forced"] and meta["attention"] == "cross"
    assert all(pair[0] != "</s>" and pair[1] != "</s>" for pair in meta["aligned_pairs"])
    assert records["cross"].extras["alignment"].shape == (t, s)
    json.dumps(records["cross"].to_json_dict())
    step = decoding_step_record(records["decoder"], 2)  # the date model's step-by-step view reads these records
    assert step.weights.shape == (layers * heads, 3)


def test_the_registry_builders_send_folders_here_and_the_rest_to_the_date_model():
    folder = str(FIXTURES / "t5")
    record = _entry("cross").build({"text": "Where is the bus stop?", "model_dir": folder, "max_new": 5})
    assert record.mechanism == "transformer-cross" and record.weights.shape[2] <= 5
    assert record.meta["model_type"] == "t5" and not record.meta["teacher_forced"]
    forced = _entry("decoder").build_many([{"text": "Tea.", "model_dir": folder, "target": "茶。"}])[0]
    assert forced.meta["teacher_forced"] and forced.query_labels[-1] == "</s>"
    with pytest.raises(InputError, match="--model-dir"):
        _entry("cross").build({"text": "9 May 2018", "target": "2018-05-09"})
    with pytest.raises(InputError, match="snapshot"):
        _entry("cross").build({"text": "Tea.", "model_dir": folder, "step": 10})


def test_marian_reads_language_codes_and_unknown_pieces_as_its_tokenizer_does():
    model = translator(FIXTURES / "marian")
    tokens = model.tokenizer.encode(">>cmn_Hans<< The cat")
    vocab = model.tokenizer.vocab
    assert tokens.pieces[0] == ">>cmn_Hans<<" and tokens.ids[0] == vocab["<unk>"]  # a code this vocab lacks
    assert tokens.ids[-1] == vocab["</s>"] and tokens.pieces[-1] == "</s>"
    assert ">>cmn_Hans<<" in tokens.unknown


def test_configs_and_folders_that_cannot_be_read_are_refused_in_one_line(tmp_path):
    base = json.loads((FIXTURES / "t5" / "config.json").read_text())
    for change, words in (
        ({"model_type": "pegasus"}, "pegasus"),
        ({"feed_forward_proj": "gated-gelu-x"}, "feed"),
        ({"d_model": 0}, "d_model"),
    ):
        with pytest.raises(InputError, match=words) as error:
            read_arch(base | change)
        assert "\n" not in str(error.value)
    bart = json.loads((FIXTURES / "bart" / "config.json").read_text())
    with pytest.raises(InputError, match="activation_function"):
        read_arch(bart | {"activation_function": "mish"})
    assert read_arch(bart | {"decoder_start_token_id": None}).decoder_start_id == 2  # null: BART's default
    folder = tmp_path / "no_tokenizer"
    shutil.copytree(FIXTURES / "bart", folder)
    (folder / "tokenizer.json").unlink()
    with pytest.raises(InputError, match="tokenizer.json"):
        load_translator(folder)
    marian = tmp_path / "broken_spm"
    shutil.copytree(FIXTURES / "marian", marian)
    (marian / "source.spm").write_bytes(b"not a model")
    with pytest.raises(InputError, match="sentencepiece model"):
        load_translator(marian)
    with pytest.raises(InputError, match="needs a folder"):
        load_translator(None)
