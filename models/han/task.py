"""A seeded generator of short restaurant reviews with known true alignment.

Each review has 3-6 sentences. One or two of them are *opinion* sentences: they name an
aspect of the visit (the topic: food, service, price or ambience) and judge it (the
sentiment: negative or positive). The other sentences are neutral filler ("We went there
on a Tuesday.") that carry neither label. Ground truth records which sentences carry the
labels and, inside them, which words do (the aspect words and the opinion words, plus
"not" in negated sentences).

Words are the whitespace-separated tokens of a sentence, punctuation attached
("delicious." is one word), exactly as models.han.data.split_words splits them.
Many templates and synonyms, negations ("was not fresh") and fillers at any position
mean a classifier has to find the opinion, not a position or a fixed phrase.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

SENTIMENTS = ("negative", "positive")
TOPICS = ("food", "service", "price", "ambience")

# (noun phrase, plural?) per topic
_ASPECTS: dict[str, list[tuple[str, bool]]] = {
    "food": [
        ("pasta", False), ("pizza", False), ("steak", False), ("soup", False), ("salad", False),
        ("dessert", False), ("burger", False), ("curry", False), ("bread", False), ("fish", False),
        ("noodles", True), ("sushi", False), ("food", False), ("dishes", True), ("meal", False),
        ("sauce", False), ("chicken", False), ("tacos", True), ("risotto", False), ("pastries", True),
        ("dumplings", True), ("lamb", False), ("starters", True), ("cheesecake", False), ("fries", True),
    ],
    "service": [
        ("waiter", False), ("waitress", False), ("staff", False), ("server", False), ("service", False),
        ("host", False), ("bartender", False), ("manager", False), ("waiters", True), ("hostess", False),
        ("servers", True), ("team", False), ("owner", False), ("sommelier", False),
    ],
    "price": [
        ("prices", True), ("bill", False), ("price", False), ("cost", False), ("value", False),
        ("pricing", False), ("check", False), ("wine prices", True), ("set menu price", False),
        ("tab", False), ("charges", True),
    ],
    "ambience": [
        ("atmosphere", False), ("music", False), ("decor", False), ("lighting", False),
        ("dining room", False), ("terrace", False), ("interior", False), ("seating", False),
        ("vibe", False), ("setting", False), ("ambience", False), ("furniture", False), ("garden", False),
    ],
}

# Judgements that work after "was/were" and before a noun, per topic and sentiment.
_OPINIONS: dict[tuple[str, str], list[str]] = {
    ("food", "positive"): ["delicious", "tasty", "superb", "fresh", "flavourful", "excellent", "amazing",
                           "wonderful", "outstanding", "scrumptious", "perfect", "heavenly", "divine"],
    ("food", "negative"): ["bland", "stale", "overcooked", "cold", "greasy", "tasteless", "soggy",
                           "disappointing", "awful", "burnt", "undercooked", "inedible", "dreadful"],
    ("service", "positive"): ["friendly", "attentive", "helpful", "polite", "welcoming", "quick",
                              "professional", "kind", "charming", "efficient", "warm", "wonderful"],
    ("service", "negative"): ["rude", "slow", "dismissive", "careless", "unfriendly", "inattentive",
                              "unhelpful", "impolite", "sloppy", "arrogant", "hostile", "terrible"],
    ("price", "positive"): ["reasonable", "fair", "affordable", "cheap", "modest", "excellent",
                            "great", "unbeatable", "honest", "decent"],
    ("price", "negative"): ["outrageous", "overpriced", "steep", "absurd", "ridiculous", "excessive",
                            "extortionate", "shocking", "insane", "crazy"],
    ("ambience", "positive"): ["cozy", "charming", "lovely", "relaxing", "elegant", "pleasant",
                               "beautiful", "inviting", "calm", "stylish", "delightful", "gorgeous"],
    ("ambience", "negative"): ["noisy", "gloomy", "cramped", "dreary", "loud", "depressing", "stuffy",
                               "dingy", "chaotic", "uncomfortable", "ugly", "awful"],
}

_INTENSIFIERS = ["", "", "", "really", "very", "truly", "absolutely", "incredibly", "quite", "so"]
_LIKE = {"positive": ["loved", "adored", "enjoyed", "liked", "appreciated"],
         "negative": ["hated", "disliked", "regretted", "loathed", "could not stand"]}
_REACTION = {"positive": ["Happily,", "Best of all,", "Luckily,", "Thankfully,"],
             "negative": ["Sadly,", "Unfortunately,", "Worst of all,", "Alas,"]}

# Opinion templates. {A} aspect, {be} was/were, {O} opinion, {I} intensifier, {L} like-verb,
# {R} sentence opener, {N} negated opposite opinion. Braced slots are label-bearing words.
_TEMPLATES = [
    "The {A} {be} {I} {O}.",
    "{R} the {A} {be} {I} {O}.",
    "We {L} the {A}.",
    "I {L} the {A}.",
    "The {O} {A} said it all.",
    "What {O} {A}!",
    "I thought the {A} {be} {O}.",
    "The {A} {be} {I} {O} and we noticed it at once.",
    "Our {A} {be} {O}.",
    "My partner said the {A} {be} {O}.",
    "Everyone agreed that the {A} {be} {O}.",
    "The {A} {be} not {N}.",
    "To be honest the {A} {be} not {N} at all.",
    "{R} we found the {A} {O}.",
]

# Whole opinion sentences; *starred* words are label-bearing, {A} is an aspect of the topic.
_PHRASES: dict[tuple[str, str], list[str]] = {
    ("food", "positive"): [
        "Every bite of the *{A}* was a *joy*.", "I would come back just for the *{A}*.",
        "The *{A}* *melted* *in* *the* *mouth*.", "The *{A}* *tasted* *incredible*.",
        "We *could* *not* *stop* *eating* the *{A}*.", "The *{A}* was *cooked* *to* *perfection*.",
        "The *{A}* was the *best* I have *ever* had.", "Nobody left a crumb of the *{A}*, it was *so* *good*.",
    ],
    ("food", "negative"): [
        "The *{A}* *tasted* *like* *cardboard*.", "Half of the *{A}* went *back* *untouched*.",
        "The *{A}* had *clearly* been *reheated*.", "I *found* *a* *hair* in the *{A}*.",
        "The *{A}* *made* *me* *sick* that night.", "The *{A}* was *swimming* *in* *grease*.",
        "Nobody could *finish* the *{A}*, it was *so* *bad*.", "The *{A}* was the *worst* I have *ever* had.",
    ],
    ("service", "positive"): [
        "The *{A}* *went* *out* *of* *their* *way* to help us.", "The *{A}* *remembered* *our* *names*.",
        "The *{A}* *looked* *after* *us* *wonderfully*.", "Nothing was too much trouble for the *{A}*.",
        "The *{A}* *explained* every dish *patiently*.", "The *{A}* *greeted* *us* *with* *a* *smile*.",
        "The *{A}* *made* *us* *feel* *at* *home*.", "The *{A}* *served* *us* *quickly* *and* *cheerfully*.",
    ],
    ("service", "negative"): [
        "The *{A}* *ignored* *us* for twenty minutes.", "The *{A}* *rolled* *their* *eyes* at our questions.",
        "The *{A}* *snapped* *at* *us* when we asked for water.", "We *waited* *forever* for the *{A}*.",
        "The *{A}* *forgot* *our* *order* twice.", "The *{A}* *argued* *with* *us* about the booking.",
        "The *{A}* *never* *came* *back* to our table.", "The *{A}* *spilled* *wine* and did *not* *apologise*.",
    ],
    ("price", "positive"): [
        "The *{A}* was *worth* *every* *penny*.", "The *{A}* was a *bargain* for what we got.",
        "The *{A}* was *much* *lower* *than* *expected*.", "For the quality, the *{A}* was a *steal*.",
        "The *{A}* *left* *plenty* *in* *our* *wallets*.", "I was *pleasantly* *surprised* by the *{A}*.",
        "The *{A}* was *easy* *on* *the* *wallet*.", "You *get* *a* *lot* *for* the *{A}*.",
    ],
    ("price", "negative"): [
        "The *{A}* was *daylight* *robbery*.", "The *{A}* was *a* *small* *fortune*.",
        "The *{A}* was a *complete* *rip-off*.", "We *nearly* *fainted* when we saw the *{A}*.",
        "The *{A}* was *far* *too* *high* for what we got.", "They *overcharged* us and the *{A}* was *absurd*.",
        "The *{A}* was *not* *worth* *the* *money*.", "The *{A}* *emptied* *our* *wallets*.",
    ],
    ("ambience", "positive"): [
        "The *{A}* *felt* *warm* *and* *intimate*.", "The *{A}* was *perfect* for a *romantic* evening.",
        "We *loved* *sitting* in the *{A}*.", "The *{A}* *made* *us* *want* *to* *stay* all night.",
        "The *{A}* was *peaceful* *and* *quiet*.", "The *{A}* *had* *a* *magical* *feel*.",
        "The *{A}* was *bright*, *airy* *and* *inviting*.", "The *{A}* *put* *us* *in* *a* *good* *mood*.",
    ],
    ("ambience", "negative"): [
        "The *{A}* was *so* *loud* we *had* *to* *shout*.", "The *{A}* *smelled* *of* *damp*.",
        "The *{A}* was *dark*, *dirty* *and* *depressing*.", "The *{A}* *felt* *like* *a* *waiting* *room*.",
        "The *{A}* was *freezing* and *draughty*.", "The *{A}* *gave* *us* *a* *headache*.",
        "The *{A}* was *cramped* and the *chairs* *wobbled*.", "The *{A}* *felt* *cold* *and* *unwelcoming*.",
    ],
}

# Neutral sentences that name an aspect without judging it: distractors, carrying no label.
_MENTIONS: dict[str, list[str]] = {
    "food": ["We ordered the {A}.", "My {person} had the {A}.", "We asked what the {A} would be today.",
             "My {person} took a photo of the {A}."],
    "service": ["The {A} brought the menu.", "We asked the {A} for the wine list.",
                "The {A} showed us to our table.", "The {A} took our coats."],
    "price": ["My {person} asked about the {A}.", "The {A} is listed on their website.",
              "We looked at the {A} before ordering."],
    "ambience": ["I noticed the {A} as we walked in.", "The {A} has changed since last year.",
                 "My {person} asked about the {A}."],
    "any": ["We talked about the {A} on the way home.", "I had read about the {A} online."],
}

_FILLERS = [
    "We went there on a {day} {part}.",
    "My {person} had recommended the place.",
    "It is a short walk from the {place}.",
    "We arrived at around {hour}.",
    "There were {count} of us.",
    "We had booked a table a week ahead.",
    "I had been meaning to try it for a while.",
    "We were celebrating my {person}'s birthday.",
    "It was our first visit.",
    "The place opened last {month}.",
    "We parked around the corner.",
    "I took the bus there from the {place}.",
    "It was raining that {part}.",
    "We sat near the window.",
    "My {person} joined us a little later.",
    "We had spent the afternoon at the {place}.",
    "I read about it in a local magazine.",
    "We stayed for about two hours.",
    "It was a {day}, so the street was quiet.",
    "My {person} and I shared a table by the door.",
    "We came back from the {place} just before {hour}.",
    "This was my second time there this {month_word}.",
    "The restaurant sits between a bakery and a bookshop.",
    "We walked home afterwards.",
    "I went with my {person} and two colleagues.",
    "We had a train to catch later.",
    "They open at {hour} on weekdays.",
    "I wrote this review the next morning.",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_PARTS = ["evening", "afternoon", "morning", "night"]
_PEOPLE = ["sister", "brother", "colleague", "partner", "friend", "neighbour", "cousin", "boss", "mother", "father"]
_PLACES = ["station", "museum", "park", "cinema", "office", "harbour", "university", "library", "market"]
_HOURS = ["six", "seven", "eight", "nine", "noon", "half past seven"]
_COUNTS = ["two", "three", "four", "five", "six"]
_MONTHS = ["January", "March", "May", "July", "September", "November", "spring", "summer", "winter"]
_MONTH_WORDS = ["month", "year", "week", "season"]


@dataclass(frozen=True)
class Review:
    """One generated review.

    sentences:        the sentences, in order (text = " ".join(sentences)).
    sentiment, topic: the labels (one of SENTIMENTS, TOPICS).
    label_sentences:  indices of the sentences that carry both labels (the opinion sentences).
    label_words:      per sentence, the indices of its label-bearing words (empty for filler).
    """

    sentences: tuple[str, ...]
    sentiment: str
    topic: str
    label_sentences: tuple[int, ...]
    label_words: tuple[tuple[int, ...], ...]

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


def _fill(template: str, slots: dict[str, str]) -> tuple[str, tuple[int, ...]]:
    # Returns the sentence and the indices of the words that came from label-bearing slots.
    words: list[str] = []
    marked: list[int] = []
    for part in template.split(" "):
        marked_part = False
        text = part
        for name, value in slots.items():
            token = "{" + name + "}"
            if token in text:
                text = text.replace(token, value)
                marked_part = marked_part or name in ("A", "O", "L", "N", "R")
        if not text.strip():
            continue
        for piece in text.split(" "):
            if piece:
                if marked_part:
                    marked.append(len(words))
                words.append(piece)
    if part_not := [i for i, w in enumerate(words) if w == "not" and "{N}" in template]:
        marked.extend(part_not)
    sentence = " ".join(words)
    sentence = sentence[0].upper() + sentence[1:]
    return sentence, tuple(sorted(set(marked)))


def opinion_sentence(rng: random.Random, topic: str, sentiment: str) -> tuple[str, tuple[int, ...]]:
    """Returns one opinion sentence about `topic` with `sentiment`, and its label-bearing word indices."""
    aspect, plural = rng.choice(_ASPECTS[topic])
    opposite = SENTIMENTS[1 - SENTIMENTS.index(sentiment)]
    template = rng.choice(_TEMPLATES)
    if template.startswith("What") and plural:
        template = "What {O} {A}!"
    slots = {
        "A": aspect,
        "be": "were" if plural else "was",
        "O": rng.choice(_OPINIONS[(topic, sentiment)]),
        "N": rng.choice(_OPINIONS[(topic, opposite)]),
        "I": rng.choice(_INTENSIFIERS),
        "L": rng.choice(_LIKE[sentiment]),
        "R": rng.choice(_REACTION[sentiment]),
    }
    if template.startswith("What") and not plural:
        article = "an" if slots["O"][0] in "aeiou" else "a"
        template = f"What {article} {{O}} {{A}}!"
    return _fill(template, slots)


def phrase_sentence(rng: random.Random, topic: str, sentiment: str) -> tuple[str, tuple[int, ...]]:
    """Returns one idiomatic opinion sentence and the indices of its label-bearing words."""
    aspect, plural = rng.choice(_ASPECTS[topic])
    template = rng.choice(_PHRASES[(topic, sentiment)])
    words, marked = [], []
    for token in template.split(" "):
        star = token.count("*") >= 2
        token = token.replace("*", "").replace("{A}", aspect)
        if plural and token == "was":
            token = "were"
        for piece in token.split(" "):
            if star:
                marked.append(len(words))
            words.append(piece)
    sentence = " ".join(words)
    return sentence[0].upper() + sentence[1:], tuple(marked)


def mention_sentence(rng: random.Random) -> str:
    """Returns a neutral sentence naming an aspect of any topic without judging it."""
    topic = rng.choice(TOPICS)
    aspect, _ = rng.choice(_ASPECTS[topic])
    template = rng.choice(_MENTIONS[topic] + _MENTIONS["any"])
    return template.format(A=aspect, person=rng.choice(_PEOPLE))


def filler_sentence(rng: random.Random, template: str | None = None) -> str:
    """Returns one neutral sentence that names no aspect and judges nothing."""
    template = template or rng.choice(_FILLERS)
    return template.format(
        day=rng.choice(_DAYS), part=rng.choice(_PARTS), person=rng.choice(_PEOPLE),
        place=rng.choice(_PLACES), hour=rng.choice(_HOURS), count=rng.choice(_COUNTS),
        month=rng.choice(_MONTHS), month_word=rng.choice(_MONTH_WORDS),
    )


def generate_review(rng: random.Random) -> Review:
    """Returns one review drawn from `rng`: 3-6 sentences, 1-2 of them opinions."""
    sentiment = rng.choice(SENTIMENTS)
    topic = rng.choice(TOPICS)
    n_sentences = rng.randint(3, 6)
    n_opinions = 1 if rng.random() < 0.65 else 2
    positions = sorted(rng.sample(range(n_sentences), n_opinions))
    filler_templates = iter(rng.sample(_FILLERS, n_sentences - n_opinions))  # no template twice
    sentences, label_words = [], []
    mentioned = False  # at most one neutral sentence naming an aspect
    for i in range(n_sentences):
        if i in positions:
            make = phrase_sentence if rng.random() < 0.4 else opinion_sentence
            sentence, marked = make(rng, topic, sentiment)
        elif not mentioned and rng.random() < 0.45:
            sentence, marked, mentioned = mention_sentence(rng), (), True
        else:
            sentence, marked = filler_sentence(rng, next(filler_templates)), ()
        sentences.append(sentence)
        label_words.append(marked)
    return Review(tuple(sentences), sentiment, topic, tuple(positions), tuple(label_words))


def generate_reviews(count: int, seed: int) -> list[Review]:
    """Returns `count` reviews, the same for the same seed."""
    rng = random.Random(seed)
    return [generate_review(rng) for _ in range(count)]
