"""Validity phrases in fact sentences: since / until / from-to."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from knotwork.ingestion.extraction.temporal import validity

REF = datetime(2025, 6, 10, 12, 30, tzinfo=UTC)


def d(y: int, m: int = 1, day: int = 1) -> datetime:
    return datetime(y, m, day, tzinfo=UTC)


@pytest.mark.parametrize(
    ("sentence", "valid_at"),
    [
        ("Alice Chen works at Acme Corp since March 2024.", d(2024, 3)),
        ("Since Sept. 2024 Priya Raman leads Project Atlas.", d(2024, 9)),
        ("Since 2021 Omar Haddad leads the Search Team.", d(2021)),
        ("Tom Becker reports to Sarah Lin as of 3rd June 2024.", d(2024, 6, 3)),
        ("Alice Chen works at Acme Corp effective 1 July 2024.", d(2024, 7, 1)),
        ("Bob Smith leads the Data Team starting in 2023-02-15.", d(2023, 2, 15)),
    ],
)
def test_start_phrases(sentence: str, valid_at: datetime) -> None:
    assert validity(sentence, REF) == (valid_at, None)


@pytest.mark.parametrize(
    ("sentence", "invalid_at"),
    [
        ("Sarah Lin was the lead until June 3, 2024.", d(2024, 6, 3)),
        ("He left in May 2023.", d(2023, 5)),
        ("Bob Smith ran the team till 2022.", d(2022)),
    ],
)
def test_end_phrases(sentence: str, invalid_at: datetime) -> None:
    assert validity(sentence, REF) == (None, invalid_at)


def test_from_to_range() -> None:
    assert validity("Bob Smith worked at Globex Corp from January 2023 to March 2024.", REF) == (
        d(2023, 1), d(2024, 3))
    assert validity("Dana led it from 2023-02-01 through 2023-05-31.", REF) == (
        d(2023, 2, 1), d(2023, 5, 31))


def test_month_year_is_not_read_as_month_day() -> None:
    # "March 2024" is the month, not March 20 or day 2024
    valid_at, _ = validity("Alice Chen leads Project Atlas since March 2024.", REF)
    assert valid_at == d(2024, 3, 1)


def test_month_day_without_year_takes_the_reference_year() -> None:
    valid_at, _ = validity("Alice Chen leads Project Atlas since March 5.", REF)
    assert valid_at == d(2025, 3, 5)
    _, invalid_at = validity("Dana stays on call until August 21st.", REF)
    assert invalid_at == d(2025, 8, 21)


def test_qualifiers_early_mid_late_parse_to_the_year() -> None:
    assert validity("from mid 2023 to late 2024", REF) == (d(2023), d(2024))


def test_results_are_utc_aware() -> None:
    valid_at, invalid_at = validity("from January 2023 to March 2024", REF)
    assert valid_at is not None and valid_at.tzinfo is not None
    assert invalid_at is not None and invalid_at.utcoffset().total_seconds() == 0


def test_end_before_start_is_dropped() -> None:
    assert validity("Since May 2024 until January 2024 he led it.", REF) == (d(2024, 5), None)
    # an equal end is dropped too: a fact cannot end the moment it begins
    assert validity("from March 2024 to March 2024", REF) == (d(2024, 3), None)


@pytest.mark.parametrize(
    "sentence",
    [
        "Alice Chen moved to Berlin.",
        "Sarah may join 2 teams.",
        "Priya Raman reports to Sarah Lin.",
        "The team grew from 4 to 12 engineers.",
    ],
)
def test_no_date_no_validity(sentence: str) -> None:
    assert validity(sentence, REF) == (None, None)


def test_quantities_are_not_years() -> None:
    assert validity("Priya Raman scaled the Billing Service to 2000 requests per second.",
                    REF) == (None, None)


def test_states_time_finds_dates_of_many_shapes() -> None:
    from knotwork.ingestion.extraction.temporal import states_time

    for text in ("due 14/05/2025", "on 2025-09-30", "by March 31", "in Q3", "next Friday",
                 "since 3 June 2024", "3 weeks ago"):
        assert states_time(text), text
    for text in ("built on PostgreSQL", "Office: Pune", "the 90-second budget", "version 2"):
        assert not states_time(text), text
