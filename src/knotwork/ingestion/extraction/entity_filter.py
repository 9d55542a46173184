"""A measured filter for chunk entities that only weak extractors voted for.

Capitalised sentence openers ("Huge thanks"), table labels ("Criteria: Uptime"), job titles,
generic acronyms, weekdays, list fragments ("A / B") come out of NER and the capitalisation
guessers as entities. Each chunk entity whose votes are all weak (no rule, gazetteer, Slack
user, speaker, known name or LLM vote) is scored by a logistic model over the features of
:func:`features`; below :data:`KEEP_THRESHOLD` it is dropped before relations are read.

The weights are data (:data:`WEIGHTS`), fitted by ``bench/fit_entity_filter.py`` on one
development corpus and reported on the other (see that script's docstring for the figures).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.given_names import is_given_name
from knotwork.ingestion.extraction.lexicon import FUNCTION_WORDS, STOP_NAMES
from knotwork.ingestion.extraction.mentions import JOB_ROLE_WORDS
from knotwork.ingestion.extraction.types import LocalEntity, Mention

WordTest = Callable[[str], bool]

STRONG_EXTRACTORS = frozenset({"rule", "gazetteer", "user", "speaker", "known", "llm", "acronym",
                               "alias"})
_ROLE_WORDS = frozenset(w.lower() for w in JOB_ROLE_WORDS) | frozenset(
    {"head", "chief", "vp", "cto", "ceo", "coo", "cfo", "cco", "cro", "cpo", "ciso", "mlro",
     "partner", "coordinator", "producer", "artist", "associate", "assistant", "representative"})
_LINKERS = frozenset({"of", "and", "de", "the", "for", "in", "on", "&", "van", "von", "da", "la"})
_ODD = re.compile(r"[:/|+;,!?()\[\]{}\"“”]|[^\w\s&.'’-]")

FEATURES: tuple[str, ...] = (
    "single_word", "all_common_words", "first_word_common", "has_lowercase_word",
    "odd_punctuation", "function_word_start",
    "role_word", "label_colon", "sentence_start_only", "given_name_first", "spacy_vote",
    "several_votes", "mentions_2plus", "type_person", "type_org", "type_product",
    "type_location", "type_other", "plural_of_word", "long_name",
)

# fitted by bench/fit_entity_filter.py on the formal-voice development corpus (logistic regression);
# at 0.3 it scores 41% of that corpus's weak non-gold chunk entities and 8% of its weak gold ones
# below the threshold, and on the casual-voice one (not fitted on) 42% and 9%
WEIGHTS: dict[str, float] = {
    "single_word": -0.958,
    "all_common_words": -1.361,
    "first_word_common": 0.209,
    "has_lowercase_word": 0.0,
    "odd_punctuation": -0.9,
    "function_word_start": -0.137,
    "role_word": -1.387,
    "label_colon": -0.697,
    "sentence_start_only": -0.122,
    "given_name_first": 1.856,
    "spacy_vote": 0.558,
    "several_votes": 0.002,
    "mentions_2plus": 1.254,
    "type_person": 0.823,
    "type_org": -0.347,
    "type_product": -0.218,
    "type_location": 0.227,
    "type_other": -0.482,
    "plural_of_word": -0.448,
    "long_name": -1.559,
    "bias": 0.936,
}
KEEP_THRESHOLD = 0.3


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"\s+", name.strip()) if w]


def features(ent: LocalEntity, text: str, is_word: WordTest) -> list[float]:
    """The feature vector of one chunk entity, in the order of :data:`FEATURES`."""
    name = ent.name
    words = _words(name)
    lowered = [w.lower().strip(".,'’") for w in words]
    content = [w for w in lowered if w not in _LINKERS]
    letters = re.sub(r"[^A-Za-z]", "", name)
    votes = {v for m in ent.mentions for v in (m.votes or (m.extractor,))}
    starts = [m.start for m in ent.mentions]

    def opens_sentence(pos: int) -> bool:
        before = text[max(0, pos - 3):pos].rstrip(" \t")
        return pos == 0 or before == "" or before[-1:] in ".!?\n:*-#>•"

    label = any(re.match(r"[ \t]*:", text[m.end:m.end + 3]) for m in ent.mentions)
    single = len(words) == 1
    plural = single and lowered[0].endswith("s") and is_word(lowered[0][:-1])
    row = {
        "single_word": single,
        "all_common_words": bool(content) and all(is_word(w) for w in content),
        "first_word_common": bool(lowered) and is_word(lowered[0]),
        "has_lowercase_word": any(w[:1].islower() and w not in _LINKERS for w in words[1:]),
        "odd_punctuation": bool(_ODD.search(name)),
        "has_ampersand": "&" in name,
        "has_digit": any(c.isdigit() for c in name),
        "all_caps_short": bool(letters) and letters.isupper() and len(letters) <= 5,
        "function_word_start": bool(lowered) and (lowered[0] in FUNCTION_WORDS
                                                  or lowered[0] in STOP_NAMES),
        "role_word": any(w in _ROLE_WORDS for w in lowered),
        "label_colon": label,
        "sentence_start_only": bool(starts) and all(opens_sentence(s) for s in starts),
        "given_name_first": bool(words) and is_given_name(words[0]),
        "spacy_vote": "spacy" in votes,
        "several_votes": len(votes) >= 2,
        "mentions_2plus": len(ent.mentions) >= 2,
        "type_person": ent.type is EntityType.PERSON,
        "type_org": ent.type is EntityType.ORGANIZATION,
        "type_product": ent.type is EntityType.PRODUCT,
        "type_location": ent.type is EntityType.LOCATION,
        "type_other": ent.type not in (EntityType.PERSON, EntityType.ORGANIZATION,
                                       EntityType.PRODUCT, EntityType.LOCATION),
        "plural_of_word": plural,
        "long_name": len(words) >= 4,
    }
    return [float(row[f]) for f in FEATURES]


def is_weak(ent: LocalEntity) -> bool:
    """Only statistical or capitalisation guesses voted for it (and it is no identifier)."""
    if ent.subtype == "IDENTIFIER":
        return False
    return not any(v in STRONG_EXTRACTORS for m in ent.mentions
                   for v in (m.votes or (m.extractor,)))


def keep_probability(vector: Sequence[float], weights: dict[str, float] | None = None) -> float:
    w = weights or WEIGHTS
    z = w["bias"] + sum(w[f] * x for f, x in zip(FEATURES, vector, strict=True))
    return 1.0 / (1.0 + math.exp(-z))


# features that let the model judge a name of several words; without one of them a multi-word
# name of common words ("Ledger Ops", "Partner Growth": a team) is kept whatever it scores
_MULTI_WORD_EVIDENCE = ("odd_punctuation", "role_word", "label_colon", "function_word_start")


def junk(entities: Sequence[LocalEntity], text: str, is_word: WordTest) -> set[int]:
    """Indexes of the weak entities the model scores below the threshold."""
    out: set[int] = set()
    for i, ent in enumerate(entities):
        if not is_weak(ent):
            continue
        vector = features(ent, text, is_word)
        row = dict(zip(FEATURES, vector, strict=True))
        if not row["single_word"] and not any(row[f] for f in _MULTI_WORD_EVIDENCE):
            continue
        if keep_probability(vector) < KEEP_THRESHOLD:
            out.add(i)
    return out


# Where a guessed word stands that makes it a label or a heading, not a name (each a named
# pattern; the word is a common word and no given name, and no strong extractor voted for it):
#   row_label     a key of a key-value row: "Verdict: Rejected; Cost: high", "Owner: X · Window: Y"
#   heading_word  a heading line that is the word alone: "## Background", "Goal"
#   key_head      the first word of a lowercase key opening a line: "Office head: X", "Release date: Y"
LABEL_PLACES: dict[str, re.Pattern[str]] = {
    "row_label": re.compile(r"^[ \t]*(?:[-*•][ \t]*)?(?P<w>[A-Z][\w'’-]*)[ \t]*:[ \t]*\S[^\n]*?"
                            r"(?:[;|·][ \t]*[A-Z][\w'’ -]{0,30}:)", re.MULTILINE),
    "heading_word": re.compile(r"^[ \t]*(?:#{1,6}[ \t]*)?(?P<w>[A-Z][\w'’-]*)[ \t]*:?[ \t]*$",
                               re.MULTILINE),
    "key_head": re.compile(r"^[ \t]*(?:[-*•][ \t]*)?(?P<w>[A-Z][\w'’-]*)(?:[ \t]+[a-z][\w'’-]*){1,2}"
                           r"[ \t]*:[ \t]*\S", re.MULTILINE),
}
_SEPARATED_LABEL = re.compile(r"(?:^|[;|·])[ \t]*(?P<w>[A-Z][\w'’-]*)[ \t]*:", re.MULTILINE)


def label_words(text: str, mentions: Sequence[Mention], is_word: WordTest) -> list[Mention]:
    """The mentions less the guessed single common words that stand as a label or a heading
    (:data:`LABEL_PLACES`): "Verdict" of "Verdict: Rejected; Cost: high" names nothing."""
    spans: set[tuple[int, int]] = set()
    for place in LABEL_PLACES.values():
        for hit in place.finditer(text):
            spans.add((hit.start("w"), hit.end("w")))
    for line in re.finditer(r"[^\n]+", text):  # every key of a row with two keys or more
        keys = list(_SEPARATED_LABEL.finditer(line.group(0)))
        if len(keys) >= 2:
            spans.update((line.start() + k.start("w"), line.start() + k.end("w")) for k in keys)
    if not spans:
        return list(mentions)
    return [m for m in mentions if not (
        (m.start, m.end) in spans and " " not in m.text and is_word(m.text)
        and not is_given_name(m.text) and m.subtype != "TEAM"
        and set(m.votes or (m.extractor,)) <= _GUESS_VOTES)]


_GUESS_VOTES = frozenset({"spacy", "shape", "caps", "gliner"})
