"""Chinese typed into the HAN: sentences end at 。！？, each character is a word, and the record says the
model reads English (a Chinese review's "positive 61 %" is outside what it knows)."""

import numpy as np

from models.han import records
from models.han.data import cjk_share, encode_document, split_sentences, split_words
from models.registry import get_mechanism

REVIEW = "服务员很粗鲁！我们等了一个小时。菜还不错，但是太贵了？下次不来了。"


def test_sentences_end_at_full_width_stops_without_a_space():
    assert split_sentences(REVIEW) == ["服务员很粗鲁！", "我们等了一个小时。", "菜还不错，但是太贵了？", "下次不来了。"]
    # A closing quote and a second 。！？ stay with their sentence; ，；split clauses, not sentences.
    assert split_sentences("他问：“真的吗？”我说是的。好！！走吧。") == ["他问：“真的吗？”我说是的。", "好！！", "走吧。"]
    assert split_sentences("汤很好喝，但是；有点咸") == ["汤很好喝，但是；有点咸"]
    # English is split as before: after . ! ? and a space, and at line breaks.
    assert split_sentences("One. Two!  Three?\nFour") == ["One.", "Two!", "Three?", "Four"]
    assert split_sentences("Version 2.0 is out. 很好。") == ["Version 2.0 is out.", "很好。"]


def test_each_east_asian_character_is_a_word_and_english_words_stay_whole():
    assert split_words("菜还不错，但是太贵了？") == ["菜", "还", "不", "错，", "但", "是", "太", "贵", "了？"]
    assert split_words("我喜欢 MiniLM 3.0。") == ["我", "喜", "欢", "MiniLM", "3.0。"]
    assert split_words("The soup, sadly, was cold!") == ["The", "soup,", "sadly,", "was", "cold!"]
    assert split_words("ラーメンは美味しい") == list("ラーメンは美味しい")


def test_the_share_of_east_asian_characters_counts_letters_only():
    assert cjk_share(REVIEW) == 1.0
    assert cjk_share("The soup. 好") == 1 / 8  # 7 Latin letters and one character
    assert cjk_share("2018, 42!") == 0.0 and cjk_share("") == 0.0


def test_a_chinese_review_is_read_as_sentences_of_characters_and_flagged():
    doc = encode_document(REVIEW)
    assert len(doc.sentences) == 4 and all(len(words) > 1 for words in doc.words)
    record = get_mechanism("han").build({"text": REVIEW})
    assert record.weights.shape[0] == 4
    np.testing.assert_allclose(record.weights.sum(axis=1), 1.0, atol=1e-5)
    assert record.weights.max() < 0.99  # not one "word" per sentence with α = 1.00
    assert record.meta["outside_language"] is True
    assert records.ENGLISH_NOTICE in record.meta["notices"]


def test_english_and_a_chinese_name_in_english_are_not_flagged():
    for text in ("The waiter was rude. We left early.", "We ate at 老北京 on Friday. The dumplings were great."):
        meta = get_mechanism("han").build({"text": text}).meta
        assert meta["outside_language"] is False and records.ENGLISH_NOTICE not in meta["notices"], text
