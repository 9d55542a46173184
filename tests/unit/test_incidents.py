"""'What incidents happened in 2025?': the incident pages of the period, by their titles."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from knotwork.domain.ids import stable_id
from knotwork.domain.models import Chunk, Document, SourceSystem
from knotwork.retrieval.incidents import asks_for_incidents, incident_answer, is_incident_page


def doc(title: str, when: datetime) -> Document:
    return Document(id=title, group_id="g", source_system=SourceSystem.FILE, source_id=title,
                    title=title, created_at=when, content_hash="x", chunk_count=1)


PAGES = [doc("Postmortem: Checkout outage", datetime(2025, 3, 2, tzinfo=UTC)),
         doc("Incident report INC-88 (search latency)", datetime(2024, 11, 5, tzinfo=UTC)),
         doc("#incidents — Ana, 2025-03-02", datetime(2025, 3, 2, tzinfo=UTC)),
         doc("Team directory", datetime(2025, 1, 1, tzinfo=UTC))]
TEXT = {"Postmortem: Checkout outage": "# Postmortem\n\nCheckout failed for 22 minutes on 2 March.",
        "Incident report INC-88 (search latency)": "# INC-88\n\nSearch p99 latency tripled for a day."}


class Docs:
    def list_documents(self, group_id: str) -> list[Document]:
        return PAGES

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        return [Chunk(id=stable_id(t, "chunk", "0"), document_id=t, group_id="g", index=0,
                      content=c, start_offset=0, end_offset=len(c), token_count=9)
                for t, c in TEXT.items() if stable_id(t, "chunk", "0") in ids]

    def get_documents(self, ids: Sequence[str]) -> list[Document]:
        return [d for d in PAGES if d.id in ids]


def test_incident_questions_and_pages() -> None:
    assert asks_for_incidents("What incidents happened in 2025?")
    assert asks_for_incidents("Summarize the outages we had.")
    assert not asks_for_incidents("What caused the Checkout outage?")
    assert [is_incident_page(d) for d in PAGES] == [True, True, False, False]


def test_the_incident_pages_of_the_period_are_listed() -> None:
    result = incident_answer(Docs(), "g", "Which incidents did we have in 2025?", as_of=None)  # type: ignore[arg-type]
    assert result is not None and result.answer.startswith("1 incident (in 2025)")
    assert "22 minutes" in result.answer and "INC-88" not in result.answer
    both = incident_answer(Docs(), "g", "Summarize the incidents we had.", as_of=None)  # type: ignore[arg-type]
    assert both is not None and "INC-88" in both.answer and "Checkout" in both.answer
    none = incident_answer(Docs(), "g", "What incidents happened in 2023?", as_of=None)  # type: ignore[arg-type]
    assert none is not None and none.confidence < 0.3
