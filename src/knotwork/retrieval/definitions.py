"""Describe-questions: "What is X (about)?", "Tell me about X", "What does X work on?".

Such a question is answered by the sentence that says what X is or does ("Project Atlas is the
fleet telemetry platform for …", "The Security Team was formed to own authentication"), not
by the relation facts around X (who manages it, where its beta started), which score as well
on the question's words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Protocol

__all__ = ["asks_to_describe", "defines", "definition_bonus"]


class Candidate(Protocol):
    text: str
    display: str
    bonus: float


_ASKS = re.compile(
    # "What is [the] <Name>[ about]?": capitalised words only ("What was Sofia promoted to?"
    # asks about an event, "What is the capital of …" about an attribute)
    r"^\s*(?:what\s+(?:is|are|was|were)\s+(?:the\s+)?(?-i:[A-Z0-9][\w&.'’-]*\s*){1,6}"
    r"(?:\s+about)?\s*\??\s*$"
    r"|(?:tell\s+(?:me|us)\s+about|describe|explain|(?:give\s+(?:me\s+|us\s+)?)?an?\s+"
    r"(?:overview|summary|description)\s+of)\s+"
    r"|what\s+(?:does|do|did)\s+.+?\s+(?:do|work\s+on|own|handle|provide|cover|focus\s+on|"
    r"build|make)\s*\??\s*$"
    r"|what\s+(?:is|are|was|were)\s+.+?\s+responsible\s+for"
    # an abbreviation: "What does SCA stand for?", "What does PSP mean?"
    r"|what\s+(?:does|do|did)\s+.+?\s+(?:stand\s+for|mean)\s*\??\s*$)",
    re.IGNORECASE)
# "What is Priya's role?", "What is the status of …": a question about one attribute
_ATTRIBUTE = re.compile(r"['’]s\s+\w+\s*\??\s*$|^\s*what\s+(?:is|are|was|were)\s+the\s+\w+\s+of\b",
                        re.IGNORECASE)
_DEFINES = (r"(?:is|are|was|were)\s+(?:a|an|the|our|their|one|responsible|in\s+charge)\b"
            r"|(?:was|were)\s+(?:formed|created|founded|set\s+up|started|launched|built)\b"
            r"|(?:provides|handles|focuses\s+on|works\s+on|owns|runs|builds|develops|delivers|"
            r"is\s+building|aims\s+to|exists\s+to|helps)\b"
            # any present-tense verb ("issues OAuth tokens", "ingests telemetry") but the ones
            # of a relation to something else
            r"|(?!(?:depends|relies|reports|belongs|moves|joins|leads|sits|lives)\b)[a-z]{3,}s\b")


def asks_to_describe(question: str) -> bool:
    return bool(_ASKS.search(question)) and not _ATTRIBUTE.search(question)


def defines(sentence: str, names: Iterable[str]) -> bool:
    """The sentence opens with one of the names as its subject and says what it is or does."""
    for name in names:
        if len(name) < 2:
            continue
        pattern = (r"^\W*(?:the\s+|our\s+)?" + re.escape(name) + r"(?:\s*\([^)]{1,40}\))?"
                   r"(?:\W*:\W*\s*(?!\d)\w|,?\s+(?:stands\s+for|means)\b|,?\s+"
                   r"(?:(?:also|currently|now|mainly|primarily|still|originally)\s+)?"
                   r"(?:" + _DEFINES + "))")  # a glossary line "SCA: strong customer …" too
        if re.search(pattern, sentence, re.IGNORECASE):
            return True
    return False


def definition_bonus(question: str, units: Sequence[Candidate], names: Sequence[str],
                     bonus: float) -> None:
    """Sentences defining the entity the question names gain ``bonus`` when the question asks
    to describe it. ``names``: the seeds' names and aliases; only those the question states
    count (a seed found by similarity, "the Atlas Team" for "Project Atlas", is not the one
    to describe)."""
    if bonus <= 0 or not names or not asks_to_describe(question):
        return
    asked = question.lower()
    named = [n for n in names if len(n) >= 2 and n.lower() in asked]
    if not named:
        return
    for u in units:
        if defines(u.display or u.text, named):
            u.bonus += bonus
