"""'What are the main risks for X?': the items listed under a heading of that kind."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from knotwork.domain.models import Entity, EntityType, Episode
from knotwork.retrieval.sections import asked_section, section_items

T0 = datetime(2025, 1, 1, tzinfo=UTC)
HERON = Entity(id="h", group_id="g", name="Project Heron", canonical_name="project heron",
               type=EntityType.PRODUCT, subtype="PROJECT", aliases=["Heron"], created_at=T0,
               updated_at=T0)


def episode(eid: str, name: str, content: str) -> Episode:
    return Episode(id=eid, group_id="g", name=name, content=content, document_id=eid,
                   valid_at=T0, created_at=T0)


PAGE = episode("p", "Project Heron", "# Project Heron\n\nHeron moves billing to the cloud.\n\n"
               "## Key risks\n\n- Vendor lock-in on the queue.\n- Only two people know the "
               "ledger schema.\n\n## Follow-ups\n\n- Book the load test.")
OTHER = episode("o", "Quarterly review", "# Quarterly review\n\nRisk: Heron slips past the "
                "audit window.\nRisk: the office lease ends in May.\n\nTop concerns for Q3:\n"
                "- Hiring for Heron is behind.")


@pytest.mark.parametrize(("question", "kind"), [
    ("What are the main risks for Project Heron?", "risks"),
    ("What were the action items of the outage?", "action items"),
    ("What decisions were made about Heron?", "decisions"),
    ("What are the key security risks for Heron?", "risks"),
    ("Who leads Project Heron?", None), ("What is the risk score?", None)])
def test_the_list_a_question_asks_for(question: str, kind: str | None) -> None:
    assert asked_section(question) == kind


def test_items_under_the_heading_or_labelled_about_the_entity() -> None:
    items = [i.text for i in section_items("risks", [HERON], [PAGE, OTHER])]
    assert items == ["Vendor lock-in on the queue.", "Only two people know the ledger schema.",
                     "Heron slips past the audit window.", "Hiring for Heron is behind."]
    assert [i.text for i in section_items("follow-ups", [HERON], [PAGE])] == ["Book the load test."]
