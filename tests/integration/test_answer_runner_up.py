"""The learned answer choice's close second is shown after the answer's own sentences, and
the abstention decision is made without it (the real embedded stack, no LLM)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from knotwork.core import Knotwork
from knotwork.domain.models import QueryMode, RawDocument, SourceSystem
from knotwork.retrieval.config import LocalSearchConfig
from knotwork.retrieval.options import QueryOptions
from tests.conftest import SettingsFactory

pytestmark = [pytest.mark.integration, pytest.mark.models]

PAGE = ("# Depot notes\n\n"
        "The Elm Street depot was the main warehouse of the company for years.\n\n"
        "In March 2022 the Quarry Road depot replaced the Elm Street depot as main warehouse.\n\n"
        "The Elm Street depot had a loading bay for six trucks.\n\n"
        "Staff at the Elm Street depot wore green jackets on the night shift.")
QUESTIONS = ("Which depot replaced the Elm Street depot?", "How many trucks fit the Elm Street depot?")


def test_the_close_second_follows_the_answer_and_does_not_change_abstention(
        make_settings: SettingsFactory) -> None:
    when = datetime(2024, 1, 5, tzinfo=UTC)
    with Knotwork(make_settings()) as kw:
        kw.ingest_documents([RawDocument(
            source_system=SourceSystem.FILE, source_id="depots.md", title="Depot notes",
            content=PAGE, created_at=when, modified_at=when)])
        options = QueryOptions(mode=QueryMode.LOCAL)
        always = kw.engine(None, LocalSearchConfig(runner_up_share=0.0))
        never = kw.engine(None, LocalSearchConfig(runner_up_share=2.0))
        for question in QUESTIONS:
            shown = always.query(question, options)
            alone = never.query(question, options)
            assert not any("close second" in t for t in alone.reasoning_trace)
            assert any("close second" in t for t in shown.reasoning_trace), shown.reasoning_trace
            assert shown.answer.startswith(alone.answer) and len(shown.answer) > len(alone.answer)
            assert shown.confidence == alone.confidence
            assert [t for t in shown.reasoning_trace if "P(correct)" in t] == \
                [t for t in alone.reasoning_trace if "P(correct)" in t]
