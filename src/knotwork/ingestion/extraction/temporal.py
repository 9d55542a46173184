"""Explicit validity phrases in a fact's sentence, resolved against the document's time.

"since March 2024", "from Q3", "as of today", "starting next month", "effective 1 May" give
valid_at; "until last Friday", "through the end of Q2", "ended in 2023" give invalid_at;
without a since/from phrase, "on Monday" / "on 3 February" dates the event itself (valid_at).
Relative expressions (today, yesterday, last/this/next week|month|quarter|year|weekday,
the 1st, end of the quarter, Q3, H2 2025, 3 weeks ago) count from the reference time.
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timedelta

from dateutil import parser as dateparser

from knotwork.domain.timeutil import ensure_utc

_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY = r"(?:" + "|".join(_WEEKDAYS) + r")"
_PERIOD = r"(?:week|month|quarter|year)"
_QUARTER = r"(?:q[1-4]|h[12])(?:\s+(?:fy)?\d{4}|\s*'\d{2})?"
_ABSOLUTE = (
    r"(?:\d{1,2}\.\d{1,2}\.\d{4}(?!\d)|\d{4}-\d{2}-\d{2}|" + _MONTHS + r"\s+\d{4}|"
    + _MONTHS + r"\s+\d{1,2}(?!\d)(?:st|nd|rd|th)?(?:,?\s+\d{4})?|"
    r"\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTHS + r"(?:,?\s+\d{4})?|"
    r"(?:early|mid|late)?\s*(?:19[7-9]\d|20\d\d)(?!\d|[,.]\d)"
    r"(?-i:(?!\s*(?:(?!(?:was|is|as|has|this|its|his|thus)\b)[a-z]+s\b|%|"
    r"(?:k|m|ms|gb|mb|tb|kb|usd|eur)\b)))|"
    r"(?-i:January|February|March|April|May|June|July|August|September|October|November|"
    r"December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\b"
    r")"
)
_RELATIVE = (
    r"(?:today|tonight|this morning|this afternoon|yesterday|tomorrow|now|"
    r"(?:the\s+)?(?:end|start|beginning|middle)\s+of\s+(?:the\s+)?(?:" + _PERIOD + r"|" + _QUARTER
    + r"|" + _MONTHS + r"(?:\s+\d{4})?)|"
    r"(?:last|this|next|past|coming)\s+(?:" + _PERIOD + r"|" + _WEEKDAY + r")(?:\s+of\s+" + _MONTHS + r")?|"
    r"\d{1,2}\s+(?:days?|weeks?|months?|years?)\s+ago|"
    r"(?:on\s+)?" + _WEEKDAY + r"|the\s+\d{1,2}(?:st|nd|rd|th)\b|" + _QUARTER + r")"
)
_DATE = r"(?:" + _RELATIVE + r"|" + _ABSOLUTE + r")(?![\w-])"
_START = re.compile(
    r"\b(?:since|from|starting(?: on| in| from)?|as of|as from|effective(?: from| on)?|"
    r"beginning(?: in| on)?|with effect from)\s+(" + _DATE + r")", re.IGNORECASE)
_END = re.compile(
    r"\b(?:(?:until|till)\s*:|until|till|til|through|thru|(?<=\d )to|(?<=\d, )to|ended(?: on| in)?|ending(?: on| in)?|"
    r"ends(?: on| in)?|expire[sd]?(?: on| in)?|left (?:\w+ )?(?:on|in)|up to)\s+(" + _DATE + r")",
    re.IGNORECASE)
_ON = re.compile(r"\b(?:on|in)\s+(" + _DATE + r")", re.IGNORECASE)


def _day(value: datetime) -> datetime:
    return value.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int) -> datetime:
    while month < 1:
        year, month = year - 1, month + 12
    while month > 12:
        year, month = year + 1, month - 12
    return datetime(year, month, 1)


def _period(unit: str, ref: datetime, offset: int) -> tuple[datetime, datetime]:
    """(first day, last day) of the week/month/quarter/year `offset` periods from ref's."""
    if unit == "week":
        start = _day(ref) - timedelta(days=ref.weekday()) + timedelta(weeks=offset)
        return start, start + timedelta(days=6)
    if unit == "month":
        start = _month_start(ref.year, ref.month + offset)
    elif unit == "quarter":
        start = _month_start(ref.year, 3 * ((ref.month - 1) // 3) + 1 + 3 * offset)
    else:
        start = datetime(ref.year + offset, 1, 1)
    months = {"month": 1, "quarter": 3, "year": 12}[unit]
    nxt = _month_start(start.year, start.month + months)
    return start, nxt - timedelta(days=1)


def _quarter(text: str, ref: datetime) -> tuple[datetime, datetime] | None:
    m = re.match(r"(?i)([qh])([1-4])(?:\s+(?:fy)?(\d{4})|\s*'(\d{2}))?$", text)
    if m is None:
        return None
    year = int(m.group(3)) if m.group(3) else (2000 + int(m.group(4)) if m.group(4) else ref.year)
    size = 3 if m.group(1).lower() == "q" else 6
    start = datetime(year, 1 + size * (int(m.group(2)) - 1), 1)
    return start, _month_start(year, start.month + size) - timedelta(days=1)


def _relative(text: str, ref: datetime, as_end: bool) -> datetime | None:
    t = re.sub(r"\s+", " ", text.lower().strip())
    t = re.sub(r"^on ", "", t)
    if t in {"today", "tonight", "now", "this morning", "this afternoon"}:
        return _day(ref)
    if t in {"yesterday", "tomorrow"}:
        return _day(ref) + timedelta(days=-1 if t == "yesterday" else 1)
    if t in _WEEKDAYS:  # the latest such day (today included): "took over on Monday"
        return _day(ref) - timedelta(days=(ref.weekday() - _WEEKDAYS.index(t)) % 7)
    m = re.fullmatch(r"(\d{1,2}) (day|week|month|year)s? ago", t)
    if m:
        n, unit = int(m.group(1)), m.group(2)
        if unit in ("day", "week"):
            return _day(ref) - timedelta(days=n * (7 if unit == "week" else 1))
        if unit == "month":
            return _period("month", ref, -n)[0]
        return datetime(ref.year - n, ref.month, 1)
    m = re.fullmatch(r"the (\d{1,2})(?:st|nd|rd|th)", t)
    if m:
        day = int(m.group(1))
        month_start = _month_start(ref.year, ref.month if day <= ref.day else ref.month - 1)
        last = calendar.monthrange(month_start.year, month_start.month)[1]
        return month_start.replace(day=min(day, last))
    m = re.fullmatch(r"(last|this|next|past|coming) (\w+)(?: of (.+))?", t)
    if m:
        which, what, month = m.groups()
        offset = {"last": -1, "past": -1, "this": 0, "next": 1, "coming": 1}[which]
        if what in _WEEKDAYS:
            target = _WEEKDAYS.index(what)
            if month:  # "last Friday of December"
                parsed = _absolute(month, ref)
                if parsed is None:
                    return None
                last = calendar.monthrange(parsed.year, parsed.month)[1]
                end = datetime(parsed.year, parsed.month, last)
                return end - timedelta(days=(end.weekday() - target) % 7)
            delta = (target - ref.weekday()) % 7
            if which in ("last", "past"):
                return _day(ref) - timedelta(days=(ref.weekday() - target) % 7 or 7)
            return _day(ref) + timedelta(days=delta if which == "this" else (delta or 7))
        if what in ("week", "month", "quarter", "year"):
            first, last_day = _period(what, ref, offset)
            return last_day if as_end and which in ("this",) else first
    m = re.fullmatch(r"(?:the )?(end|start|beginning|middle) of (?:the )?(.+)", t)
    if m:
        edge, what = m.groups()
        span = _period(what, ref, 0) if what in ("week", "month", "quarter", "year") else _quarter(what, ref)
        if span is None:
            parsed = _absolute(what, ref)
            if parsed is None:
                return None
            span = _period("month", parsed, 0)
        if edge == "middle":
            return span[0] + (span[1] - span[0]) / 2
        return span[1] if edge == "end" else span[0]
    q = _quarter(t, ref)
    if q is not None:
        return q[1] if as_end and re.search(r"\bend\b", t) else q[0]
    return None


def _absolute(text: str, reference: datetime) -> datetime | None:
    cleaned = re.sub(r"(?i)\b(early|mid|late)\s+", "", text)
    cleaned = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", cleaned)
    cleaned = re.sub(r"(?i)\bof\s+", "", cleaned)
    default = reference.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0, tzinfo=None)
    if re.fullmatch(r"(?i)" + _MONTHS, cleaned.strip()):
        default = default.replace(day=1)
    try:
        return dateparser.parse(cleaned, default=default)
    except (ValueError, OverflowError):
        return None


def resolve(text: str, reference: datetime, as_end: bool = False) -> datetime | None:
    """A date expression as a UTC datetime, relative ones counted from ``reference``."""
    ref = ensure_utc(reference).replace(tzinfo=None)
    numeric = _numeric(text.strip(), ref)
    if numeric is not None:
        return numeric
    found = _relative(text, ref, as_end)
    if found is None:
        found = _absolute(text, ref)
    return ensure_utc(found) if found is not None else None


# a span of days: "18–22.11.2024", "March 17–21, 2025", "17–21 March", "14 Feb – 1 Jun 2025"
_DASH = r"\s*(?:–|—|-(?=\s*\d)|\bto\b|\buntil\b|\bthrough\b)\s*"
_RANGES: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?<![\d.])(\d{1,2})\.?" + _DASH + r"(\d{1,2})\.(\d{1,2})\.(\d{4})(?!\d)"),
    re.compile(r"\b(" + _MONTHS + r")\s+(\d{1,2})" + _DASH + r"(\d{1,2})(?!\d|:)(?:,?\s+(\d{4}))?",
               re.IGNORECASE),
    re.compile(r"(?<![\d.])(\d{1,2})" + _DASH + r"(\d{1,2})\s+(" + _MONTHS + r")(?:,?\s+(\d{4}))?",
               re.IGNORECASE),
)
_FULL_RANGE = re.compile(r"(?<![\w-])(" + _ABSOLUTE + r")\s*[–—]\s*(" + _ABSOLUTE + r")(?![\w-])",
                         re.IGNORECASE)


def date_range(sentence: str, reference: datetime) -> tuple[datetime, datetime] | None:
    """The first span of days the sentence states, as (first day, last day)."""
    ref = ensure_utc(reference).replace(tzinfo=None)
    for i, rx in enumerate(_RANGES):
        m = rx.search(sentence)
        if m is None:
            continue
        if i == 0:
            last = _numeric(f"{m.group(2)}.{m.group(3)}.{m.group(4)}", ref)
            first = _numeric(f"{m.group(1)}.{m.group(3)}.{m.group(4)}", ref)
        else:
            month, a, b = (m.group(1), m.group(2), m.group(3)) if i == 1 else \
                (m.group(3), m.group(1), m.group(2))
            year = f" {m.group(4)}" if m.group(4) else ""
            first, last = resolve(f"{a} {month}{year}", ref), resolve(f"{b} {month}{year}", ref)
        if first is not None and last is not None and first < last:
            return first, last
    m = _FULL_RANGE.search(sentence)
    if m is not None:
        first, last = resolve(m.group(1), ref), resolve(m.group(2), ref, as_end=True)
        if first is not None and last is not None and first < last:
            if first.year != last.year and not re.search(r"\d{4}", m.group(1)):
                first = first.replace(year=last.year)  # "14 Feb – 1 Jun 2025"
            if first < last:
                return first, last
    return None


def validity(sentence: str, reference: datetime) -> tuple[datetime | None, datetime | None]:
    """(valid_at, invalid_at) stated by the sentence, None where it says nothing."""
    start = _START.search(sentence)
    end = _END.search(sentence)
    if start is None and end is None:
        span = date_range(sentence, reference)
        if span is not None:
            return span
    valid_at = resolve(start.group(1), reference) if start else None
    invalid_at = resolve(end.group(1), reference, as_end=True) if end else None
    if valid_at is None and end is None:
        on = _ON.search(sentence)
        if on is not None and not re.search(r"(?i)\b(?:will|going to|plan(?:s|ned)? to)\b", sentence):
            valid_at = resolve(on.group(1), reference)
    if valid_at and invalid_at and invalid_at <= valid_at:
        invalid_at = None
    return valid_at, invalid_at


_ANY_TIME = re.compile(r"(?<![\w-])(?:" + _DATE + r"|\d{1,2}[/.]\d{1,2}[/.]\d{2,4})", re.IGNORECASE)


def states_time(text: str) -> bool:
    """The text names a date or a time of some kind ("30/09/2025", "next Monday", "Q3")."""
    return _ANY_TIME.search(text) is not None



_NUMERIC = re.compile(r"^(\d{1,2})([/.])(\d{1,2})(?:[/.](\d{4}|\d{2}))?$")


def _numeric(text: str, reference: datetime) -> datetime | None:
    """"30.09.2024" (dots: day first, as in Europe), "12/20" or "3/14/2025" (slashes: month
    first, unless the first number cannot be a month)."""
    m = _NUMERIC.match(text)
    if m is None:
        return None
    a, sep, b, year = int(m.group(1)), m.group(2), int(m.group(3)), m.group(4)
    day, month = (a, b) if sep == "." or a > 12 else (b, a)
    y = reference.year if year is None else (int(year) + 2000 if len(year) == 2 else int(year))
    try:
        return ensure_utc(datetime(y, month, day))
    except ValueError:
        return None


_NEAR_DATE = re.compile(r"(?<![\w-])(?:" + _DATE + r"|\d{1,2}\.\d{1,2}\.(?:\d{4}|\d{2})(?!\d)|"
                        r"\d{1,2}/\d{1,2}(?:/\d{2,4})?(?![\d/]))", re.IGNORECASE)
_STARTS = re.compile(r"\b(?:from|since|as of|starting|effective)\s*$", re.IGNORECASE)


def date_near(text: str, position: int, reference: datetime, as_end: bool = True,
              skip_starts: bool = False) -> datetime | None:
    """The date a stretch of text states nearest to ``position`` (a trigger word's offset),
    resolved against ``reference``; None if it names none. Numeric dates read day first with
    dots (30.09.2024) and month first with slashes (12/20). ``skip_starts``: a date that starts
    something else ("from 01.07.", "since May") is not the one wanted."""
    best: tuple[int, datetime] | None = None
    for m in _NEAR_DATE.finditer(text):
        phrase = m.group(0).strip()
        if phrase.lower() == "now" or (skip_starts and _STARTS.search(text[:m.start()])):
            continue
        found = _numeric(phrase, reference) or resolve(phrase, reference, as_end=as_end)
        if found is None:
            continue
        distance = min(abs(m.start() - position), abs(m.end() - position))
        if best is None or distance < best[0]:
            best = (distance, found)
    return best[1] if best is not None else None


# a stand-in's role ends when the one it covers for is back: "Dana is interim lead while Bo
# is on leave (back in June)", "acting head until Bo returns on 2 June"
_INTERIM = re.compile(r"\b(?:interim|acting|stand-?in|covering|covers?\s+for|while\s+\w+\s+is\s+"
                      r"(?:on|out|away))\b", re.IGNORECASE)
_RETURN = re.compile(r"(?:\(\s*|\b(?:is|be|comes?|coming)\s+)back\s+(?:in|on|by|from\s+\w+)\s+(?:leave\s+)?"
                     r"(?:(?:on|in|as\s+of)\s+)?(" + _DATE + r")|\breturn(?:s|ing)?\s+(?:in|on|by)\s+("
                     + _DATE + r")", re.IGNORECASE)


def is_interim(sentence: str) -> bool:
    """Does the sentence state a stand-in's role ("interim lead", "acting head", "covers for")?"""
    return _INTERIM.search(sentence) is not None


def interim_end(sentence: str, reference: datetime) -> datetime | None:
    """When a stand-in's role the sentence states ends (the covered person's return), if it
    says so; None for any other sentence."""
    if not _INTERIM.search(sentence):
        return None
    m = _RETURN.search(sentence)
    return resolve(m.group(1) or m.group(2), reference) if m is not None else None


# "who ran the team from 2021 until then": the start belongs to the old holding, whose end the
# text only gives as "then" (the change it reports, on or before the document's time)
_HELD_UNTIL_THEN = re.compile(r"\b(?:from|since)\s+[^,;.()]{1,40}?\s+(?:until|till|to)\s+"
                              r"(?:then|now|recently)\b", re.IGNORECASE)


def held_until_then(sentence: str) -> bool:
    """Does the sentence give an old holding's span as "from <date> until then"?"""
    return _HELD_UNTIL_THEN.search(sentence) is not None
