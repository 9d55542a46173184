"""One ISO-8601 form for every stored time, so string order is time order."""

from __future__ import annotations

from datetime import UTC, datetime

from dateutil import parser as _dateparser


def utcnow() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def ensure_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def to_iso(value: datetime | None) -> str | None:
    """Fixed-width UTC form: 2026-02-03T12:41:07Z (lexicographic == chronological)."""
    if value is None:
        return None
    # isoformat, not strftime: glibc's %Y does not pad a year before 1000 ("237-01-01…"),
    # which neither sorts nor parses
    return ensure_utc(value).replace(tzinfo=None, microsecond=0).isoformat() + "Z"


def from_iso(value: str | None) -> datetime | None:
    if value is None or value == "":
        return None
    try:  # the stored form (to_iso) and most ISO-8601: C speed (graph reads parse thousands)
        return ensure_utc(datetime.fromisoformat(value))
    except ValueError:
        return ensure_utc(_dateparser.isoparse(value))


def parse_user_time(value: str) -> datetime:
    """Parse a user-supplied date/time (CLI/API). Raises ValueError with a clear message."""
    try:
        return ensure_utc(_dateparser.isoparse(value))
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"not an ISO-8601 date/time: {value!r}") from exc


def holds_at(valid_at: datetime | None, invalid_at: datetime | None, as_of: datetime | None) -> bool:
    """Whether a fact holds: at ``as_of`` (valid_at <= t < invalid_at), or now if not invalidated."""
    if as_of is None:
        return invalid_at is None
    return (valid_at is None or valid_at <= as_of) and (invalid_at is None or as_of < invalid_at)
