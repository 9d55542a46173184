"""How well a candidate's time fits the question's time constraint (a pure function).

A candidate is a graph fact (its validity interval ``valid_at`` / ``invalid_at``) or a source
sentence (the interval the sentence states, resolved against its document's date, else only
that date). :func:`time_fit` gives a fit in [-1, 1]: 1 the candidate holds at the asked time,
-1 it cannot (it ended before, or began after), 0 nothing is known. Local search adds
``weight_time`` × the fit to each candidate's score (:func:`time_bonus`); count and list
questions are left alone (what they count is filtered by ``as_of``, not ranked).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from knotwork.domain.models import Fact
from knotwork.ingestion.extraction.temporal import validity
from knotwork.retrieval.aggregate import parse_aggregate
from knotwork.retrieval.time_constraint import (
    TimeConstraint,
    dates_in,
    mentions_event,
    time_constraint,
)

__all__ = ["PLAN_WORDS", "Candidate", "answer_time", "time_bonus", "time_fit"]

_YEAR = timedelta(days=365)
# a sentence about a plan, a target or an intention: not what actually happened
PLAN_WORDS = re.compile(
    r"\b(?:plan(?:s|ned)?|target(?:s|ed|ing)?|scheduled|expected|was\s+(?:meant|supposed)\s+to|"
    r"will|intend(?:s|ed)?|aim(?:s|ed)?\s+(?:for|to)|originally|should)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A candidate's time: its interval (None where unknown) and, for a sentence, its
    document's date; ``recency`` is the document's place among the candidates (0 oldest,
    1 newest); ``fact``: the interval is a graph fact's (else a sentence's own statement)."""

    start: datetime | None
    end: datetime | None
    written: datetime | None
    recency: float = 0.5
    fact: bool = False
    planned: bool = False  # states a plan, or a date the question gives as the plan
    dated: bool = False  # states a full date


def _at(c: Candidate, when: datetime) -> float:
    if c.start is not None or c.end is not None:
        if c.end is not None and c.end <= when:
            return -1.0  # ended before
        if c.start is not None and c.start > when:
            # a fact's start is often only when it was first written down: a weaker no
            return -0.5 if c.fact else -1.0
        return 1.0
    if c.written is None:
        return 0.0
    if c.written <= when:  # written before: it described the state then, less so the older
        return 0.5 * max(0.0, 1.0 - (when - c.written) / _YEAR)
    return 0.0  # written later: may look back, may not


def time_fit(constraint: TimeConstraint, c: Candidate, now: datetime) -> float:
    """The fit in [-1, 1] of a candidate to the constraint (0: nothing known)."""
    kind, when = constraint.kind, constraint.when
    if when is not None and kind in ("dated", "event", "past"):
        if constraint.actual and c.planned and not c.fact:
            return -1.0  # asked what actually held then: a plan says what was meant to
        return _at(c, when)
    if kind == "current":
        if c.end is not None:
            return -1.0 if c.end <= now else 0.5
        if c.fact:
            return 0.5
        return c.recency - 0.5
    if kind == "past":  # no date: what no longer holds
        if c.end is not None:
            return 1.0 if c.end <= now else -0.5
        if c.fact:
            return -0.5
        return 0.5 - c.recency
    if kind == "actual":  # what happened: a dated statement, the later the better; not the plan
        return -1.0 if c.planned else 0.5 * c.dated + 0.5 * c.recency
    return 0.0


_COUNT = re.compile(r"^\s*(?:how\s+many|list\b|name\s+(?:all|every|each)\b)", re.IGNORECASE)


def answer_time(question: str, now: datetime) -> TimeConstraint | None:
    """The constraint that ranks a question's candidates: none for a count or a list (what
    those count is filtered by ``as_of``; ranking one time's items up drops the others)."""
    if _COUNT.match(question) or parse_aggregate(question) is not None:
        return None
    return time_constraint(question, now)


class _Unit(Protocol):
    text: str
    fact: Fact | None
    time: datetime | None
    bonus: float
    parts: dict[str, float]


def candidate(
    text: str,
    fact: Fact | None,
    time: datetime | None,
    recency: float,
    plan: Sequence[datetime] = (),
) -> Candidate:
    """A fact's interval, or the one a sentence states (against its document's date).
    ``plan``: dates the question gives as the plan (a text stating one is about the plan)."""
    days = dates_in(text, time) if time is not None else []
    planned = bool(PLAN_WORDS.search(text)) or any(d.date() == p.date() for d in days for p in plan)
    if fact is not None:
        return Candidate(fact.valid_at, fact.invalid_at, None, recency, True, planned, bool(days))
    start, end = validity(text, time) if time is not None else (None, None)
    return Candidate(start, end, time, recency, False, planned, bool(days))


def time_bonus(
    constraint: TimeConstraint,
    units: Sequence[_Unit],
    weight: float,
    now: datetime,
    contradiction: float = 0.0,
) -> int:
    """Add ``weight`` × the fit to each unit's bonus (its part ``time``), and subtract
    ``contradiction`` more where the candidate's time rules it out (fit -1); how many moved.
    Evidence about the question's event itself dates the event; it is not weighed."""
    if weight <= 0:
        return 0
    times = [u.time.timestamp() for u in units if u.fact is None and u.time is not None]
    low, span = (min(times), max(times) - min(times)) if times else (0.0, 0.0)
    moved = 0
    for u in units:
        if constraint.event is not None and mentions_event(constraint, u.text):
            continue
        recency = (u.time.timestamp() - low) / span if span and u.time and u.fact is None else 0.5
        fit = time_fit(
            constraint, candidate(u.text, u.fact, u.time, recency, constraint.planned), now
        )
        if fit:
            u.bonus += weight * fit - (contradiction if fit <= -1.0 else 0.0)
            u.parts["time"] = fit
            moved += 1
    return moved
