"""The answer type a question asks for, and whether a candidate sentence holds one.

"Who runs the Madrid office?" is answered by a sentence that names a person; "How much does
X charge?" by one that states an amount of money; "When did Y go live?" by one that states a
date. A sentence about the question's subject that holds no value of the asked type does not
answer it, however similar it reads. The wording → type rules are data (:data:`ANSWER_TYPES`,
one named pattern each, first match wins); what counts as a value of each type is the graph's
typed entities named in the sentence plus a few surface patterns (dates, amounts, numbers).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from knotwork.domain.models import Entity, EntityType
from knotwork.ingestion.extraction.temporal import states_time
from knotwork.resolution.normalize import normalize_name

__all__ = ["ANSWER_TYPES", "AnswerType", "Intent", "asked_head", "holds_answer", "intent_of"]


class AnswerType(StrEnum):
    PERSON = "person"
    ORGANIZATION = "organization"
    PLACE = "place"
    DATE = "date"
    MONEY = "money"
    NUMBER = "number"
    DESCRIPTION = "description"  # anything else: no typed check


_PRE = r"^\s*(?:(?:in|at|on|for|from|to|with|by|under|of)\s+)?"
_WHICH = _PRE + r"(?:which|what)\s+(?:(?:kind|type|sort)\s+of\s+)?(?:[\w/&'’-]+\s+){0,2}?"
_PEOPLE = (r"(?:person|people|engineer|employee|manager|lead|leader|head|owner|director|"
           r"designer|developer|scientist|analyst|officer|commander|founder|member|colleague|"
           r"approver|author|reviewer|contact|sponsor|producer|coordinator)")
_ORGS = (r"(?:company|companies|firm|vendor|supplier|partner|provider|bank|processor|publisher|"
         r"studio|agency|customer|merchant|team|squad|division|department|group|organi[sz]ation)")
_PLACES = r"(?:city|office|country|region|location|site|town|campus|studio\s+location)"

# (name, answer type, pattern): the first that matches the question decides
ANSWER_TYPES: tuple[tuple[str, AnswerType, re.Pattern[str]], ...] = tuple(
    (name, kind, re.compile(pattern, re.IGNORECASE)) for name, kind, pattern in (
        ("how-much-money", AnswerType.MONEY,
         (r"^\s*how\s+much\b.*\b(?:cost|costs|charge|charges|charged|pay|pays|paid|spend|spent|"
          r"price|fee|earn|earns|worth|budget)\b|\bhow\s+much\s+(?:money|revenue|budget)\b")),
        ("money-noun", AnswerType.MONEY,
         (r"\b(?:revenue|turnover|salary|salaries|price|pricing|fee|budget\s+amount|"
          r"(?:dollar|euro|contract)\s+value|valuation)\b")),
        ("how-many", AnswerType.NUMBER, r"^\s*how\s+many\b"),
        ("count-noun", AnswerType.NUMBER,
         r"\b(?:count|number\s+of|headcount|percentage|rate|how\s+much)\b"),
        ("when", AnswerType.DATE, r"^\s*(?:since\s+|until\s+)?when\b"),
        ("which-date", AnswerType.DATE,
         _PRE + r"(?:which|what)\s+(?:\w+\s+){0,2}?(?:date|day|year|month|week|quarter)\b"),
        ("what-is-the-date", AnswerType.DATE,
         (r"^\s*what\s+(?:is|was|will\s+be)\s+(?:the\s+|its\s+|their\s+)?(?:[\w-]+\s+){0,3}?"
         r"(?:date|day)\b")),
        ("who", AnswerType.PERSON, _PRE + r"(?:who|whom|whose)\b"),
        ("name-of-person", AnswerType.PERSON,
         r"\bname\s+of\s+(?:\S+\s+){0,4}?" + _PEOPLE + r"\b"),
        ("which-person", AnswerType.PERSON, _WHICH + _PEOPLE + r"\b"),
        ("where", AnswerType.PLACE, r"^\s*(?:from\s+)?where\b"),
        ("which-place", AnswerType.PLACE, _WHICH + _PLACES + r"\b"),
        ("which-organization", AnswerType.ORGANIZATION, _WHICH + _ORGS + r"\b"),
    ))


@dataclass(frozen=True, slots=True)
class Intent:
    answer_type: AnswerType
    rule: str | None  # the ANSWER_TYPES entry that fired (None: description)


def intent_of(question: str) -> Intent:
    """The answer type the question asks for, and the rule that says so."""
    for name, kind, pattern in ANSWER_TYPES:
        if pattern.search(question):
            return Intent(kind, name)
    return Intent(AnswerType.DESCRIPTION, None)


_ENTITY_TYPES: dict[AnswerType, frozenset[EntityType]] = {
    AnswerType.PERSON: frozenset({EntityType.PERSON}),
    AnswerType.ORGANIZATION: frozenset({EntityType.ORGANIZATION}),
    AnswerType.PLACE: frozenset({EntityType.LOCATION}),
}
_CURRENCY = re.compile(
    r"[$€£¥]\s?\d|\d\s?(?:[kKmM]\b|bn\b|million|billion|thousand)|\b\d[\d,.]*\s*(?:USD|EUR|GBP|"
    r"dollars?|euros?|pounds?|cents?)\b|\b(?:USD|EUR|GBP)\s?\d", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.-])\d[\d,.]*%?(?![\w-])|\b(?:one|two|three|four|five|six|seven|"
                     r"eight|nine|ten|eleven|twelve|dozen|hundred)\b", re.IGNORECASE)
# a date or a year is no count, amount or rate ("Since: 2021", "live: 09.12.2024", "2025-03-01")
_DATE_LIKE = re.compile(r"\b\d{1,4}[./-]\d{1,2}[./-]\d{1,4}\b|(?<![\d,.])(?:19|20)\d\d(?![\d,.%])")
_FULL_NAME = re.compile(r"\b[A-Z][a-zà-ÿ'’-]+(?:\s+[A-Z]\.)?\s+[A-Z][a-zà-ÿ'’-]{2,}\b")
_WORDS = re.compile(r"[\w'’-]+")
_HANDLE = re.compile(r"(?<![\w.])@[a-z][\w.-]+", re.IGNORECASE)


def _has_number(text: str, question: str) -> bool:
    """The text states a number the question does not (dates and years are not numbers)."""
    asked = set(_NUMBER.findall(_DATE_LIKE.sub(" ", question).lower()))
    return any(n.lower() not in asked for n in _NUMBER.findall(_DATE_LIKE.sub(" ", text)))


def holds_answer(kind: AnswerType, text: str, question: str, named: Iterable[Entity],
                 anchors: Sequence[Entity]) -> bool | None:
    """Whether ``text`` states a value of the asked type that the question itself does not
    state: a person other than the ones asked about, a date, an amount. ``named``: the known
    entities the text names. None for a description question (nothing to check)."""
    if kind is AnswerType.DESCRIPTION:
        return None
    if kind is AnswerType.DATE:
        return states_time(text)
    if kind is AnswerType.MONEY:
        return bool(_CURRENCY.search(text))
    if kind is AnswerType.NUMBER:
        return _has_number(text, question)
    asked = {a.id for a in anchors}
    question_words = {w.lower() for w in _WORDS.findall(question)}
    wanted = _ENTITY_TYPES[kind]
    # a value the question itself states ("Ondrej" in "before Ondrej Vasko") is no answer,
    # whichever duplicate entity carries it
    if any(e.type in wanted and e.id not in asked
           and not {w.lower() for w in _WORDS.findall(e.name)} <= question_words for e in named):
        return True
    if kind is AnswerType.PERSON:  # a person the graph has not typed: a full name, a handle
        anchor_words = {w.lower() for a in anchors for n in (a.name, *a.aliases)
                        for w in n.split()}
        # a capitalised pair that is (part of) a known place, company or team is no person
        other_words = {w.lower() for e in (*named, *anchors) if e.type is not EntityType.PERSON
                       for n in (e.name, *e.aliases) for w in _WORDS.findall(n)}
        names = [m.group(0) for m in _FULL_NAME.finditer(text)
                 if not {w.lower() for w in _WORDS.findall(m.group(0))} & other_words]
        names += _HANDLE.findall(text)
        return any(not {w.lower() for w in n.split()} <= anchor_words for n in names)
    return False


def asked_head(question: str) -> str | None:
    """The noun a "What <noun> …" question asks for ("What penalty did …" → penalty)."""
    m = re.match(r"^\s*(?:which|what)\s+(?:[a-z-]+\s+){0,2}?([a-z][a-z-]{3,})\s+"
                 r"(?:did|does|do|is|was|are|were|has|have|had|will|would)\b", question,
                 re.IGNORECASE)
    return normalize_name(m.group(1)) if m else None
