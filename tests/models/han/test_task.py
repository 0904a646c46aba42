"""The review generator: seeded, varied, and its ground truth is consistent with the text."""

import random

from models.han.data import split_sentences, split_words
from models.han.task import SENTIMENTS, TOPICS, filler_sentence, generate_reviews, opinion_sentence

REVIEWS = generate_reviews(400, seed=3)


def test_same_seed_same_reviews_other_seed_other_reviews():
    assert generate_reviews(20, 3) == REVIEWS[:20]
    assert generate_reviews(20, 4) != REVIEWS[:20]


def test_shape_of_every_review():
    for r in REVIEWS:
        assert 3 <= len(r.sentences) <= 6
        assert 1 <= len(r.label_sentences) <= 2
        assert r.sentiment in SENTIMENTS and r.topic in TOPICS
        assert len(r.label_words) == len(r.sentences)
        for i, marked in enumerate(r.label_words):
            if i in r.label_sentences:
                assert marked, r.sentences[i]
                assert max(marked) < len(split_words(r.sentences[i]))
            else:
                assert marked == ()


def test_the_page_splitter_recovers_the_generator_sentences():
    for r in REVIEWS:
        assert split_sentences(r.text) == list(r.sentences)


def test_labels_are_balanced_and_the_opinion_moves_around():
    sentiments = {s: sum(r.sentiment == s for r in REVIEWS) for s in SENTIMENTS}
    topics = {t: sum(r.topic == t for r in REVIEWS) for t in TOPICS}
    assert min(sentiments.values()) > 150 and min(topics.values()) > 70
    first_positions = {r.label_sentences[0] for r in REVIEWS}
    assert first_positions == set(range(6))  # the opinion is not always in one place


def test_varied_text():
    opinions = {r.sentences[i] for r in REVIEWS for i in r.label_sentences}
    fillers = {s for r in REVIEWS for i, s in enumerate(r.sentences) if i not in r.label_sentences}
    assert len(opinions) > 400 and len(fillers) > 150
    for r in REVIEWS:
        fills = [s for i, s in enumerate(r.sentences) if i not in r.label_sentences]
        assert len(fills) == len(set(fills))


def test_marked_words_are_the_aspect_and_the_judgement():
    rng = random.Random(0)
    sentence, marked = opinion_sentence(rng, "food", "negative")
    words = split_words(sentence)
    assert marked and all(0 <= i < len(words) for i in marked)
    # negated sentences mark "not" and the negated word
    for _ in range(300):
        sentence, marked = opinion_sentence(rng, "service", "positive")
        words = split_words(sentence)
        if " not " in sentence and "could not" not in sentence:
            assert words.index("not") in marked
            assert words.index("not") + 1 in marked


def test_fillers_name_no_aspect():
    from models.han import task as reviews

    aspects = {w for nouns in reviews._ASPECTS.values() for phrase, _ in nouns for w in phrase.split()}
    rng = random.Random(1)
    for _ in range(500):
        words = {w.strip(".,!'s").lower() for w in filler_sentence(rng).split()}
        assert not words & aspects, words & aspects
