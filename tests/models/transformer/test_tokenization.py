"""Tokenization: no padding, truncation at the model's limit with a notice, pairs, odd text."""

import numpy as np
import pytest

from models.record import InputError
from models.transformer.records import default_model_dir
from models.transformer.tokenization import load_tokenizer
from tests.models.transformer.tiny_bert import make_tiny_bert


@pytest.fixture(scope="module")
def minilm():
    return load_tokenizer(default_model_dir(), 512)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return load_tokenizer(make_tiny_bert(tmp_path_factory.mktemp("tiny")), 64)


def test_no_padding_although_the_shipped_file_pads_to_128(minilm, tiny):
    enc = minilm.encode("Hello world")
    assert enc.tokens == ("[CLS]", "hello", "world", "[SEP]")
    assert enc.input_ids.dtype == np.int32 and enc.input_ids.tolist() == [101, 7592, 2088, 102]
    assert enc.token_type_ids.tolist() == [0, 0, 0, 0] and not enc.truncated and enc.notice is None
    assert tiny.encode("the cat").tokens == ("[CLS]", "the", "cat", "[SEP]")


def test_tokens_are_shown_as_the_tokenizer_makes_them(minilm):
    assert minilm.encode("tokenization").tokens == ("[CLS]", "token", "##ization", "[SEP]")
    assert "[UNK]" in minilm.encode("I ❤ 🍕").tokens


def test_what_the_vocabulary_cannot_spell_is_named_in_the_notice(minilm):
    # Three pizzas are one [UNK]: the notice quotes each span that became one, in each sentence.
    enc = minilm.encode("We ate 🍕🍕🍕 and ❤ it.", "Then ☕.")
    assert enc.tokens.count("[UNK]") == 3
    assert enc.notice == ("3 parts of the text MiniLM's vocabulary cannot spell became [UNK] (one token each, "
                          "whatever its length): “🍕🍕🍕”, “❤”, “☕”.")
    assert minilm.encode("Hello world").notice is None
    long = minilm.encode("A " + "🍕" * 5000 + " and more.").notice  # a long span is quoted cut short
    assert "“" + "🍕" * 39 + "…”" in long and len(long) < 200


def test_long_text_is_cut_at_512_with_a_notice_saying_where(minilm):
    words = [f"w{i}" for i in range(400)]  # each "wN" is two or more tokens
    enc = minilm.encode(" ".join(words))
    assert len(enc) == 512 and enc.truncated
    assert enc.tokens[0] == "[CLS]" and enc.tokens[-1] == "[SEP]"
    assert enc.notice.startswith("Input was cut to 512 tokens")
    # the quoted text is the end of what was kept
    kept_words = "".join(t.removeprefix("##") if t.startswith("##") else " " + t for t in enc.tokens[1:-1]).split()
    assert kept_words[-1] in enc.notice
    assert "text after '…" in enc.notice


def test_exactly_the_limit_is_not_cut(tiny):
    enc = tiny.encode(" ".join(["cat"] * 62))
    assert len(enc) == 64 and not enc.truncated and enc.notice is None
    enc = tiny.encode(" ".join(["cat"] * 63))
    assert len(enc) == 64 and enc.truncated and "lost 1 of 63 tokens" in enc.notice


def test_pairs_have_segments_and_truncation_names_the_sentence(tiny):
    enc = tiny.encode("the cat sat", "a dog")
    assert enc.tokens == ("[CLS]", "the", "cat", "sat", "[SEP]", "a", "dog", "[SEP]")
    assert enc.token_type_ids.tolist() == [0, 0, 0, 0, 0, 1, 1, 1]
    long = tiny.encode("the cat", " ".join(["dog"] * 80))
    assert len(long) == 64 and long.truncated
    assert "the second sentence lost" in long.notice and "the text lost" not in long.notice


@pytest.mark.parametrize("text", ["", "   ", "\n\t ", None])
def test_empty_text_is_an_input_error(minilm, text):
    with pytest.raises(InputError, match="empty"):
        minilm.encode(text)


def test_whitespace_pair_is_no_pair(minilm):
    assert minilm.encode("hi", "  ").tokens == ("[CLS]", "hi", "[SEP]")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a\x00b\x07c\x1bd", None),  # control characters are dropped by the normaliser
        ("zero\u200bwidth\u200dhere\ufeff", None),
        ("שלום עולם مرحبا بالعالم", None),  # right-to-left scripts
        ("我爱你 日本語 한국어", None),
        (
            "<img src=x onerror=alert(1)>",
            ("<", "im", "##g", "sr", "##c", "=", "x", "one", "##rro", "##r", "=", "alert", "(", "1", ")", ">"),
        ),
        ("🎉🎉🎉 👍🏽", None),
    ],
)
def test_odd_text_tokenizes_without_error(minilm, text, expected):
    enc = minilm.encode(text)
    assert enc.tokens[0] == "[CLS]" and enc.tokens[-1] == "[SEP]" and len(enc) >= 3
    assert len(enc.input_ids) == len(enc.tokens) == len(enc.token_type_ids)
    if expected is not None:
        assert enc.tokens[1:-1] == expected


def test_text_the_tokenizer_drops_entirely_leaves_special_tokens_and_a_notice(minilm):
    enc = minilm.encode("\u200b\u200b")
    assert enc.tokens == ("[CLS]", "[SEP]") and "only special tokens remain" in enc.notice
