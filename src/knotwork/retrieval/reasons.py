"""Why-questions: the evidence that answers one gives a cause, not only the change it explains."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from knotwork.retrieval.lexical import terms

__all__ = ["asks_why", "duration_bonus", "explains", "reason_bonus", "reason_first", "states_reason"]


class Candidate(Protocol):
    text: str
    display: str
    context: str
    bonus: float


_ASKS_WHY = re.compile(
    r"^\s*(?:why|how\s+come)\b|\bwhat\s+(?:was|were|is|are)\s+the\s+(?:main\s+)?"
    r"(?:reasons?|rationale|motivation|justification|(?:root\s+)?causes?)\b|^\s*what\s+(?:caused|led\s+to)\b",
    re.IGNORECASE)
_STATES_REASON = re.compile(
    r"\b(?:because|due\s+to|owing\s+to|as\s+a\s+result\s+of|caus(?:e|es|ed|ing)|driven\s+by|"
    r"motivated\s+by|so\s+that|in\s+order\s+to|reasons?|rationale|led\s+to|resulted\s+in|"
    r"triggered)\b",
    re.IGNORECASE)


def reason_bonus(question: str, units: Sequence[Candidate], bonus: float) -> None:
    """A "why" question is answered by a sentence that gives a cause ("… because JetStream
    gives us replayable streams", "Reason: costs tripled", a sentence under "Root cause"), not
    by one restating the change; only sentences already about the subject (they name a seed or
    share a word with the question) gain."""
    if bonus <= 0 or not asks_why(question):
        return
    asked = set(terms(question))
    for u in units:
        shown = u.display or u.text
        # the sentence gives a cause, or sits under a heading that says it does ("Root cause")
        if states_reason(shown) or explains(u.context):
            if u.bonus > 0 or asked & set(terms(f"{shown} {u.context}")):
                u.bonus += bonus
        else:  # a title or a sentence that only restates what happened explains nothing
            u.bonus -= bonus / 2


_ASKS_DURATION = re.compile(r"^\s*(?:for\s+)?how\s+long\b(?!\s+ago\b)", re.IGNORECASE)
_DURATION = re.compile(
    r"\b\d+(?:[.,]\d+)?\s*(?:ms|milliseconds?|seconds?|secs?|minutes?|mins?|hours?|hrs?|h|days?|"
    r"weeks?|months?|years?)\b|\b(?:an?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|"
    r"several|a\s+few)\s+(?:minutes?|hours?|days?|weeks?|months?|years?)\b", re.IGNORECASE)


def duration_bonus(question: str, units: Sequence[Candidate], bonus: float) -> None:
    """"How long did the outage last?" is answered by a sentence stating a duration."""
    if bonus <= 0 or not _ASKS_DURATION.search(question):
        return
    for u in units:
        if _DURATION.search(u.display or u.text):
            u.bonus += bonus


def reason_first(question: str, ranked: Sequence[tuple[str, str, float]], share: float = 0.85,
                 window: int = 5) -> int | None:
    """For a why-question whose best unit states no cause: the position of the first of the
    next few ``(text, heading, score)`` that does (or sits under a heading that does) and
    scores within ``share`` of the best, if any."""
    def gives(text: str, heading: str) -> bool:
        return states_reason(text) or explains(heading)

    if not ranked or not asks_why(question) or gives(ranked[0][0], ranked[0][1]):
        return None
    best = ranked[0][2]
    return next((i for i, (text, heading, score) in enumerate(ranked[1:window], 1)
                 if gives(text, heading) and score >= best * share), None)


# a heading over the cause: "Why", "Root cause", "Contributing factors", "Rationale"
_EXPLAINING_HEADING = re.compile(r"\bwhy\b|\bcontributing\s+factors?\b|\bbackground\b",
                                 re.IGNORECASE)


def explains(context: str) -> bool:
    """A title or heading that says the text under it gives a cause."""
    return states_reason(context) or bool(_EXPLAINING_HEADING.search(context))


def asks_why(question: str) -> bool:
    return bool(_ASKS_WHY.search(question))


def states_reason(sentence: str) -> bool:
    return bool(_STATES_REASON.search(sentence))

