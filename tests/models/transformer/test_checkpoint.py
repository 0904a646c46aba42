"""The strict BERT loader, on a tiny random BERT folder written by the test."""

import json

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from models.record import InputError
from models.transformer.checkpoint import CheckpointError, load_bert, map_tensors, read_config, torch_name
from models.transformer.model import BertConfig
from models.transformer.records import load_runner
from tests.models.transformer.tiny_bert import TINY_CONFIG, make_tiny_bert, numpy_bert_attention, tiny_tensors


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


def _rewrite(folder, change):
    tensors = load_file(str(folder / "model.safetensors"))
    change(tensors)
    save_file(tensors, str(folder / "model.safetensors"))


def test_config_is_read_from_config_json(tiny_dir):
    cfg = read_config(tiny_dir)
    assert cfg == BertConfig(
        vocab_size=64,
        hidden_size=24,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=40,
        max_position_embeddings=64,
    )
    assert cfg.head_dim == 6 and hash(cfg) == hash(read_config(tiny_dir))


def test_every_tensor_is_loaded_and_linear_weights_transposed(tiny_dir):
    model = load_bert(tiny_dir)
    tensors = load_file(str(tiny_dir / "model.safetensors"))
    layer = model.encoder.layer[1]
    np.testing.assert_array_equal(
        layer.intermediate.dense.kernel[...], tensors["encoder.layer.1.intermediate.dense.weight"].T
    )
    np.testing.assert_array_equal(
        layer.attention.self.query.kernel[...], tensors["encoder.layer.1.attention.self.query.weight"].T
    )
    np.testing.assert_array_equal(layer.output.LayerNorm.scale[...], tensors["encoder.layer.1.output.LayerNorm.weight"])
    np.testing.assert_array_equal(
        model.embeddings.word_embeddings.embedding[...], tensors["embeddings.word_embeddings.weight"]
    )
    names = {torch_name(path) for path in map_tensors(read_config(tiny_dir), tensors)}
    assert names == set(tensors) - {"embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias"}


def test_forward_matches_numpy_oracle(tiny_dir):
    runner = load_runner(str(tiny_dir))
    record = runner.attention("Hello world, the cat sat on the mat!", "the dog sat on a rug.")
    tensors = load_file(str(tiny_dir / "model.safetensors"))
    expected, hidden = numpy_bert_attention(
        tensors, TINY_CONFIG, record.extras["input_ids"], record.extras["token_type_ids"]
    )
    assert record.weights.shape == expected.shape == (2, 4, len(record.query_labels), len(record.query_labels))
    np.testing.assert_allclose(record.weights, expected, atol=1e-5, rtol=0)
    tokens, ours = runner.hidden_states("Hello world, the cat sat on the mat!", "the dog sat on a rug.")
    assert tuple(tokens) == record.query_labels
    np.testing.assert_allclose(ours, hidden, atol=1e-4, rtol=0)


def test_bert_prefix_is_stripped_and_ignored_tensors_may_be_absent():
    cfg = BertConfig.from_dict(TINY_CONFIG)
    tensors = tiny_tensors(TINY_CONFIG)
    prefixed = {"bert." + k: v for k, v in tensors.items() if not k.startswith(("pooler.", "embeddings.position_ids"))}
    assert len(map_tensors(cfg, prefixed)) == len(prefixed)


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda t: t.update({"encoder.layer.0.attention.self.rotary.weight": np.zeros(3, np.float32)}),
            "unknown tensors: encoder.layer.0.attention.self.rotary.weight",
        ),
        (
            lambda t: t.update({"cls.predictions.bias": np.zeros(64, np.float32)}),
            "unknown tensors: cls.predictions.bias",
        ),
        (lambda t: t.pop("encoder.layer.1.output.dense.bias"), "missing tensors: encoder.layer.1.output.dense.bias"),
        (
            lambda t: t.update({"encoder.layer.0.intermediate.dense.weight": np.zeros((24, 40), np.float32)}),
            "encoder.layer.0.intermediate.dense.weight (24, 40) (expected (40, 24))",
        ),
        (
            lambda t: t.update({"embeddings.word_embeddings.weight": np.zeros((65, 24), np.float32)}),
            "embeddings.word_embeddings.weight (65, 24)",
        ),
        (lambda t: t.update({"embeddings.LayerNorm.bias": np.zeros(24, np.int32)}), "dtype int32"),
    ],
)
def test_strictness_names_the_offending_tensors(tmp_path, change, message):
    folder = make_tiny_bert(tmp_path / "m")
    _rewrite(folder, change)
    with pytest.raises(CheckpointError) as error:
        load_bert(folder)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_both_unknown_and_missing_are_named_together():
    tensors = tiny_tensors(TINY_CONFIG)
    tensors["encoder.layer.0.attention.self.q_proj.weight"] = tensors.pop("encoder.layer.0.attention.self.query.weight")
    with pytest.raises(CheckpointError, match=r"unknown tensors: .*q_proj.*; missing tensors: .*self\.query\.weight"):
        map_tensors(BertConfig.from_dict(TINY_CONFIG), tensors)


@pytest.mark.parametrize(
    "breakage, message",
    [
        (lambda f: (f / "config.json").unlink(), "has no config.json"),
        (
            lambda f: (f / "config.json").write_text(json.dumps({**TINY_CONFIG, "model_type": "gpt2"})),
            "'gpt2' model, not a BERT-family encoder",
        ),
        (lambda f: (f / "config.json").write_text("{not json"), "not valid JSON"),
        (
            lambda f: (f / "config.json").write_text(
                json.dumps({**TINY_CONFIG, "position_embedding_type": "relative_key"})
            ),
            "position_embedding_type 'relative_key' is not supported",
        ),
        (
            lambda f: (f / "config.json").write_text(json.dumps({**TINY_CONFIG, "num_attention_heads": 5})),
            "not divisible",
        ),
        (lambda f: (f / "model.safetensors").unlink(), "has no model.safetensors"),
        (lambda f: (f / "model.safetensors").write_bytes(b"\x00" * 16), "not a readable safetensors file"),
        (lambda f: (f / "tokenizer.json").unlink(), "has no tokenizer.json"),
        (lambda f: (f / "tokenizer.json").write_text("[]"), "not a readable tokenizer.json"),
    ],
)
def test_a_folder_that_is_not_a_bert_checkpoint_is_a_clear_input_error(tmp_path, breakage, message):
    folder = make_tiny_bert(tmp_path / "m")
    breakage(folder)
    with pytest.raises(InputError) as error:
        load_runner(str(folder))
    assert message in str(error.value) and "\n" not in str(error.value)


def test_missing_folder_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="model folder not found"):
        load_runner(str(tmp_path / "nope"))


def test_a_browser_chosen_folder_must_lie_inside_the_operator_root(tmp_path):
    from models.transformer.checkpoint import NOT_AVAILABLE, resolve_model_dir

    root = tmp_path / "root"
    (root / "good").mkdir(parents=True)
    (root / "good" / "config.json").write_text("{}")
    (root / "escape").symlink_to("/etc")
    assert resolve_model_dir("good", root) == (root / "good").resolve()
    assert resolve_model_dir(str(root / "good"), root) == (root / "good").resolve()
    for asked in ("/etc", "/nope", "../root/../..", "escape", "good/../..", "", "missing"):
        with pytest.raises(InputError) as info:
            resolve_model_dir(asked, root)
        assert str(info.value) == NOT_AVAILABLE  # the same sentence whether the path exists or not
    with pytest.raises(InputError, match="not available"):
        resolve_model_dir("good", None)  # no root set: no folder at all


@pytest.mark.parametrize("field, value", [("num_attention_heads", 0), ("hidden_size", -3), ("vocab_size", 10**12),
                                          ("num_hidden_layers", "six"), ("layer_norm_eps", 0)])
def test_a_bad_config_value_is_one_line(tmp_path, field, value):
    import json

    from models.transformer.checkpoint import read_config

    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", field: value}))
    with pytest.raises(InputError, match=field) as info:
        read_config(tmp_path)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("config", [BertConfig(), BertConfig.from_dict(TINY_CONFIG),
                                    BertConfig(hidden_size=32, num_attention_heads=2, num_hidden_layers=3,
                                               intermediate_size=48, type_vocab_size=1)])
def test_shapes_from_the_config_are_the_modules_own(config):
    # The loader checks tensors against shapes computed from the config (no Flax needed);
    # they must be exactly the parameter tree of BertModel(config).
    from models.transformer.checkpoint import _skeleton, expected_shapes

    assert expected_shapes(config) == dict(_skeleton(config)[1])


def test_the_tensors_a_runner_keeps_are_the_loaded_modules_parameters(tiny_dir):
    from flax import nnx

    from models.transformer.checkpoint import load_tensors

    cfg, tensors = load_tensors(tiny_dir)
    model = load_bert(tiny_dir)
    flat = {".".join(map(str, path)): np.asarray(leaf.get_value()) for path, leaf in nnx.to_flat_state(nnx.state(model))}
    assert set(flat) == set(tensors) and cfg == model.config
    for name, value in tensors.items():
        np.testing.assert_array_equal(flat[name], value)
