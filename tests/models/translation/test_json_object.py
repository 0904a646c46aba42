"""models/translation/config.py json_object: the one reader of a folder's JSON files (config's generation rules,
Marian's vocab and tokenizer settings), whose bad input is a one-line InputError naming the file."""

from __future__ import annotations

import json

import pytest

from models.record import InputError
from models.translation.config import json_object


def test_an_object_is_returned_as_written(tmp_path):
    path = tmp_path / "vocab.json"
    data = {"</s>": 0, "<unk>": 1, "▁漢字": 2}
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    assert json_object(path) == data


@pytest.mark.parametrize(
    "content, message",
    [("{not json", "is not valid JSON"), ("[1, 2]", "is not a JSON object"), (b"\xff\xfe{}", "is not valid JSON")],
)
def test_bad_files_are_one_line_errors_naming_the_file(tmp_path, content, message):
    path = tmp_path / "generation_config.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(InputError, match=message) as caught:
        json_object(path)
    assert str(path) in str(caught.value) and len(str(caught.value).splitlines()) == 1


def test_a_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="is not valid JSON"):
        json_object(tmp_path / "absent.json")
