"""The time constraint a question states, from named pattern tables (rule-based, no LLM).

- ``dated``: a date or period ("in August 2024", "as of March 2025", "on 10.03.2025") — what
  held then (:func:`~knotwork.retrieval.temporal_question.question_time` plus numeric dates);
- ``current``: "now", "currently", "today" — what holds today;
- ``past``: "before <something>", "originally", "previously", "used to" — what held earlier;
  with "before <event>" the event's date, once resolved, is the point just before which;
- ``actual``: "actually", "in the end" — what happened, not what was planned;
- ``event``: "when <incident> happened", "during <event>", "at the <event> launch" — what held
  then; the event is resolved to its date from the evidence (:func:`resolve_event`).

Each table entry is (name, pattern); the first that matches decides, and the constraint
carries the rule's name (``reasoning_trace`` says which fired; ``bench/time_patterns.py``
reports how often each fires). A question that asks about two times ("in January 2025, and
now?") gets no constraint: its answer needs both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Literal

from knotwork.ingestion.extraction.temporal import resolve
from knotwork.retrieval.lexical import terms
from knotwork.retrieval.temporal_question import question_time

__all__ = [
    "ACTUAL_PATTERNS",
    "CURRENT_PATTERNS",
    "EVENT_CLAUSES",
    "EVENT_PATTERNS",
    "EVENT_SHARE",
    "PAST_PATTERNS",
    "TimeConstraint",
    "asked_part",
    "asks_two_times",
    "dates_in",
    "mentions_event",
    "resolve_event",
    "time_constraint",
]

Kind = Literal["dated", "current", "past", "actual", "event"]


@dataclass(frozen=True, slots=True)
class TimeConstraint:
    kind: Kind
    rule: (
        str  # the table entry that fired, e.g. "dated:month", "current:now", "event:when-happened"
    )
    phrase: str  # the question's words that stated it
    when: datetime | None = None  # the point in time (dated; event or past once resolved)
    event: str | None = None  # the event's words (event, "before <event>")
    planned: tuple[datetime, ...] = ()  # dates the question states as a plan (actual)
    actual: bool = False  # also asks what actually happened: a plan does not fit ("actually
    # running in December 2024?")

    def describe(self) -> str:
        at = f" at {self.when.date().isoformat()}" if self.when else ""
        about = f" [{self.event}]" if self.event else ""
        actual = ", not the plan" if self.actual and self.kind != "actual" else ""
        return f"time constraint {self.kind}{at}{actual} ({self.rule}: '{self.phrase}'){about}"


def _table(rows: Iterable[tuple[str, str]]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((name, re.compile(p, re.IGNORECASE)) for name, p in rows)


_THING = r"(?P<event>(?:the\s+|a\s+|an\s+|its\s+|their\s+)?[^?,;]{3,80}?)"
_END = r"(?=\s*(?:[?,;]|\band\b|$))"

CURRENT_PATTERNS = _table(
    (
        ("now", r"\b(?:right\s+)?now\b(?!\s+that)"),
        ("currently", r"\bcurrently\b|\bat\s+(?:the\s+)?present(?:\s+time)?\b|\bpresently\b"),
        ("today", r"\btoday\b|\bthese\s+days\b|\bas\s+things\s+stand\b"),
        ("current", r"\b(?:the|its|their|our)\s+current\b"),
    )
)
EVENT_PATTERNS = _table(
    (
        (
            "when-happened",
            r"\bwhen\s+" + _THING + r"\s+(?:happened|occurred|hit|struck|broke|started|"
            r"began|took\s+place|went\s+(?:down|live|out)|was\s+(?:running|held|on))" + _END,
        ),
        (
            "while",
            r"\bwhile\s+" + _THING + r"\s+(?:was|were)\s+(?:running|happening|under\s+way|"
            r"underway|going\s+on|on|live|in\s+progress)" + _END,
        ),
        ("on-the-day", r"\b(?:on\s+)?the\s+day\s+(?:that\s+)?(?P<event>[^?,;]{3,80}?)" + _END),
        ("during", r"\bduring\s+" + _THING + _END),
        ("at-the-time-of", r"\bat\s+the\s+time\s+of\s+" + _THING + _END),
        (
            "at-the-event",
            r"\b(?:at|for)\s+(?P<event>the\s+[^?,;]{2,60}?\s+(?:launch|cutover|release|"
            r"outage|incident|migration|go-live|kickoff|kick-off|rollout|switch|move|"
            r"reorg(?:anisation|anization)?|merger|acquisition))" + _END,
        ),
    )
)
PAST_PATTERNS = _table(
    (
        # "before" as an adverb, with no event after it: "what did she lead before?",
        # "where was he before that?", "who held it before then?"
        (
            "before-then",
            r"\bbefore(?:\s+(?:that|then|this|now|it))?\s*(?=[?.!,;]|\band\b|$)",
        ),
        ("before-event", r"\bbefore\s+" + _THING + _END),
        ("originally", r"\b(?:originally|initially|at\s+first|in\s+the\s+beginning)\b"),
        (
            "previously",
            (
                r"\b(?:previously|formerly|earlier|used\s+to|the\s+(?:previous|former|old)|"
                r"prior\s+to\s+that)\b"
            ),
        ),
        ("first", r"\b(?:who|which|what)\s+(?:was|were)\s+(?:the\s+)?first\b"),
    )
)
ACTUAL_PATTERNS = _table(
    (("actually", r"\bactual(?:ly)?\b|\bin\s+the\s+end\b|\bin\s+fact\b|\bin\s+reality\b"),)
)

# "on 10.03.2025", "as of 03/02/2025", "before 2024-10-01"; dots are day-first (European),
# slashes month-first unless the first number cannot be a month
_NUMERIC = re.compile(
    r"\b(?P<prep>as\s+of|as\s+at|on|by|before|in|at)\s+(?:the\s+)?(?P<a>\d{1,2})(?P<sep>[./])"
    r"(?P<b>\d{1,2})(?P=sep)(?P<y>(?:19|20)\d{2})\b",
    re.IGNORECASE,
)


def numeric_date(a: int, b: int, y: int, sep: str) -> datetime | None:
    day, month = (a, b) if sep == "." or a > 12 else (b, a)
    try:
        return datetime(y, month, day, tzinfo=UTC)
    except ValueError:
        return None


def _dated(question: str, now: datetime) -> TimeConstraint | None:
    m = _NUMERIC.search(question)
    if m is not None:
        day = numeric_date(int(m["a"]), int(m["b"]), int(m["y"]), m["sep"])
        if day is not None:
            prep = re.sub(r"\s+", " ", m["prep"].lower())
            when = day - timedelta(seconds=1) if prep == "before" else day + timedelta(hours=12)
            return TimeConstraint(
                "past" if prep == "before" else "dated",
                "dated:numeric-before" if prep == "before" else "dated:numeric",
                m.group(0),
                min(when, now),
            )
    stated = question_time(question, now)
    if stated is None:
        return None
    return TimeConstraint("dated", f"dated:{stated.anchor}", stated.phrase, stated.when)


def _first(
    table: tuple[tuple[str, re.Pattern[str]], ...], question: str
) -> tuple[str, re.Match[str]] | None:
    for name, pattern in table:
        m = pattern.search(question)
        if m is not None:
            return name, m
    return None


_NOT_EVENT = re.compile(
    r"^(?:the\s+)?(?:it|that|this|then|now|him|her|them|they|he|she)\b", re.IGNORECASE
)


# a clause that describes the event, not part of its name: "the refresh led by the new lead",
# "the outage that hit payments" → "the refresh", "the outage" (the evidence dating an event
# rarely repeats who ran it)
EVENT_CLAUSES = _table(
    (
        ("by-agent", r"\s+(?:led|run|owned|driven|headed|done|made|started|proposed)\s+by\b.*$"),
        ("relative", r"\s+(?:that|which|who|whose)\s+.*$"),
    )
)


def _event_words(m: re.Match[str]) -> str | None:
    event = (m.groupdict().get("event") or "").strip()
    for _, clause in EVENT_CLAUSES:
        head = clause.sub("", event).strip()
        if terms(head):
            event = head
    if not event or _NOT_EVENT.match(event) or not terms(event):
        return None
    return event


_SENTENCE_END = re.compile(r"(?<=[.!])\s+(?=[A-Z0-9\"'])")


def asked_part(question: str) -> str:
    """The sentence that asks: "The charter planned it for 1 May. When did it go live?" →
    the second (a premise's date is not the question's)."""
    parts = [p for p in _SENTENCE_END.split(question.strip()) if p.strip()]
    asking = [p for p in parts if "?" in p]
    return asking[-1] if asking else question


def asks_two_times(question: str, now: datetime | None = None) -> bool:
    """The question asks about an earlier time and about now ("where was she based in 2023,
    and where is she now?"): its answer needs both, no single time applies to all of it."""
    now = now or datetime.now(UTC)
    question = asked_part(question)
    if _first(CURRENT_PATTERNS, question) is None:
        return False
    return (
        _dated(question, now) is not None
        or _first(EVENT_PATTERNS, question) is not None
        or _first(PAST_PATTERNS, question) is not None
    )


def time_constraint(question: str, now: datetime | None = None) -> TimeConstraint | None:
    """The question's time constraint, or None (none stated, or two times asked for)."""
    now = now or datetime.now(UTC)
    whole, question = question, asked_part(question)
    current = _first(CURRENT_PATTERNS, question)
    dated = _dated(question, now)
    event = _first(EVENT_PATTERNS, question)
    past = _first(PAST_PATTERNS, question)
    if asks_two_times(question, now):
        return None  # "who led it then, and who leads it now?": both
    if dated is not None:
        if _first(ACTUAL_PATTERNS, question) is not None:  # "actually ... in December 2024?"
            return replace(dated, actual=True, planned=tuple(dates_in(whole, now)))
        return dated
    if event is not None:
        name, m = event
        words = _event_words(m)
        if words is not None:
            return TimeConstraint("event", f"event:{name}", m.group(0).strip(), event=words)
    if past is not None:
        name, m = past
        words = _event_words(m) if name == "before-event" else None
        if name != "before-event" or words is not None:
            return TimeConstraint("past", f"past:{name}", m.group(0).strip(), event=words)
    if current is not None:
        name, m = current
        return TimeConstraint("current", f"current:{name}", m.group(0).strip())
    actual = _first(ACTUAL_PATTERNS, question)
    if actual is not None:
        name, m = actual
        return TimeConstraint(
            "actual", f"actual:{name}", m.group(0).strip(), planned=tuple(dates_in(whole, now))
        )
    return None


# ---------------------------------------------------------------- events → dates
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_WORD_DATE = re.compile(
    r"\b(?:\d{4}-\d{2}-\d{2}|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?"
    + _MONTH
    + r",?\s+\d{4}|"
    + _MONTH
    + r"\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4})\b",
    re.IGNORECASE,
)
_NUM_DATE = re.compile(r"\b(\d{1,2})([./])(\d{1,2})\2((?:19|20)\d{2})\b")


def dates_in(text: str, written: datetime) -> list[datetime]:
    """The full dates (day, month and year) a text states, in order."""
    found: list[tuple[int, datetime]] = []
    for m in _WORD_DATE.finditer(text):
        day = resolve(m.group(0), written)
        if day is not None:
            found.append((m.start(), day))
    for m in _NUM_DATE.finditer(text):
        day = numeric_date(int(m[1]), int(m[3]), int(m[4]), m[2])
        if day is not None:
            found.append((m.start(), day))
    return [d for _, d in sorted(found, key=lambda pd: pd[0])]


EVENT_SHARE = 0.6  # evidence naming this share of the event's words is about the event


def mentions_event(constraint: TimeConstraint, text: str, min_share: float = EVENT_SHARE) -> bool:
    """Whether a text is about the question's event (names most of its words)."""
    wanted = set(terms(constraint.event or ""))
    return bool(wanted) and len(wanted & set(terms(text))) / len(wanted) >= min_share


def resolve_event(
    constraint: TimeConstraint,
    evidence: Sequence[tuple[str, datetime | None]],
    min_share: float = EVENT_SHARE,
) -> TimeConstraint:
    """The constraint with its event's date: the first full date stated by the evidence (facts
    and sentences, ``(text, its time)``) that mentions the event's words best (at least
    ``min_share`` of them); without such a date, the earliest time of the evidence that
    mentions them best. Unchanged when none does."""
    if constraint.event is None or constraint.when is not None:
        return constraint
    wanted = set(terms(constraint.event))
    if not wanted:
        return constraint
    stated: list[tuple[float, datetime]] = []
    undated: list[tuple[float, datetime]] = []
    for text, written in evidence:
        share = len(wanted & set(terms(text))) / len(wanted)
        if share < min_share or written is None:
            continue
        days = dates_in(text, written)
        if days:
            stated.append((share, days[0]))
        else:
            undated.append((share, written))
    found = stated or undated
    if not found:
        return constraint
    best = max(s for s, _ in found)
    when = min(d for s, d in found if s == best)
    if constraint.kind == "past":  # before the event: just before it
        when -= timedelta(seconds=1)
    else:
        when += timedelta(hours=12)
    return replace(constraint, when=when)
