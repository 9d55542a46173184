"""Evidence an answer must hold before it is given, beyond the ranking's confidence.

A question presupposes things and asks for a kind of value; an answer that cannot stand for
them is withheld (:func:`evidence_gap`), whatever its score. Each check is a named rule (its
name is in the trace) over general wording, never a corpus's phrases:

- ``unknown-qualifier``: a capitalised word of the question ("the Lisbon office") that no entity
  the question names holds, that no candidate sentence mentions, and that is no misspelling of
  either: the thing the question presupposes does not exist in the graph.
- ``asked-modifier``: the word that says which date or amount is asked ("the *launch* date",
  "the *licence* fee") absent from the answer: another date or amount is no answer.
- the change rules (:data:`CHANGE_RULES`): a question about a move ("join after leaving"), or
  a predecessor ("who was … before <Name>") is answered only by a sentence stating a change.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from knotwork.domain.models import Entity
from knotwork.retrieval.lexical import term_set, terms

__all__ = ["CHANGE_RULES", "asked_modifier", "evidence_gap", "unknown_qualifiers"]

# (name, the question's wording, the cue the answer must state)
CHANGE_RULES: tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (name, re.compile(question, re.IGNORECASE), re.compile(cue, re.IGNORECASE))
    for name, question, cue in (
        ("move-after-leaving",
         (r"\bafter\s+(?:leaving|quitting|departing|exiting)\b|\b(?:join|joined|go|went|move|moved)\s+"
         r"(?:to\s+)?after\b"),
         # the move itself (where to), not the leaving the question already states
         (r"\b(?:join(?:s|ed|ing)?|mov(?:e|ed|es|ing)\s+(?:on\s+)?to|hired\s+by|went\s+to|"
         r"go(?:es|ing)?\s+to|start(?:s|ed|ing)?\s+at|now\s+(?:at|with|works))\b")),
        ("predecessor",
         r"^\s*who\s+(?:was|were|had\s+been|served\s+as)\b.*\bbefore\s+(?:[A-Z]|him\b|her\b|them\b)",
         (r"\b(?:before|previous(?:ly)?|former(?:ly)?|predecessor|preceded|succeed(?:s|ed)?|"
         r"successor|replac(?:e|es|ed|ing)|took\s+over|handed\s+over|until|till|stepped\s+down|"
         r"left|interim|acting|earlier|prior|until\s+then|no\s+longer|was\s+\w+\s+(?:from|since))\b")),
    ))

_CALENDAR = frozenset(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "i"])
_CAPITALISED = re.compile(r"(?<![\w'’-])[A-Z][a-z][\w'’-]*")
# the value nouns whose modifier says which value is asked ("release date", "licence fee")
_VALUE_NOUN = re.compile(
    r"^\s*(?:what|which)\s+(?:is|was|are|were|will\s+be)\s+(?:the\s+|its\s+|their\s+)?"
    r"(?P<mods>(?:[\w-]+\s+){1,3}?)(?:date|day|price|cost|fee|budget|value|amount|figure)\b",
    re.IGNORECASE)
# modifiers that do not say which value ("the planned date", "the exact price")
_VAGUE = frozenset(terms("planned expected exact current total final official actual new old "
                         "latest original estimated approximate overall average typical usual "
                         "target targeted scheduled first last next annual monthly yearly"))


def asked_modifier(question: str) -> list[str]:
    """The terms that say which date or amount a "What is the <modifier> date/price …"
    question asks for (vague ones like "planned" left out); [] when none."""
    m = _VALUE_NOUN.match(question)
    if m is None:
        return []
    return [t for t in terms(m.group("mods")) if t not in _VAGUE and t.isalpha()]


def _close(word: str, vocabulary: Sequence[str]) -> bool:
    return bool(difflib.get_close_matches(word, vocabulary, n=1, cutoff=0.8))


def unknown_qualifiers(question: str, anchors: Sequence[Entity], pool_terms: set[str]) -> list[str]:
    """Capitalised words of the question (not its first, not calendar words) that no named
    entity's name holds and no candidate mentions, allowing a misspelling of either."""
    words = [re.sub(r"['’]s?$", "", m.group(0)) for m in _CAPITALISED.finditer(question)]
    first = question.lstrip()
    words = [w for i, w in enumerate(words)
             if len(w) > 2 and w.lower() not in _CALENDAR and not (i == 0 and first.startswith(w))]
    if not words:
        return []
    known = sorted({t.lower() for a in anchors for n in (a.name, *a.aliases)
                    for t in re.findall(r"[\w'’-]+", n)})
    pool = sorted(pool_terms)
    out = []
    for w in words:
        lowered = w.lower()
        stems = terms(w)
        if lowered in known or _close(lowered, known):
            continue
        if not stems or all(s in pool_terms for s in stems) or any(_close(s, pool) for s in stems):
            continue
        out.append(w)
    return out


def evidence_gap(question: str, shown: str, where: str, anchors: Sequence[Entity],
                 pool_terms: set[str]) -> str | None:
    """Why the answer (``shown``; ``where``: it with its titles and headings) cannot stand for
    what the question asks, or None. ``pool_terms``: the terms of every candidate. A missing
    value of the asked type is left to the answerability model (its ``typed`` feature): as a
    hard rule it withheld more answerable questions than unanswerable ones on the development
    corpora."""
    unknown = unknown_qualifiers(question, anchors, pool_terms)
    if unknown:
        return f"unknown-qualifier: nothing is known about {', '.join(unknown)}"
    modifier = asked_modifier(question)
    seen = term_set(where)
    if modifier and not any(t in seen for t in modifier):
        return f"asked-modifier: the answer never says {' '.join(modifier)}"
    for name, asks, cue in CHANGE_RULES:
        if asks.search(question) and not cue.search(shown):
            return f"{name}: the answer states no change"
    return None
