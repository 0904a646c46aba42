"""The HAN's piece vectors: MiniLM's contextual token vectors line up with the pieces; embeddings, both, batches."""

import numpy as np
import pytest

from models.han.data import encode_document, load_word_embeddings, make_batch
from models.han.features import CLS_ID, SEP_ID, contextual_vectors, document_vectors, feature_batch, feature_dim
from models.transformer.records import shared_runner

DOCS = [encode_document("The cover is blue. The cover is flimsy."), encode_document("Unbelievably tasty dumplings.")]


def test_contextual_vectors_are_minilm_hidden_states_of_the_sentence_without_cls_and_sep():
    vectors = document_vectors(DOCS, "contextual")
    assert [len(v) for v in vectors] == [2, 1]
    for doc, sentences in zip(DOCS, vectors):
        for pieces, v in zip(doc.pieces, sentences):
            assert v.shape == (len(pieces), 384) and v.dtype == np.float32
            (hidden,) = shared_runner(None).hidden_of_ids([np.asarray([CLS_ID, *pieces, SEP_ID], np.int32)])
            np.testing.assert_allclose(v, hidden[1:-1], atol=1e-5)
    # The same word in two sentences: one vector each, shaped by what the sentence says.
    blue, flimsy = vectors[0]
    assert not np.allclose(blue[:2], flimsy[:2], atol=1e-3)  # "the cover" differs by context


def test_equal_sentences_are_run_once_and_get_equal_vectors():
    pieces = [DOCS[0].pieces[0], DOCS[0].pieces[1], DOCS[0].pieces[0]]
    first, _, again = contextual_vectors(pieces)
    assert first is again
    assert contextual_vectors([]) == []


def test_embeddings_and_both():
    table = load_word_embeddings()
    embedded = document_vectors(DOCS[1:], "embeddings")[0][0]
    np.testing.assert_array_equal(embedded, table[list(DOCS[1].pieces[0])])
    both = document_vectors(DOCS[1:], "both", dtype=np.float16)[0][0]
    assert both.dtype == np.float16 and both.shape == (len(DOCS[1].pieces[0]), feature_dim("both")) == (both.shape[0], 768)
    np.testing.assert_allclose(both[:, :384], embedded, atol=2e-3)
    with pytest.raises(ValueError, match="unknown HAN features"):
        feature_dim("glove")


def test_feature_batch_puts_each_piece_where_the_mask_says_and_zeros_elsewhere():
    vectors = document_vectors(DOCS, "embeddings")
    batch = make_batch(DOCS, 4)
    x = feature_batch(vectors, batch)
    assert x.shape == (*batch.ids.shape, 384) and x.dtype == np.float32
    for b, doc in enumerate(vectors):
        for i, v in enumerate(doc):
            np.testing.assert_array_equal(x[b, i, : len(v)], v)
    assert np.all(x[~batch.piece_mask] == 0.0)
