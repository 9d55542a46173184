"""When a plain file was written, read from the file itself rather than its mtime.

A file's modification time says when it was copied, not when it was written; facts are
dated and ordered by their document's time, so "moved to the Routing team in May" in a
note from 2025 must not resolve to May of the year the corpus was copied. In order:

1. a ``date`` / ``created`` / ``updated`` key of Markdown front matter;
2. a date in the file name (``2025-03-04-ops-review.md``, ``20250304_notes.txt``);
3. a full date in the title or first heading ("Ops review, 4 March 2025"), or a month and
   year there ("Status update — June 2025");
4. a date line near the top ("Date: 2025-03-04", "Last updated March 4, 2025", a line that
   is mostly a date).

A date in running prose is never used: "Atlas launched on 4 March 2021" says when Atlas
launched, not when the page was written. Dates before 1990 or after ``now`` are ignored.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from knotwork.ingestion.extraction.temporal import resolve

__all__ = ["document_date"]

_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
          r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?:19|20)\d\d"
_FULL = re.compile(
    r"(?<![\d-])(?:" + _YEAR + r"-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])"
    r"|" + _DAY + r"\s+(?:of\s+)?" + _MONTH + r",?\s+" + _YEAR
    + r"|" + _MONTH + r"\s+" + _DAY + r",?\s+" + _YEAR + r")(?![\d-])",
    re.IGNORECASE,
)
_MONTH_YEAR = re.compile(r"\b" + _MONTH + r"\s+" + _YEAR + r"\b", re.IGNORECASE)
_FILE_NAME = re.compile(
    r"(?<!\d)(" + _YEAR + r")[-_.]?(0[1-9]|1[0-2])[-_.]?(0[1-9]|[12]\d|3[01])(?!\d)")
_FRONT_KEY = re.compile(r"^(?:date|created(?:_at)?|updated(?:_at)?|last_modified)\s*:\s*(.+)$",
                        re.IGNORECASE)
_DATE_LABEL = re.compile(
    r"^\W*(?:date|dated|created(?: on)?|updated(?: on)?|last (?:updated|modified|edited)"
    r"(?: on)?|posted(?: on)?|published(?: on)?|written(?: on)?|as of)\b", re.IGNORECASE)
_TOP_LINES = 8


def _plausible(value: datetime | None, now: datetime) -> datetime | None:
    if value is None or value.year < 1990 or value > now + timedelta(days=1):
        return None
    return value


def _front_matter_date(text: str, now: datetime) -> datetime | None:
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    for line in lines[1:40]:
        if line.strip() in ("---", "..."):
            break
        match = _FRONT_KEY.match(line.strip())
        if match:
            return resolve(match.group(1).strip().strip("'\""), now)
    return None


def _file_name_date(name: str) -> datetime | None:
    match = _FILE_NAME.search(name)
    if match is None:
        return None
    year, month, day = (int(part) for part in match.groups())
    try:
        return datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None


def _title_date(title: str, now: datetime) -> datetime | None:
    match = _FULL.search(title) or _MONTH_YEAR.search(title)
    return resolve(match.group(0), now) if match else None


def _top_line_date(text: str, now: datetime) -> datetime | None:
    lines = [line.strip() for line in text.splitlines() if line.strip()][:_TOP_LINES]
    for line in lines:
        match = _FULL.search(line)
        if match is None:
            continue
        mostly_date = len(match.group(0)) >= 0.5 * len(re.sub(r"[\W_]+", "", line) or "x")
        if _DATE_LABEL.match(line) or mostly_date or line.startswith("#"):
            return resolve(match.group(0), now)
    return None


def document_date(file_name: str, title: str | None, text: str,
                  now: datetime | None = None) -> datetime | None:
    """The date a file says it was written (see the module notes), or None."""
    current = now or datetime.now(UTC)
    for found in (
        _front_matter_date(text, current),
        _file_name_date(file_name),
        _title_date(title, current) if title else None,
        _top_line_date(text, current),
    ):
        if (value := _plausible(found, current)) is not None:
            return value
    return None
