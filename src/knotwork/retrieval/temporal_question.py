"""The time a question carries: "in August 2023", "as of March", "in Q3 2023", "last year".

A question that states its own time is about the facts valid then; the query engine uses it
as ``as_of`` when the caller gave none and the question asks about a state (who led, which
team), not an event (whose reports are written after it). Rule-based, no LLM; relative phrases ("last year",
"in March") are resolved against ``now``.

- "in / during <month or day>" → the middle of it; "in <year or quarter>" → its end;
- "as of / by / at the end of <period>" → its last moment;
- "before <period>" → the moment before it starts;
- "after / since <period>" → not a point in time: no ``as_of`` (today's facts).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from knotwork.ingestion.extraction.relations import relation_types_named
from knotwork.ingestion.extraction.temporal import states_time, validity

_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS |= {m.lower(): i for i, m in enumerate(calendar.month_abbr) if m}
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_PREP = (r"(?P<prep>as\s+of|as\s+at|by\s+the\s+end\s+of|at\s+the\s+end\s+of|by|in|during|on|"
         r"before|after|since|until|till|throughout|around|back\s+in)")
_ORDINAL = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
# "the Q1 2025 risk register": a time that modifies a noun is not the question's time
_NOT_MODIFIER = r"(?!\s+(?!(?:and|or|but|when|while|according|per|if|then|so)\b)(?-i:[a-z]{2,}))"
# "at the March 2025 cutover", "during the Q3 2024 audit": a dated event of the question's
# subject dates the question (the event nouns are data; "the Q1 2025 risk register" stays no time)
EVENT_NOUNS = ("cutover", "cut-over", "switchover", "launch", "go-live", "release", "rollout",
               "roll-out", "migration", "upgrade", "outage", "incident", "audit", "offsite",
               "kickoff", "kick-off", "reorg", "reorganisation", "reorganization", "merger",
               "acquisition", "conference", "all-hands", "deadline", "freeze", "playtest")
_AT_THE = r"\b(?P<prep>at|during|around)\s+the\s+(?:early\s+|mid\s+|late\s+|mid-)?"
_EVENT_AFTER = r"\s+(?:[\w-]+\s+){0,2}?(?:" + "|".join(re.escape(n) for n in EVENT_NOUNS) + r")s?\b"
_EVENT_TIMES: tuple[tuple[str, str], ...] = (
    ("day", _AT_THE + r"(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r",?\s+" + _YEAR),
    ("day", _AT_THE + _MONTH + r"\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+" + _YEAR),
    ("month", _AT_THE + _MONTH + r",?\s+" + _YEAR),
    ("quarter", _AT_THE + r"Q(?P<q>[1-4])\s*(?:of\s+)?'?" + _YEAR),
    ("year", _AT_THE + _YEAR),
)
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(p + _EVENT_AFTER, re.IGNORECASE)) for kind, p in _EVENT_TIMES) + tuple(
    (kind, re.compile(p + (_NOT_MODIFIER if kind != "relative" else ""), re.IGNORECASE))
    for kind, p in (
    ("day", r"\b" + _PREP + r"\s+(?:the\s+)?\b(?P<y>(?:19|20)\d{2})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b"),
    ("day", r"\b" + _PREP + r"\s+(?:the\s+)?\b(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?"
            + _MONTH + r",?\s+" + _YEAR + r"\b"),
    ("day", r"\b" + _PREP + r"\s+\b" + _MONTH + r"\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+"
            + _YEAR + r"\b"),
    ("quarter", r"\b" + _PREP + r"\s+(?:the\s+)?\bQ(?P<q>[1-4])\s*(?:of\s+)?'?" + _YEAR + r"\b"),
    ("quarter", r"\b" + _PREP + r"\s+\b" + _YEAR + r"\s*Q(?P<q>[1-4])\b"),
    ("quarter", r"\b" + _PREP + r"\s+(?:the\s+)?\b(?P<qw>first|second|third|fourth|1st|2nd|3rd|4th)"
                r"\s+quarter\s+(?:of\s+)?" + _YEAR + r"\b"),
    ("month", r"\b" + _PREP + r"\s+(?:early\s+|mid\s+|late\s+|mid-)?\b" + _MONTH + r",?\s+(?:of\s+)?"
              + _YEAR + r"\b"),
    ("year", r"\b" + _PREP + r"\s+(?:the\s+year\s+|early\s+|mid\s+|late\s+|mid-)?" + _YEAR + r"\b"),
    ("bare_month", r"\b" + _PREP + r"\s+(?:early\s+|mid\s+|late\s+|mid-)?" + _MONTH + r"\b(?!\s*\d)"),
    ("relative", (r"(?:\b(?P<prep>as\s+of|by|in|during|before|since|after)\s+)?\b(?:(?P<rel>last|"
                 r"previous|this)\s+(?P<unit>year|month|quarter)|(?P<n>a|one|two|three|\d)\s+"
                 r"(?P<unit2>years?|months?)\s+ago)\b")),
))
_NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3}


@dataclass(frozen=True, slots=True)
class QuestionTime:
    when: datetime  # the as_of to use
    start: datetime
    end: datetime  # exclusive
    phrase: str  # the words of the question that stated it
    anchor: str  # "middle", "end" or "before"


def _period(kind: str, m: re.Match[str], now: datetime) -> tuple[datetime, datetime] | None:
    g = m.groupdict()
    if kind == "day":
        if g.get("y"):
            y, mo, d = int(g["y"]), int(g["m"]), int(g["d"])
        else:
            y, mo, d = int(g["year"]), _MONTHS[g["month"].lower()], int(g["day"])
        try:
            start = datetime(y, mo, d, tzinfo=UTC)
        except ValueError:
            return None
        return start, start + timedelta(days=1)
    if kind == "quarter":
        q = int(g["q"]) if g.get("q") else _ORDINAL[g["qw"].lower()]
        return _months(int(g["year"]), 3 * q - 2, 3)
    if kind == "month":
        return _months(int(g["year"]), _MONTHS[g["month"].lower()], 1)
    if kind == "year":
        return _months(int(g["year"]), 1, 12)
    if kind == "bare_month":
        if g["month"].lower() == "may" and (g.get("prep") or "").lower() not in ("in", "during", "as of", "by"):
            return None  # "... may ..." is mostly the verb
        month = _MONTHS[g["month"].lower()]
        year = now.year if month <= now.month else now.year - 1  # the latest such month
        return _months(year, month, 1)
    return _relative(g, now)


def _relative(g: dict[str, str | None], now: datetime) -> tuple[datetime, datetime] | None:
    rel, unit = (g.get("rel") or "").lower(), (g.get("unit") or "").lower()
    if g.get("unit2"):
        n = _NUMBERS.get((g.get("n") or "").lower()) or int(g.get("n") or 1)
        if (g["unit2"] or "").startswith("year"):
            return _months(now.year - n, 1, 12)
        total = now.year * 12 + now.month - 1 - n
        return _months(total // 12, total % 12 + 1, 1)
    back = 0 if rel == "this" else 1
    if unit == "year":
        return _months(now.year - back, 1, 12)
    if unit == "month":
        total = now.year * 12 + now.month - 1 - back
        return _months(total // 12, total % 12 + 1, 1)
    if unit == "quarter":
        total = now.year * 4 + (now.month - 1) // 3 - back
        return _months(total // 4, (total % 4) * 3 + 1, 3)
    return None


def _months(year: int, month: int, count: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=UTC)
    total = year * 12 + month - 1 + count
    return start, datetime(total // 12, total % 12 + 1, 1, tzinfo=UTC)


def question_time(question: str, now: datetime | None = None) -> QuestionTime | None:
    """The point in time a question asks about, or None (none stated, or "since/after X")."""
    now = now or datetime.now(UTC)
    for kind, pattern in _PATTERNS:
        m = pattern.search(question)
        if m is None:
            continue
        period = _period(kind, m, now)
        if period is None:
            continue
        start, end = period
        prep = re.sub(r"\s+", " ", (m.groupdict().get("prep") or "").lower())
        if prep in ("after", "since"):
            return None
        if prep == "before":
            when, anchor = start - timedelta(seconds=1), "before"
        elif prep in ("as of", "as at", "by", "by the end of", "at the end of", "until", "till") \
                or kind in ("year", "quarter"):  # "in 2025": what held by the end of it
            when, anchor = end - timedelta(seconds=1), "end"
        else:
            when, anchor = start + (end - start) / 2, "middle"
        when = min(when, now)
        return QuestionTime(when, start, end, m.group(0).strip(), anchor)
    return None


def without_time(question: str, found: QuestionTime) -> str:
    """The question with its time phrase removed (the time is the query's as_of now)."""
    out = question.replace(found.phrase, " ", 1)
    return re.sub(r"\s+([?.!,])", r"\1", re.sub(r"\s{2,}", " ", out)).strip()


_EVENT = re.compile(r"\b(?:caus(?:e|ed|es|ing)|happen(?:ed|s|ing)?|incidents?|outages?|delay(?:ed|s)?|"
                    r"broke|fail(?:ed|ure|ures)?|went\s+down|launch(?:ed|es)?|releas(?:e|ed|es)|"
                    r"decid(?:e|ed)|decisions?|announc(?:e|ed)|discuss(?:ed)?|how\s+long|why)\b",
                    re.IGNORECASE)
_STATE = re.compile(r"^\s*(?:who|whom|which|what|where)\b.*\b(?:was|were|did)\b", re.IGNORECASE)


def asks_about_state(question: str) -> bool:
    """Whether the question asks what held at its time (who led, which team, which vendor),
    not about an event then ("what caused the outage on March 20": its reports come later,
    so the date must not hide them)."""
    if _EVENT.search(question):
        return False
    return bool(relation_types_named(question)) or bool(_STATE.match(question))


_WHEN = re.compile(r"^\s*when\s+(?:did|does|do|was|is|were|will|has|have)\b", re.IGNORECASE)
_ENDING = re.compile(r"\b(?:leave|left|quit|stop(?:ped)?|end(?:ed)?|retire[d]?|step(?:ped)?\s+down|hand(?:ed)?"
                     r"\s+over)\b", re.IGNORECASE)
_HAS_DATE = re.compile(r"\b(?:19|20)\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)"
                       r"[a-z]*\.?\s+\d{1,2}\b|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)",
                       re.IGNORECASE)


def when_note(question: str, sentence: str, valid_at: datetime | None,
              invalid_at: datetime | None) -> str | None:
    """"When did Pedro join the Billing Squad?" answered by a fact whose sentence states no
    date: the fact's own start (or end, for "when did … leave") as a note, else None."""
    if not _WHEN.match(question) or _HAS_DATE.search(sentence):
        return None
    when = invalid_at if _ENDING.search(question) else valid_at
    if when is None:
        return None
    return f"(recorded from {when:%B} {when.day}, {when.year})" if when is valid_at else \
        f"(until {when:%B} {when.day}, {when.year})"


def undated_when(question: str, texts: Sequence[str], typed_fact: bool) -> bool:
    """"When was the Pune office opened?" answered by evidence that states no date, and not by
    a fact of the relation the question names (whose recorded start :func:`when_note` gives):
    the evidence does not say when."""
    return bool(_WHEN.match(question)) and not typed_fact and not any(states_time(t) for t in texts)


def held_then(sentence: str, written: datetime, as_of: datetime | None) -> bool:
    """A sentence of a document written after ``as_of`` that states a period covering it:
    "Vendor: Lumenwatch; From: before 2023; Until: 2023-10-13" speaks for May 2023."""
    start, end = validity(sentence, written)
    return as_of is not None and end is not None and end > as_of and (start is None or start <= as_of)
