"""A seeded generator of short reviews in several domains, with known true alignment.

Each review has 3-7 sentences in one domain (restaurants, hotels, products, apps, films and
books, services, travel; models/han/lexicon.py). None, one or two of them are *opinion*
sentences: they judge an aspect (the topic: quality, service, price or ambience) with a
sentiment (negative or positive; a review's opinions share it). The rest are neutral facts,
full of what an opinion has on its surface: adjectives (colours, shapes, materials), numbers,
objects, times, the same aspect nouns, and sometimes a "not". The opinions sit at uniformly
drawn positions. Ground truth records which sentences are opinions and, inside them, which
words judge (the aspect and opinion words, plus "not" in negated sentences).

Words are the whitespace-separated tokens of a sentence, punctuation attached ("fresh." is
one word), exactly as models.han.data.split_words splits them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from models.han import lexicon as lx

SENTIMENTS = ("negative", "positive")
TOPICS = ("quality", "service", "price", "ambience")
DOMAINS = lx.DOMAINS
NO_OPINION_SHARE = 0.15  # reviews that state facts only
TWO_OPINION_SHARE = 0.25
# Nouns that cannot be coloured or measured ("The plot is blue."): neutral facts about things skip them.
_ABSTRACT = {
    "food", "sound", "update", "interface", "search", "login", "sync", "plot", "acting", "ending", "script",
    "soundtrack", "dialogue", "characters", "work", "treatment", "lesson", "repair", "cleaning", "installation",
    "massage", "tour", "ride", "crossing", "trip", "journey", "excursion", "flight", "atmosphere", "music",
    "lighting", "decor", "view", "wifi", "notifications", "series", "film", "play", "haircut", "paint job",
    "breakfast", "app", "game", "editor", "map", "novel", "book", "coffee", "soup", "curry", "noodles",
}

_MARKED_SLOTS = ("A", "O", "O2", "L", "N", "R")


def _plural(word: str) -> str:
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def _capital(sentence: str) -> str:
    return sentence[0].upper() + sentence[1:]


def _opinion_words(rng: random.Random, domain: str, topic: str, sentiment: str) -> list[str]:
    extra = lx.DOMAIN_QUALITY.get((domain, sentiment), []) if topic == "quality" else []
    return lx.OPINIONS[(topic, sentiment)] + extra


def domain_topics(domain: str) -> tuple[str, ...]:
    """Returns the topics a domain has aspects for (apps have no ambience)."""
    return tuple(t for t in TOPICS if lx.ASPECTS[domain][t])


def _fill(template: str, slots: dict[str, str]) -> tuple[str, tuple[int, ...]]:
    # Returns the sentence and the indices of the words that came from label-bearing slots.
    words: list[str] = []
    marked: list[int] = []
    for part in template.split(" "):
        text, marked_part = part, False
        for name, value in slots.items():
            token = "{" + name + "}"
            if token in text:
                text = text.replace(token, value)
                marked_part = marked_part or name in _MARKED_SLOTS
        for piece in text.split(" "):
            if piece:
                if marked_part:
                    marked.append(len(words))
                words.append(piece)
    if "{N}" in template:
        marked.extend(i for i, w in enumerate(words) if w == "not")
    return _capital(" ".join(words)), tuple(sorted(set(marked)))


def opinion_sentence(rng: random.Random, topic: str, sentiment: str, domain: str = "restaurant") -> tuple[str, tuple[int, ...]]:
    """Returns one opinion sentence about `topic` in `domain` with `sentiment`, and its label-bearing word indices."""
    aspect, plural = rng.choice(lx.ASPECTS[domain][topic])
    opposite = SENTIMENTS[1 - SENTIMENTS.index(sentiment)]
    first, second = rng.sample(_opinion_words(rng, domain, topic, sentiment), 2)
    slots = {
        "A": aspect, "be": "were" if plural else "was", "O": first, "O2": second,
        "N": rng.choice(_opinion_words(rng, domain, topic, opposite)), "I": rng.choice(lx.INTENSIFIERS),
        "L": rng.choice(lx.LIKE[sentiment]), "R": rng.choice(lx.REACTION[sentiment]),
        "n": str(rng.randint(2, 30)), "C": rng.choice(lx.COLOURS), "P": rng.choice(lx.PEOPLE),
    }
    return _fill(rng.choice(lx.OPINION_TEMPLATES), slots)


def phrase_sentence(rng: random.Random, topic: str, sentiment: str, domain: str = "restaurant") -> tuple[str, tuple[int, ...]]:
    """Returns one idiomatic opinion sentence and the indices of its label-bearing words."""
    aspect, plural = rng.choice(lx.ASPECTS[domain][topic])
    template = rng.choice(lx.PHRASES[(topic, sentiment)])
    words, marked = [], []
    for token in template.split(" "):
        star = token.count("*") >= 2
        token = token.replace("*", "").replace("{A}", aspect).replace("{n}", str(rng.randint(2, 40)))
        if plural and token in ("was", "is", "has"):
            token = {"was": "were", "is": "are", "has": "have"}[token]
        for piece in token.split(" "):
            if star:
                marked.append(len(words))
            words.append(piece)
    return _capital(" ".join(words)), tuple(marked)


def _neutral_slots(rng: random.Random, domain: str) -> dict[str, str]:
    aspects = lx.ASPECTS[domain]
    things = [a for t in ("quality", "ambience") for a in aspects[t] if a[0] not in _ABSTRACT]
    thing, plural = rng.choice(things) if things else (rng.choice(lx.OBJECTS), False)
    first, second = rng.sample(lx.OBJECTS, 2)
    colour, colour2 = rng.sample(lx.COLOURS, 2)
    day, day2 = rng.sample(lx.DAYS, 2)
    any_aspect = rng.choice([a for t in TOPICS for a in aspects[t]])[0]
    return {
        "X": thing, "be": "were" if plural else "was", "has": "have" if plural else "has",
        "does": "do" if plural else "does", "W": rng.choice(aspects["service"])[0],
        "Q": rng.choice([a for a, many in aspects["price"] if not many]),
        "A": any_aspect, "O": first, "O2": second, "Os": _plural(first), "C": colour, "C2": colour2,
        "S": rng.choice(lx.SIZES), "n": str(rng.randint(2, 12)), "n2": str(rng.randint(0, 9)),
        "T": rng.choice(lx.TIMES), "D": day, "D2": day2, "P": rng.choice(lx.PEOPLE), "M": rng.choice(lx.MONTHS),
        "ord": rng.choice(lx.ORDINALS),
    }


def neutral_sentence(rng: random.Random, domain: str = "restaurant") -> str:
    """Returns one neutral sentence of `domain`: a fact that judges nothing."""
    pool = rng.choices(
        [lx.NEUTRAL_THING, lx.NEUTRAL_PERSON, lx.NEUTRAL_PRICE, lx.NEUTRAL_GENERAL, lx.NEUTRAL_DOMAIN[domain]],
        weights=[4, 2, 1, 4, 2],
    )[0]
    sentence = rng.choice(pool)
    slots = _neutral_slots(rng, domain)
    for name in sorted(slots, key=len, reverse=True):  # {O2} before {O}
        sentence = sentence.replace("{" + name + "}", slots[name])
    return _capital(sentence)


@dataclass(frozen=True)
class Review:
    """One generated review.

    sentences: the sentences, in order (text = " ".join(sentences)); domain: where it is from;
    sentiment: one of SENTIMENTS, None if no sentence judges anything;
    topics: the topic of each opinion sentence, in order; label_sentences: their indices;
    label_words: per sentence, the indices of its label-bearing words (empty for neutral ones).
    """

    sentences: tuple[str, ...]
    sentiment: str | None
    topics: tuple[str, ...]
    label_sentences: tuple[int, ...]
    label_words: tuple[tuple[int, ...], ...]
    domain: str = "restaurant"

    @property
    def text(self) -> str:
        return " ".join(self.sentences)

    @property
    def topic(self) -> str | None:
        return self.topics[0] if self.topics else None


def generate_review(rng: random.Random) -> Review:
    """Returns one review drawn from `rng`: 3-7 sentences, 0-2 of them opinions."""
    domain = rng.choice(DOMAINS)
    n_sentences = rng.choice([3, 4, 4, 5, 5, 6, 7])
    roll = rng.random()
    n_opinions = 0 if roll < NO_OPINION_SHARE else 2 if roll < NO_OPINION_SHARE + TWO_OPINION_SHARE else 1
    positions = sorted(rng.sample(range(n_sentences), n_opinions))
    sentiment = rng.choice(SENTIMENTS) if n_opinions else None
    first = rng.choice(domain_topics(domain))
    topics = [first if k == 0 or rng.random() < 0.5 else rng.choice(domain_topics(domain)) for k in range(n_opinions)]
    sentences, label_words, seen = [], [], set()
    for i in range(n_sentences):
        if i in positions:
            make = phrase_sentence if rng.random() < 0.35 else opinion_sentence
            sentence, marked = make(rng, topics[positions.index(i)], sentiment, domain)
        else:
            sentence, marked = neutral_sentence(rng, domain), ()
            while sentence in seen:
                sentence = neutral_sentence(rng, domain)
        seen.add(sentence)
        sentences.append(sentence)
        label_words.append(marked)
    return Review(tuple(sentences), sentiment, tuple(topics), tuple(positions), tuple(label_words), domain)


def generate_reviews(count: int, seed: int) -> list[Review]:
    """Returns `count` reviews, the same for the same seed."""
    rng = random.Random(seed)
    return [generate_review(rng) for _ in range(count)]
