"""Time in questions is honoured at answer time, through the real embedded stack, no LLM.

The graph holds an older and a newer LEADS fact of one team (the handover ends the older one):
a question dated inside the older fact's interval, or tied to an event that happened then,
answers the older lead; an undated question answers the current one.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from knotwork.core import Knotwork
from knotwork.domain.models import RelationType
from tests.conftest import SettingsFactory

pytestmark = [pytest.mark.integration, pytest.mark.models]

JANUARY = datetime(2024, 1, 10, 9, 0, tzinfo=UTC)
JUNE = datetime(2024, 6, 13, 9, 0, tzinfo=UTC)
OCTOBER = datetime(2024, 10, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def kw(make_settings: SettingsFactory) -> Iterator[Knotwork]:
    with Knotwork(make_settings()) as instance:
        instance.add_episode(
            "Ondrej Vasko leads the Harbor Team.", reference_time=JANUARY, source="text"
        )
        instance.add_episode(
            "The billing outage on 12 June 2024 took the Pricing Engine down for an hour.",
            reference_time=JUNE,
            source="text",
        )
        instance.add_episode(
            "The Harbor Team is now led by Marta Vasko.", reference_time=OCTOBER, source="text"
        )
        yield instance


def test_the_graph_holds_both_leads_with_their_intervals(kw: Knotwork) -> None:
    leads = {
        f.source_name: f
        for f in kw.export_graph().facts
        if f.type == RelationType.LEADS and f.target_name == "Harbor Team"
    }
    assert set(leads) == {"Ondrej Vasko", "Marta Vasko"}, leads
    assert leads["Ondrej Vasko"].invalid_at is not None
    assert leads["Marta Vasko"].invalid_at is None


def test_a_month_inside_the_older_interval_answers_the_older_lead(kw: Knotwork) -> None:
    then = kw.query("Who led the Harbor Team in August 2024?")
    assert "Ondrej" in then.answer and "Marta" not in then.answer, then.answer


def test_an_undated_question_answers_the_current_lead(kw: Knotwork) -> None:
    now = kw.query("Who leads the Harbor Team?")
    assert "Marta" in now.answer, now.answer


def test_an_event_is_dated_from_the_evidence_and_answers_the_lead_then(kw: Knotwork) -> None:
    result = kw.query("Who led the Harbor Team when the billing outage happened?")
    assert "Ondrej" in result.answer.split(".")[0], result.answer
    assert any("event:when-happened" in line for line in result.reasoning_trace), (
        result.reasoning_trace
    )


def test_an_event_the_evidence_does_not_date_weighs_nothing(kw: Knotwork) -> None:
    """No evidence names the hackathon: no time term, and the ended lead is no candidate."""
    result = kw.query("Who led the Harbor Team during the spring hackathon?")
    assert "Ondrej" not in result.answer, result.answer
    assert any("event not dated" in line for line in result.reasoning_trace), result.reasoning_trace
