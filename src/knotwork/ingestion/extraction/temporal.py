"""Explicit validity phrases in a fact's sentence ("since March 2024", "until June 3")."""

from __future__ import annotations

import re
from datetime import datetime

from dateutil import parser as dateparser

from knotwork.domain.timeutil import ensure_utc

_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATE = (
    r"(?:\d{4}-\d{2}-\d{2}|" + _MONTHS + r"\s+\d{4}|"
    + _MONTHS + r"\s+\d{1,2}(?!\d)(?:st|nd|rd|th)?(?:,?\s+\d{4})?|"
    r"\d{1,2}(?:st|nd|rd|th)?\s+" + _MONTHS + r"(?:,?\s+\d{4})?|"
    r"(?:early|mid|late)?\s*(?:19[7-9]\d|20\d\d)(?!\d|[,.]\d)"
    r"(?-i:(?!\s*(?:(?!(?:was|is|as|has|this|its|his|thus)\b)[a-z]+s\b|%|"
    r"(?:k|m|ms|gb|mb|tb|kb|usd|eur)\b))))"
)
_START = re.compile(r"\b(?:since|from|starting(?: on| in)?|as of|effective(?: from)?|beginning(?: in| on)?)\s+(" + _DATE + r")", re.I)
_END = re.compile(r"\b(?:until|till|through|(?<=\d )to|(?<=\d, )to|ended(?: on| in)?|ending(?: on| in)?|left (?:\w+ )?(?:on|in))\s+(" + _DATE + r")", re.I)


def _parse(text: str, reference: datetime) -> datetime | None:
    cleaned = re.sub(r"(?i)\b(early|mid|late)\s+", "", text)
    cleaned = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", cleaned)
    default = reference.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0,
                                tzinfo=None)
    try:
        parsed = dateparser.parse(cleaned, default=default)
    except (ValueError, OverflowError):
        return None
    return ensure_utc(parsed)


def validity(sentence: str, reference: datetime) -> tuple[datetime | None, datetime | None]:
    """(valid_at, invalid_at) stated by the sentence, None where it says nothing."""
    start = _START.search(sentence)
    end = _END.search(sentence)
    valid_at = _parse(start.group(1), reference) if start else None
    invalid_at = _parse(end.group(1), reference) if end else None
    if valid_at and invalid_at and invalid_at <= valid_at:
        invalid_at = None
    return valid_at, invalid_at
