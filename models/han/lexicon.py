"""Words of the review generator (models/han/task.py): domains, aspects, judgements, opinion templates, neutral
facts.

Built so that no surface feature tells an opinion from a fact: the aspect nouns of the
opinions also appear in neutral sentences; neutral sentences are full of adjectives
(colours, sizes, materials), numbers, objects and times, and some hold a "not"; opinion
sentences sometimes hold a number or a colour too. Only what the sentence *judges* differs.
"""

from __future__ import annotations

DOMAINS = ("restaurant", "hotel", "product", "app", "film", "service", "travel")

# (noun phrase, plural?) per domain and topic. Topics: quality (the thing itself), service
# (the people), price, ambience (the place; not every domain has one).
ASPECTS: dict[str, dict[str, list[tuple[str, bool]]]] = {
    "restaurant": {
        "quality": [("pasta", False), ("soup", False), ("steak", False), ("curry", False), ("food", False),
                    ("dessert", False), ("coffee", False), ("noodles", True), ("pizza", False), ("fish", False),
                    ("salad", False), ("dumplings", True), ("bread", False), ("burger", False)],
        "service": [("waiter", False), ("waitress", False), ("staff", False), ("server", False), ("host", False),
                    ("bartender", False), ("waiters", True)],
        "price": [("bill", False), ("prices", True), ("set menu", False), ("wine list prices", True)],
        "ambience": [("dining room", False), ("terrace", False), ("music", False), ("decor", False),
                     ("lighting", False), ("atmosphere", False)],
    },
    "hotel": {
        "quality": [("room", False), ("bed", False), ("breakfast", False), ("shower", False), ("mattress", False),
                    ("pillows", True), ("bathroom", False), ("wifi", False)],
        "service": [("receptionist", False), ("staff", False), ("concierge", False), ("housekeeping", False),
                    ("porter", False), ("night manager", False)],
        "price": [("room rate", False), ("rate", False), ("price", False), ("parking fee", False), ("bill", False)],
        "ambience": [("lobby", False), ("pool area", False), ("view", False), ("courtyard", False), ("bar", False),
                     ("corridor", False)],
    },
    "product": {
        "quality": [("battery", False), ("screen", False), ("sound", False), ("zip", False), ("kettle", False),
                    ("headphones", True), ("charger", False), ("blender", False), ("speaker", False),
                    ("keyboard", False), ("strap", False), ("lamp", False), ("vacuum cleaner", False), ("boots", True),
                    ("jacket", False), ("camera", False), ("printer", False), ("cover", False)],
        "service": [("seller", False), ("courier", False), ("customer service", False), ("delivery driver", False),
                    ("shop assistant", False)],
        "price": [("price", False), ("cost", False), ("shipping fee", False), ("deal", False)],
        "ambience": [("shop", False), ("showroom", False)],
    },
    "app": {
        "quality": [("app", False), ("update", False), ("interface", False), ("search", False), ("login", False),
                    ("sync", False), ("map", False), ("notifications", True), ("editor", False), ("game", False)],
        "service": [("support team", False), ("help desk", False), ("chat support", False), ("developers", True)],
        "price": [("subscription", False), ("monthly fee", False), ("premium plan", False), ("in-app purchases", True)],
        "ambience": [],
    },
    "film": {
        "quality": [("plot", False), ("acting", False), ("ending", False), ("script", False), ("soundtrack", False),
                    ("film", False), ("series", False), ("novel", False), ("characters", True), ("play", False),
                    ("dialogue", False), ("book", False)],
        "service": [("usher", False), ("box office staff", False), ("cinema staff", False)],
        "price": [("tickets", True), ("ticket price", False), ("popcorn prices", True)],
        "ambience": [("cinema", False), ("theatre", False), ("auditorium", False), ("foyer", False)],
    },
    "service": {
        "quality": [("haircut", False), ("repair", False), ("cleaning", False), ("work", False), ("treatment", False),
                    ("lesson", False), ("installation", False), ("massage", False), ("paint job", False)],
        "service": [("mechanic", False), ("plumber", False), ("hairdresser", False), ("technician", False),
                    ("cleaner", False), ("instructor", False), ("teacher", False), ("dentist", False),
                    ("electrician", False), ("trainer", False)],
        "price": [("quote", False), ("invoice", False), ("fee", False), ("hourly rate", False), ("price", False)],
        "ambience": [("gym", False), ("studio", False), ("salon", False), ("waiting room", False), ("clinic", False)],
    },
    "travel": {
        "quality": [("flight", False), ("tour", False), ("ride", False), ("crossing", False), ("trip", False),
                    ("journey", False), ("excursion", False)],
        "service": [("cabin crew", False), ("driver", False), ("guide", False), ("conductor", False), ("crew", False),
                    ("ground staff", False)],
        "price": [("fare", False), ("tickets", True), ("baggage fee", False), ("price", False)],
        "ambience": [("cabin", False), ("station", False), ("deck", False), ("campsite", False), ("carriage", False),
                     ("terminal", False)],
    },
}

# Judgements usable after "is/was" (and before a noun), per topic and sentiment.
OPINIONS: dict[tuple[str, str], list[str]] = {
    ("quality", "positive"): ["excellent", "superb", "brilliant", "great", "wonderful", "fantastic", "outstanding",
                              "reliable", "solid", "impressive", "flawless", "lovely", "perfect", "first-rate"],
    ("quality", "negative"): ["awful", "terrible", "poor", "useless", "shoddy", "disappointing", "dreadful", "faulty",
                              "flimsy", "rubbish", "mediocre", "horrible", "pathetic", "substandard"],
    ("service", "positive"): ["friendly", "helpful", "attentive", "polite", "kind", "patient", "welcoming",
                              "professional", "cheerful", "courteous", "efficient", "considerate"],
    ("service", "negative"): ["rude", "unhelpful", "dismissive", "careless", "impatient", "unfriendly", "arrogant",
                              "clueless", "lazy", "incompetent", "sloppy", "hostile"],
    ("price", "positive"): ["reasonable", "fair", "affordable", "cheap", "unbeatable", "modest", "honest", "decent",
                            "competitive", "generous"],
    ("price", "negative"): ["outrageous", "overpriced", "steep", "absurd", "ridiculous", "excessive", "extortionate",
                            "shocking", "scandalous", "inflated"],
    ("ambience", "positive"): ["cosy", "charming", "relaxing", "peaceful", "elegant", "pleasant", "inviting", "calm",
                               "stylish", "delightful", "spotless", "airy"],
    ("ambience", "negative"): ["noisy", "gloomy", "cramped", "dreary", "grim", "depressing", "stuffy", "dingy",
                               "chaotic", "filthy", "shabby", "drab"],
}
# Extra judgements that only fit some domains' quality aspects.
DOMAIN_QUALITY: dict[tuple[str, str], list[str]] = {
    ("restaurant", "positive"): ["delicious", "tasty", "fresh", "flavourful", "scrumptious"],
    ("restaurant", "negative"): ["bland", "stale", "greasy", "tasteless", "soggy", "overcooked"],
    ("hotel", "positive"): ["comfortable", "clean", "spacious", "quiet"],
    ("hotel", "negative"): ["uncomfortable", "dirty", "grubby", "mouldy"],
    ("product", "positive"): ["sturdy", "durable", "well made", "comfortable"],
    ("product", "negative"): ["fragile", "broken", "defective", "cheaply made"],
    ("app", "positive"): ["fast", "smooth", "intuitive", "stable"],
    ("app", "negative"): ["buggy", "sluggish", "confusing", "unusable"],
    ("film", "positive"): ["gripping", "moving", "hilarious", "captivating", "beautiful"],
    ("film", "negative"): ["boring", "dull", "predictable", "tedious", "confusing"],
    ("service", "positive"): ["thorough", "careful", "meticulous"],
    ("service", "negative"): ["botched", "rushed", "careless"],
    ("travel", "positive"): ["smooth", "comfortable", "memorable"],
    ("travel", "negative"): ["exhausting", "miserable", "chaotic"],
}

INTENSIFIERS = ["", "", "", "", "really", "very", "truly", "absolutely", "incredibly", "quite", "so", "extremely"]
LIKE = {"positive": ["loved", "adored", "enjoyed", "liked", "appreciated", "recommend"],
        "negative": ["hated", "disliked", "regretted", "could not stand", "do not recommend", "would avoid"]}
REACTION = {"positive": ["Happily,", "Best of all,", "Luckily,", "Thankfully,", "Honestly,", "Overall,"],
            "negative": ["Sadly,", "Unfortunately,", "Worst of all,", "Honestly,", "Overall,", "Frankly,"]}

# Whole opinion sentences; *starred* words are label-bearing; {A} the aspect, {n} a number.
PHRASES: dict[tuple[str, str], list[str]] = {
    ("quality", "positive"): [
        "The *{A}* *exceeded* *my* *expectations*.", "I would *happily* *recommend* the *{A}* to anyone.",
        "The *{A}* has *held* *up* *really* *well* after {n} months.", "The *{A}* is the *best* I have *ever* had.",
        "I *could* *not* *be* *happier* with the *{A}*.", "The *{A}* *works* *perfectly*.",
        "We were *really* *impressed* by the *{A}*.", "The *{A}* was *worth* *every* *minute*.",
        "Nothing *beats* this *{A}*.", "The *{A}* *never* *lets* *me* *down*.",
    ],
    ("quality", "negative"): [
        "The *{A}* *broke* after {n} days.", "The *{A}* *stopped* *working* within a week.",
        "The *{A}* was a *complete* *disappointment*.", "I *regret* choosing the *{A}*.",
        "The *{A}* *fell* *apart* almost at once.", "The *{A}* is the *worst* I have *ever* had.",
        "*Avoid* the *{A}* at all costs.", "The *{A}* *does* *not* *work* *properly*.",
        "After {n} minutes the *{A}* had *already* *failed*.", "The *{A}* was a *waste* *of* *time*.",
    ],
    ("service", "positive"): [
        "The *{A}* *went* *out* *of* *their* *way* to help us.", "The *{A}* *could* *not* *have* *been* *nicer*.",
        "The *{A}* *solved* *the* *problem* in {n} minutes.", "The *{A}* *greeted* *us* *with* *a* *smile*.",
        "The *{A}* *made* *us* *feel* *welcome*.", "Nothing was *too* *much* *trouble* for the *{A}*.",
        "The *{A}* *explained* *everything* *patiently*.", "The *{A}* *treated* *us* *like* *family*.",
    ],
    ("service", "negative"): [
        "The *{A}* *ignored* *us* for {n} minutes.", "The *{A}* *rolled* *their* *eyes* at every question.",
        "The *{A}* *never* *answered* *our* *calls*.", "The *{A}* *snapped* *at* *us* for no reason.",
        "The *{A}* *forgot* *our* *request* twice.", "The *{A}* *argued* *with* *us* instead of helping.",
        "We *waited* *forever* for the *{A}*.", "The *{A}* *did* *not* *even* *apologise*.",
    ],
    ("price", "positive"): [
        "The *{A}* was *worth* *every* *penny*.", "At {n} pounds the *{A}* is a *bargain*.",
        "The *{A}* was *much* *lower* *than* *we* *expected*.", "For the quality, the *{A}* is a *steal*.",
        "The *{A}* *left* *plenty* *in* *our* *wallets*.", "I was *pleasantly* *surprised* by the *{A}*.",
        "You *get* *a* *lot* for the *{A}*.", "The *{A}* is *easy* *on* *the* *wallet*.",
    ],
    ("price", "negative"): [
        "The *{A}* was *daylight* *robbery*.", "The *{A}* is a *complete* *rip-off*.",
        "At {n} pounds the *{A}* is a *joke*.", "We *nearly* *fainted* when we saw the *{A}*.",
        "The *{A}* was *far* *too* *high* for what we got.", "The *{A}* is *not* *worth* *the* *money*.",
        "The *{A}* *emptied* *our* *wallets*.", "They *overcharged* *us* and the *{A}* was *absurd*.",
    ],
    ("ambience", "positive"): [
        "The *{A}* *felt* *warm* *and* *intimate*.", "We *loved* *spending* *time* in the *{A}*.",
        "The *{A}* *made* *us* *want* *to* *stay* longer.", "The *{A}* was *peaceful* *and* *quiet*.",
        "The *{A}* *had* *a* *magical* *feel*.", "The *{A}* *put* *us* *in* *a* *good* *mood*.",
    ],
    ("ambience", "negative"): [
        "The *{A}* was *so* *loud* we *had* *to* *shout*.", "The *{A}* *smelled* *of* *damp*.",
        "The *{A}* *felt* *like* *a* *waiting* *room*.", "The *{A}* was *freezing* *and* *draughty*.",
        "The *{A}* *gave* *us* *a* *headache*.", "The *{A}* *felt* *cold* *and* *unwelcoming*.",
    ],
}

# Opinion templates. {A} aspect, {be} was/were, {O}/{O2} opinions, {I} intensifier, {L} like-verb,
# {R} opener, {N} negated opposite opinion, {n} a number, {C} a colour, {P} a person.
OPINION_TEMPLATES = [
    "The {A} {be} {I} {O}.", "{R} the {A} {be} {I} {O}.", "We {L} the {A}.", "I {L} the {A}.",
    "I thought the {A} {be} {O}.", "Our {A} {be} {O}.", "My {P} said the {A} {be} {O}.",
    "Everyone agreed that the {A} {be} {O}.", "The {A} {be} not {N}.", "To be honest the {A} {be} not {N} at all.",
    "{R} we found the {A} {O}.", "The {A} {be} {O} and {O2}.", "After {n} days the {A} {be} still {O}.",
    "For {n} pounds, the {A} {be} {I} {O}.", "The {C} {A} {be} {I} {O}.", "Honestly, I found the {A} {O}.",
    "The {A} {be} {O}, just as my {P} said.", "In {n} years I have never seen such {O} {A}.",
]

# Neutral facts. {X} an aspect that is a thing (quality or ambience), {W} one that is a person
# (service), {Q} a price aspect, {A} any aspect; {O}/{O2} objects ({Os}: plural), {C}/{C2}
# colours, {S} a shape or material, {n}/{n2} numbers, {T} a time, {D}/{D2} days, {P} a person,
# {M} a month, {ord} an ordinal, {be}/{has}/{does} agree with the aspect.
NEUTRAL_THING = [
    "The {X} {be} {C}.", "The {X} {be} {S}.", "The {X} {be} {C} and {S}.", "The {X} {be} next to the {O}.",
    "The {X} came with a {O} and a {O2}.", "The {X} {has} {n} {Os}.", "The {X} {be} on the {ord} floor.",
    "The {X} costs {n} pounds.", "The {X} {be} about {n} centimetres wide.", "The {X} {does} not come in {C}.",
    "I have not tried the {X} yet.", "The {X} {be} not {C}, it is {C2}.", "There are {n} {Os} in the {X}.",
    "The {X} changed in {M}.", "I took a photo of the {X}.", "The {X} {be} {S}, with a {C} {O}.",
    "The {X} uses {n} {Os}.", "The {X} {be} {C} with {C2} stripes.", "The {C} {X} {be} by the {O}.",
    "The {X} {be} made in {M} last year.", "We looked at the {X} for {n} minutes.",
]
NEUTRAL_PERSON = [
    "The {W} wore a {C} shirt.", "The {W} brought the {O}.", "The {W} asked for our {O}.",
    "We spoke to the {W} at {T}.", "The {W} stood by the {C} door.", "The {W} gave us {n} {Os}.",
    "The {W} started at {T} on {D}.", "My {P} called the {W} on {D}.", "The {W} did not mention the {O}.",
    "The {W} wrote the number {n} on a card.",
]
NEUTRAL_PRICE = [
    "The {Q} came to {n} pounds.", "We asked about the {Q}.", "The {Q} {be} listed on the website.",
    "My {P} paid the {Q} by card.", "The {Q} {be} printed on {C} paper.", "The {Q} changes in {M}.",
    "We did not check the {Q} before booking.", "The {Q} {be} on the {ord} page of the leaflet.",
]
NEUTRAL_GENERAL = [
    "There is a {C} {O} by the {O2}.", "There was a {O} on the {O2}.", "There were {n} of us.", "We arrived at {T}.",
    "It opens at {T} on {D}s.", "I went on a {D} in {M}.", "We paid {n} pounds in total.",
    "It took {n} minutes to get there.", "The box was {C} with a {C2} label.", "We did not use the {O}.",
    "They do not open on {D}s.", "We left at {T} on {D}.", "My {P} paid by card.", "The {O} and the {O2} are {C}.",
    "The label says it weighs {n} grams.", "The number on the {O} was {n}.", "It was raining on {D} at {T}.",
    "We sat by the {C} {O}.", "Our {P} recommended the place.", "I ordered it on {D} and it came on {D2}.",
    "My {P} came along.", "I wrote this on {D} evening.", "The {O} is {S}.", "The {O} was {C}.",
    "We had a {O} and a {O2} with us.", "I went with my {P} and {n} colleagues.", "We came back at {T}.",
    "I had read about it online.", "My {P} asked about the {A}.", "My {P} chose the {A}.",
    "We asked about the {A} at {T}.", "I read about the {A} in a magazine.", "We talked about the {A} on the way home.",
]
NEUTRAL_DOMAIN: dict[str, list[str]] = {
    "restaurant": ["We booked a table for {n}.", "The menu has {n} starters.", "We ordered the {X} at {T}.",
                   "The restaurant is on {M} Street.", "The tables are {S}."],
    "hotel": ["We checked in at {T}.", "Our room number was {n}{n2}.", "Breakfast is served until {T}.",
              "The lift is next to the {O}.", "We stayed for {n} nights."],
    "product": ["It arrived on {D} in a {C} box.", "The model number is {n}{n2}.", "I bought it in {M}.",
                "It comes in {C}, {C2} and black.", "The manual has {n} pages."],
    "app": ["Version {n}.{n2} came out in {M}.", "You sign in with an email address.", "The icon is {C}.",
            "It has {n} tabs along the bottom.", "The app needs an account."],
    "film": ["It is {n}{n2} minutes long.", "We saw it at {T} on {D}.", "It came out in {M}.",
             "The lead actor is from {M} Street.", "It has {n} episodes."],
    "service": ["My appointment was at {T}.", "I booked it on {D}.", "The shop is next to a {C} door.",
                "It took about {n} hours.", "I went back on {D2}."],
    "travel": ["We left from gate {n}.", "The trip takes about {n} hours.", "Our seats were in row {n}.",
               "We set off on {D} at {T}.", "I had one {C} suitcase."],
}
COLOURS = ["white", "black", "blue", "red", "green", "yellow", "grey", "brown", "orange", "purple", "pink", "silver",
           "beige", "navy blue", "dark green", "pale blue", "bright red", "gold", "cream", "turquoise"]
SIZES = ["round", "square", "wooden", "metal", "plastic", "glass", "leather", "made of steel", "made of cotton",
         "rectangular", "digital", "electric", "striped", "oval", "folding", "hand-painted", "wireless"]
OBJECTS = ["lamp", "table", "chair", "cable", "plug", "kettle", "mirror", "drawer", "shelf", "door", "window",
           "remote", "button", "sofa", "desk", "poster", "clock", "bottle", "bag", "card", "key", "screen", "menu",
           "umbrella", "cup", "plate", "sign", "backpack", "towel", "fridge", "ticket", "folder", "phone", "candle",
           "napkin", "pen", "map", "jug", "basket", "helmet"]
PEOPLE = ["sister", "brother", "colleague", "partner", "friend", "neighbour", "cousin", "boss", "mother", "father",
          "son", "daughter", "aunt", "uncle"]
TIMES = ["six", "seven", "eight", "nine", "noon", "half past seven", "7 pm", "8:30", "10 am", "quarter to five",
         "midnight", "11:15", "6:45"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
ORDINALS = ["first", "second", "third", "fourth", "fifth", "ninth", "twelfth"]
