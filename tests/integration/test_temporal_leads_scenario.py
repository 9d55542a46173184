"""Issue 4 acceptance: a change of lead stated in plain words ends the older fact.

"Dana leads Atlas." (January), then "Atlas is now led by Lee." (May), through the real
embedded stack (FalkorDB, qdrant-edge, SQLite, spaCy, MiniLM), no LLM.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from knotwork.core import ExportedFact, Knotwork
from knotwork.domain.models import RelationType
from tests.conftest import SettingsFactory

pytestmark = [pytest.mark.integration, pytest.mark.models]

JANUARY = datetime(2026, 1, 12, 9, 0, tzinfo=UTC)
MAY = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)


@pytest.fixture
def kw(make_settings: SettingsFactory) -> Iterator[Knotwork]:
    with Knotwork(make_settings()) as instance:
        instance.add_episode("Dana leads Atlas.", reference_time=JANUARY, source="text")
        instance.add_episode("Atlas is now led by Lee.", reference_time=MAY, source="text")
        yield instance


def _leads(kw: Knotwork) -> dict[str, ExportedFact]:
    return {f.source_name: f for f in kw.export_graph().facts
            if f.type == RelationType.LEADS and f.target_name == "Atlas"}


def test_the_newer_lead_invalidates_the_older_fact_in_may(kw: Knotwork) -> None:
    leads = _leads(kw)
    assert set(leads) == {"Dana", "Lee"}, leads
    dana, lee = leads["Dana"], leads["Lee"]
    assert dana.invalid_at is not None and dana.invalid_at.startswith("2026-05-04"), dana
    assert dana.valid_at is not None and dana.valid_at.startswith("2026-01-12"), dana
    assert lee.invalid_at is None and lee.valid_at.startswith("2026-05-04"), lee


def test_as_of_april_answers_dana_and_today_answers_lee(kw: Knotwork) -> None:
    april = kw.query("Who leads Atlas?", as_of=datetime(2026, 4, 1, tzinfo=UTC))
    assert "Dana" in april.answer and "Lee" not in april.answer, april.answer
    today = kw.query("Who leads Atlas?")
    assert "Lee" in today.answer, today.answer


def test_a_second_lead_without_change_language_does_not_end_the_first(
        make_settings: SettingsFactory) -> None:
    with Knotwork(make_settings()) as kw:
        kw.add_episode("Dana leads Atlas.", reference_time=JANUARY, source="text")
        kw.add_episode("Lee leads Atlas.", reference_time=MAY, source="text")
        leads = _leads(kw)
        assert set(leads) == {"Dana", "Lee"}
        assert all(f.invalid_at is None for f in leads.values())


def test_a_handover_to_the_team_named_without_its_team_word_ends_the_old_lead(
        make_settings: SettingsFactory) -> None:
    """"Routing lead" names the Routing Team: the handover ends Tomasz's lead of that one team
    entity, and the current lead comes first although the old roster line says "Team lead"."""
    with Knotwork(make_settings()) as kw:
        kw.add_episode("Tomasz Wójcik leads the Routing Team. Routing Team members: Tomasz "
                       "Wójcik (team lead), Ngozi Eze (senior engineer).",
                       reference_time=JANUARY, source="text")
        kw.add_episode("Hi all, Ngozi Eze is taking over as Routing lead from Tomasz Wójcik.",
                       reference_time=MAY, source="text")
        leads = {f.source_name: f for f in kw.export_graph().facts
                 if f.type == RelationType.LEADS}
        assert {f.target_name for f in leads.values()} == {"Routing Team"}, leads
        assert leads["Tomasz Wójcik"].invalid_at is not None
        assert leads["Ngozi Eze"].invalid_at is None
        answer = kw.query("Who leads the Routing Team?").answer
        assert "Ngozi" in answer.split(".")[0] or answer.index("Ngozi") < answer.find("Tomasz"), \
            answer
