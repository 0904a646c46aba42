"""Text to arrays for the HAN: sentences, words and pieces, caps with notices, padded batches, CSV uploads."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.han.data import (
    MAX_PIECES,
    MAX_SENTENCES,
    MAX_WORDS,
    PIECE_BUCKETS,
    SENTENCE_BUCKETS,
    batch_shape,
    encode_document,
    make_batch,
    parse_csv,
    split_sentences,
    split_words,
    word_weights,
)
from models.record import InputError


def test_text_handling_and_bad_documents():
    assert split_sentences("One. Two!  Three?\nFour") == ["One.", "Two!", "Three?", "Four"]
    with pytest.raises(InputError, match="empty"):
        encode_document("   \n ")
    long = encode_document(" ".join(["word"] * 2000) + ". Short one.")
    assert len(long.words[0]) == MAX_WORDS
    assert any("2000 words" in n for n in long.notices)
    with pytest.raises(InputError, match="no readable words"):
        encode_document("\u200b\u200b")


def test_csv_validation_messages():
    ok = parse_csv(b"text,label\nGood food.,pos\nBad food.,neg\nNice staff.,pos\nRude staff.,neg\n")
    assert ok.classes == ("neg", "pos") and list(ok.labels) == [1, 0, 1, 0]
    assert parse_csv("\ufefftext,label\na,x\nb,y\nc,x\nd,y\n".encode()).classes == ("x", "y")  # BOM
    cases = {
        b"review_body,stars\nx,1\ny,2\n": "needs a 'text' and a 'label' column",
        "text,label\ncaf\xe9,a\n".encode("latin-1"): "not UTF-8",
        b"text,label\na,x\nb,x\nc,x\nd,x\n": "at least two classes",
        b"text,label\na,x\n": "at least 4 rows",
        b"": "empty",
        b"text,label\n" + b"a long enough review,x\n" * 200_000: "limit is 2 MB",
    }
    for data, message in cases.items():
        with pytest.raises(InputError, match=message):
            parse_csv(data)
    rows = b"text,label\n" + b"".join(f"t{i},{i % 2}\n".encode() for i in range(5001))
    with pytest.raises(InputError, match="more than 5000 rows"):
        parse_csv(rows)


def test_caps_come_with_notices():
    many = encode_document(" ".join(f"Sentence {i}." for i in range(MAX_SENTENCES + 7)))
    assert len(many.sentences) == MAX_SENTENCES
    assert any(f"first {MAX_SENTENCES} of {MAX_SENTENCES + 7}" in n for n in many.notices)
    pieces = encode_document(" ".join(["antidisestablishmentarianism"] * MAX_WORDS) + ".")
    assert all(len(p) <= MAX_PIECES for p in pieces.pieces)
    assert any(f"first {MAX_PIECES} word pieces" in n for n in pieces.notices)


def test_pieces_map_back_to_their_words():
    doc = encode_document("Unbelievably tasty dumplings. We left.")
    assert doc.words[0] == ("Unbelievably", "tasty", "dumplings.")
    assert sorted(set(doc.piece_words[0])) == [0, 1, 2]  # every word has at least one piece
    assert list(doc.piece_words[0]) == sorted(doc.piece_words[0])  # pieces run in word order
    assert len(doc.pieces[0]) > 3  # "unbelievably" and "dumplings." are cut into pieces


def test_batches_pad_to_buckets_with_exact_masks():
    docs = [encode_document("Great food. We sat down."), encode_document("Awful.")]
    s, t = batch_shape(docs)
    assert s == SENTENCE_BUCKETS[0] and t == PIECE_BUCKETS[0]
    batch = make_batch(docs, 4)
    assert batch.ids.shape == (4, s, t) and batch.piece_mask.shape == (4, s, t)
    for b, doc in enumerate(docs):
        for i, pieces in enumerate(doc.pieces):
            assert batch.piece_mask[b, i].sum() == len(pieces)
            assert batch.ids[b, i, : len(pieces)].tolist() == list(pieces)
        assert batch.sentence_mask[b].sum() == len(doc.pieces)
    assert not batch.piece_mask[2:].any() and not batch.sentence_mask[2:].any()  # padding rows are empty
    assert np.all(batch.ids[~batch.piece_mask] == 0) and np.all(batch.word_of_piece[~batch.piece_mask] == -1)


@given(st.lists(st.integers(0, 4), min_size=1, max_size=12), st.integers(0, 2**31 - 1))
def test_word_weights_sum_the_pieces(piece_words, seed):
    piece_words = sorted(piece_words)
    alpha = np.random.default_rng(seed).random(len(piece_words) + 3).astype(np.float32)
    words = word_weights(alpha, piece_words, 5)
    for w in range(5):
        expected = sum(a for a, pw in zip(alpha, piece_words) if pw == w)
        assert words[w] == pytest.approx(expected, rel=1e-5, abs=1e-7)
    assert words.sum() == pytest.approx(alpha[: len(piece_words)].sum(), rel=1e-5)


def test_splitting_keeps_punctuation_on_words():
    assert split_words("The soup, sadly, was cold!") == ["The", "soup,", "sadly,", "was", "cold!"]
    assert split_sentences("First line\nSecond line. Third?") == ["First line", "Second line.", "Third?"]


def test_one_huge_word_costs_no_memory():
    import tracemalloc

    text = "The food was good. " + "x" * 1_000_000 + " was the word. " + " ".join(["fine"] * 1_800)
    tracemalloc.start()
    doc = encode_document(text)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 30_000_000  # a fixed-width string array of this text would need about 7 GB
    assert max(len(w) for ws in doc.words for w in ws) <= 100
    assert any("cut to its first 50,000 of" in n for n in doc.notices)
    assert any("longer than 100 characters" in n for n in doc.notices)
