"""Stored times: one fixed-width form, for any year a request may carry."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from knotwork.domain.timeutil import from_iso, to_iso


@pytest.mark.parametrize("when", [
    datetime(2026, 2, 3, 12, 41, 7, tzinfo=UTC),
    datetime(237, 1, 1, tzinfo=UTC),  # glibc's strftime wrote "237-01-01…": unparseable
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC),
    datetime(2026, 6, 1, 3, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2))),
])
def test_stored_times_are_fixed_width_and_round_trip(when: datetime) -> None:
    stored = to_iso(when)
    assert stored is not None and len(stored) == 20 and stored.endswith("Z")
    assert from_iso(stored) == when.astimezone(UTC).replace(microsecond=0)


def test_string_order_is_time_order() -> None:
    times = [datetime(y, 1, 1, tzinfo=UTC) for y in (5, 237, 999, 1000, 2026)]
    assert sorted(to_iso(t) or "" for t in times) == [to_iso(t) for t in times]
