"""A short follow-up sentence that completes the one before it ("… Luis Ortega leads the
migration.") is found with it: the answer carries both halves and cites the page."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from knotwork.core import Knotwork
from knotwork.domain.models import RawDocument, SourceSystem
from tests.conftest import SettingsFactory

pytestmark = [pytest.mark.integration, pytest.mark.models]

PAGE = ("# Architecture decision log\n\n"
        "ADR-014 (2024-02-02): Lighthouse moves from Redshift to Snowflake. Decided by Hannah "
        "Bjork and approved by Marguerite Okafor. Redshift costs had doubled in a year.\n\n"
        "ADR-021 (2024-10-01): the Warehouse team adopts Dagster instead of Airflow for "
        "orchestration. Luis Ortega leads the migration.\n\n"
        "Conveyor depends on the schema registry. The registry is run by the Platform team.")


def test_the_follow_up_sentence_that_names_the_person_is_in_the_answer(
        make_settings: SettingsFactory) -> None:
    when = datetime(2024, 11, 1, tzinfo=UTC)
    with Knotwork(make_settings()) as kw:
        kw.ingest_documents([RawDocument(
            source_system=SourceSystem.FILE, source_id="adr.md", title="Architecture decision log",
            content=PAGE, created_at=when, modified_at=when)])
        migration = kw.query("Who leads the Dagster migration?", mode="local")
        decided = kw.query("Who decided to move Lighthouse to Snowflake?", mode="local")
    assert "Luis Ortega" in migration.answer and "Dagster" in migration.answer
    assert migration.citations and migration.citations[0].source_id == "adr.md"
    assert "Hannah Bjork" in decided.answer
    for answer in (migration.answer, decided.answer):  # a pair never repeats a chosen sentence
        sentences = [x.strip() for x in answer.split(". ") if x.strip()]
        assert len(sentences) == len(set(sentences)), answer
