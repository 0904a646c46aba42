"""The review generator: seeded, varied, free of the shortcuts issue 13 found, and its ground truth is consistent."""

import random
from collections import Counter

from models.han import lexicon as lx
from models.han.data import split_sentences, split_words
from models.han.task import (
    DOMAINS,
    SENTIMENTS,
    TOPICS,
    domain_topics,
    generate_reviews,
    neutral_sentence,
    opinion_sentence,
)

REVIEWS = generate_reviews(600, seed=3)
JUDGEMENTS = {w for words in lx.OPINIONS.values() for w in words} | {
    w for words in lx.DOMAIN_QUALITY.values() for w in words
}


def _bare(word: str) -> str:
    return word.strip(".,!?;:'").lower()


def test_same_seed_same_reviews_other_seed_other_reviews():
    assert generate_reviews(20, 3) == REVIEWS[:20]
    assert generate_reviews(20, 4) != REVIEWS[:20]


def test_shape_of_every_review():
    for r in REVIEWS:
        assert 3 <= len(r.sentences) <= 7 and r.domain in DOMAINS
        assert len(r.label_sentences) <= 2 and len(r.topics) == len(r.label_sentences)
        assert (r.sentiment is None) == (not r.label_sentences)
        assert r.sentiment in SENTIMENTS + (None,) and set(r.topics) <= set(domain_topics(r.domain))
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


def test_labels_domains_and_opinion_counts_are_balanced():
    sentiments = Counter(r.sentiment for r in REVIEWS if r.sentiment)
    assert min(sentiments.values()) > 200
    assert set(Counter(t for r in REVIEWS for t in r.topics)) == set(TOPICS)
    assert min(Counter(r.domain for r in REVIEWS).values()) > 50
    counts = Counter(len(r.label_sentences) for r in REVIEWS)
    assert counts[0] > 50 and counts[2] > 80 and counts[1] > 250  # none, two, one


def test_the_opinion_position_is_uniform():
    # For each review length, every position holds the opinion about equally often.
    for length in (4, 5):
        positions = Counter(p for r in generate_reviews(3000, 5) if len(r.sentences) == length for p in r.label_sentences)
        assert set(positions) == set(range(length))
        assert max(positions.values()) < 1.5 * min(positions.values()), positions


def test_neutral_sentences_share_the_surface_of_opinions_but_judge_nothing():
    neutral = [s for r in REVIEWS for i, s in enumerate(r.sentences) if i not in r.label_sentences]
    words = [{_bare(w) for w in s.split()} for s in neutral]
    assert not set().union(*words) & JUDGEMENTS
    colours = {c for c in lx.COLOURS if " " not in c}
    assert sum(bool(w & colours) for w in words) > 0.2 * len(neutral)  # colour adjectives
    assert sum(any(ch.isdigit() for ch in s) for s in neutral) > 0.2 * len(neutral)  # numbers
    assert sum("not" in w for w in words) > 0.02 * len(neutral)  # negations
    aspects = {a for topics in lx.ASPECTS.values() for nouns in topics.values() for a, _ in nouns}
    assert sum(any(f" {a}" in s for a in aspects) for s in neutral) > 0.3 * len(neutral)  # the opinions' nouns
    assert len(set(neutral)) > 0.7 * len(neutral)


def test_opinion_sentences_carry_judgements_numbers_and_colours_too():
    opinions = [s for r in REVIEWS for i, s in enumerate(r.sentences) if i in r.label_sentences]
    assert len(set(opinions)) > 0.9 * len(opinions)
    assert sum(any(ch.isdigit() for ch in s) for s in opinions) > 0.05 * len(opinions)


def test_marked_words_are_the_aspect_and_the_judgement():
    rng = random.Random(0)
    for domain in DOMAINS:
        sentence, marked = opinion_sentence(rng, "quality", "negative", domain)
        words = split_words(sentence)
        assert marked and all(0 <= i < len(words) for i in marked)
    for _ in range(300):  # negated sentences mark "not" and the negated word
        sentence, marked = opinion_sentence(rng, "service", "positive", "hotel")
        words = split_words(sentence)
        if " not " in sentence and "could not" not in sentence and "do not" not in sentence:
            assert words.index("not") in marked
            assert words.index("not") + 1 in marked


def test_every_domain_writes_neutral_sentences():
    rng = random.Random(1)
    for domain in DOMAINS:
        sentences = {neutral_sentence(rng, domain) for _ in range(50)}
        assert len(sentences) > 35
        assert all("{" not in s and s[0].isupper() and s.endswith(".") for s in sentences)
