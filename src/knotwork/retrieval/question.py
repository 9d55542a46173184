"""What a question's wording says about the facts that answer it (rule-based, no LLM)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from knotwork.domain.models import Entity, EntityType
from knotwork.domain.models import RelationType as R
from knotwork.ingestion.extraction.relations import relation_types_named

Side = Literal["source", "target"]

_DO_QUESTION = re.compile(r"^\s*(?:who|whom|what|which|where|when|how)(?:\s+\w+)?\s+(?:does|did|do)\b", re.IGNORECASE)
_VERB_QUESTION = re.compile(
    r"^\s*(?:who|what|which)\s+(?!(?:does|did|do|is|was|are|were|has|have|had|will|would|can|"
    r"could|should)\b)[a-z]+s?\b", re.IGNORECASE)
_POSSESSIVE = re.compile(r"\w(?:'s|’s)\s+\w", re.IGNORECASE)

# "the manager of X" / "X's manager": which fact type answers, and which end X is on
ROLE_NOUNS: dict[str, tuple[R, Side]] = {
    "manager": (R.REPORTS_TO, "source"), "boss": (R.REPORTS_TO, "source"),
    "supervisor": (R.REPORTS_TO, "source"), "line manager": (R.REPORTS_TO, "source"),
    "lead": (R.LEADS, "target"), "leader": (R.LEADS, "target"), "head": (R.LEADS, "target"),
    "owner": (R.OWNS, "target"), "maintainer": (R.MAINTAINS, "target"),
    "employer": (R.WORKS_AT, "source"), "company": (R.WORKS_AT, "source"),
    "team": (R.MEMBER_OF, "source"), "location": (R.LOCATED_IN, "source"),
    "members": (R.MEMBER_OF, "target"),
    "office": (R.LOCATED_IN, "source"), "headquarters": (R.HEADQUARTERED_IN, "source"),
}
_ROLE_OF = re.compile(r"\b(" + "|".join(sorted(ROLE_NOUNS, key=len, reverse=True)) + r")\s+(?:of|for)\b", re.IGNORECASE)
_ROLE_POSSESSIVE = re.compile(r"(?:'s|’s)\s+(" + "|".join(sorted(ROLE_NOUNS, key=len, reverse=True)) + r")\b", re.IGNORECASE)


@dataclass(frozen=True)
class QuestionHints:
    side: Side | None = None  # where the named entities sit in the answering fact
    types: frozenset[R] = field(default_factory=frozenset)


# "Where is Jia based?", "Where does Klaus work from?": a place of the named entity;
# "Where does Bob work?": a place, or the employer or team
_WHERE_PLACE = re.compile(
    r"^\s*where\b.*\b(?:based|located|situated|sits?|sitting|lives?|living|hosted|"
    r"run(?:s|ning)?|deployed|head-?quartered|work(?:s|ing)?\s+(?:from|out\s+of))\b",
    re.IGNORECASE)
_WHERE_WORK = re.compile(r"^\s*where\b.*\bwork(?:s|ed|ing)?\b", re.IGNORECASE)


# "Who is on the Checkout team?", "Who's in Payments?": the team's members
_WHO_IS_ON = re.compile(r"^\s*who(?:\s+(?:is|are|was|were)|'s|’s)\s+(?:currently\s+|now\s+|still\s+)?"
                        r"(?:on(?![- ]?call\b)|in(?!\s+charge\b)|part\s+of|a\s+member\s+of)\b",
                        re.IGNORECASE)  # not "Who is on call for X?": that is who supports X


# "Which team is Ana on?", "What squad does Bo work in?": the named person's group
_WHICH_GROUP_IS_ON = re.compile(
    r"^\s*(?:which|what)\s+(?:team|squad|group|department|division|tribe|unit|org|guild)\s+"
    r"(?:is|are|was|were|does|do|did)\s+.+?\s+(?:on|in|part\s+of|a\s+member\s+of|belongs?\s+to|"
    r"works?\s+(?:on|in|for)|sits?\s+in|joined?)\s*\??\s*$", re.IGNORECASE)


# "Which office does Ana work from?", "What city is the Ledger Team in?": the named one's place
_WHICH_PLACE_IS = re.compile(
    r"^\s*(?:which|what)\s+(?:office|city|location|site|country|region|campus|building)\s+"
    r"(?:is|are|was|were|does|do|did)\s+\S", re.IGNORECASE)


def analyze(question: str) -> QuestionHints:
    if _WHO_IS_ON.match(question):
        return QuestionHints("target", frozenset({R.MEMBER_OF}))
    if _WHICH_GROUP_IS_ON.match(question):
        return QuestionHints("source", frozenset({R.MEMBER_OF}))
    if _WHICH_PLACE_IS.match(question):
        return QuestionHints("source", frozenset({R.LOCATED_IN}))
    if _WHERE_PLACE.match(question):
        return QuestionHints("source", frozenset({R.LOCATED_IN}) | frozenset(
            relation_types_named(question)))
    if _WHERE_WORK.match(question):
        return QuestionHints("source", frozenset({R.LOCATED_IN, R.WORKS_AT, R.MEMBER_OF}))
    role = _ROLE_OF.search(question) or _ROLE_POSSESSIVE.search(question)
    if role:
        rtype, side = ROLE_NOUNS[role.group(1).lower()]
        return QuestionHints(side, frozenset({rtype}) | frozenset(relation_types_named(question)))
    types = frozenset(relation_types_named(question))
    if _DO_QUESTION.match(question) or _POSSESSIVE.search(question):
        return QuestionHints("source", types)
    if _VERB_QUESTION.match(question):
        return QuestionHints("target", types)
    return QuestionHints(None, types)


_E = EntityType
# "Which <noun> …": the kind of entity that answers, and the head words its name may carry
_ANSWER_NOUNS: dict[str, tuple[frozenset[EntityType], frozenset[str]]] = {
    **{n: (frozenset({_E.ORGANIZATION}), frozenset({"team", "squad", "group", "guild", "tribe", "crew"}))
       for n in ("team", "squad", "crew")},
    **{n: (frozenset({_E.ORGANIZATION}), frozenset({"division", "department", "org", "unit", "group"}))
       for n in ("division", "department", "org", "unit", "group")},
    **{n: (frozenset({_E.LOCATION}), frozenset()) for n in ("office", "city", "location", "country", "site")},
    **{n: (frozenset({_E.ORGANIZATION}), frozenset()) for n in ("vendor", "company", "employer", "supplier")},
    # a project is an undertaking (CONCEPT, subtype PROJECT) or, as extracted, a product
    "project": (frozenset({_E.PRODUCT, _E.TECHNOLOGY, _E.CONCEPT}), frozenset()),
    **{n: (frozenset({_E.PRODUCT, _E.TECHNOLOGY}), frozenset()) for n in (
        "system", "service", "product", "tool", "technology", "database", "platform")},
}
_WHICH_NOUN = re.compile(r"^\s*(?:which|what)\s+(?:[a-z/-]+\s+)?(" + "|".join(_ANSWER_NOUNS) + r")\b",
                         re.IGNORECASE)


@dataclass(frozen=True)
class AnswerKind:
    """What kind of entity answers the question: its types, and head words that fit best."""

    types: frozenset[EntityType]
    heads: frozenset[str] = field(default_factory=frozenset)

    def fits(self, etype: EntityType, name: str) -> bool:
        if etype not in self.types:
            return False
        return not self.heads or bool(self.heads & {w.lower() for w in re.findall(r"\w+", name)})


def answer_kind(question: str) -> AnswerKind | None:
    """"Who …" → a person, "Where …" → a place, "Which team …" → an organisation named
    "… Team/Squad", "Which observability vendor …" → an organisation; None when unsaid."""
    m = _WHICH_NOUN.match(question)
    if m:
        types, heads = _ANSWER_NOUNS[m.group(1).lower()]
        return AnswerKind(types, heads)
    if re.match(r"^\s*(?:who|whom)\b", question, re.IGNORECASE):
        return AnswerKind(frozenset({_E.PERSON}))
    if re.match(r"^\s*where\b", question, re.IGNORECASE):
        return AnswerKind(frozenset({_E.LOCATION}))
    return None


_WH_PHRASE = re.compile(r"^(?:which|what|whose|who|whom|where|when|how|any|every|each|all|some)\b",
                        re.IGNORECASE)


def is_question_phrase(name: str) -> bool:
    """'Which team', 'What division': the question's own words, not a name it states."""
    return bool(_WH_PHRASE.match(name.strip()))


_FULL_NAME = re.compile(r"\b([A-Z][a-z'’-]+)\s+([A-Z][a-z'’-]+(?:-[A-Z][a-z]+)?)\b(?!\s+[A-Z])")


def wrong_surnames(question: str, first_name_only: Sequence[str], full_names: Sequence[str]) -> list[str]:
    """Full names the question states whose given name belongs to a known person but whose
    surname does not: "Tariq Russo" when only "Tariq Kato" exists is someone unknown.

    ``first_name_only``: the question's words that matched a known person by given name only;
    ``full_names``: the question's words that matched a known entity by its whole name."""
    firsts = {w.lower() for w in first_name_only}
    covered = " | ".join(n.lower() for n in full_names)
    words = re.findall(r"[A-Za-z][\w'’-]*", question)
    if sum(w[0].isupper() for w in words) * 2 > len(words):
        return []  # "Who Does Priya Report To?": title case says nothing about names
    out: list[str] = []
    for m in _FULL_NAME.finditer(question):
        given, full = m.group(1).lower(), re.sub(r"(?:'s|’s|'|’)$", "", m.group(0))
        if given in firsts and not is_question_phrase(full) and full.lower() not in covered:
            out.append(full)
    return out


def unshadowed(found: Sequence[Entity], surfaces: dict[str, str]) -> list[Entity]:
    """Drop people matched by a given name only when those words are part of another
    entity's full name in the question: "Jasmine Colombo" is not also every other Jasmine."""
    full = [surfaces[k] for e in found for k in e.name_keys
            if not k.startswith("first:") and k in surfaces]

    def shadowed(entity: Entity) -> bool:
        if any(k in surfaces for k in entity.name_keys if not k.startswith("first:")):
            return False
        words = [surfaces[k] for k in entity.name_keys if k.startswith("first:") and k in surfaces]
        return bool(words) and all(
            any(w != f and re.search(rf"(?<!\w){re.escape(w)}(?!\w)", f) for f in full)
            for w in words)

    return [e for e in found if not shadowed(e)]
