"""Multi-hop with several bridge candidates: the one the outer question is answered for."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from knotwork.domain.models import Entity, EntityType, Fact, QueryMode, QueryResult, RelationType
from knotwork.resolution.normalize import normalize_name
from knotwork.retrieval.multihop import multi_hop

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def ent(name: str) -> Entity:
    key = normalize_name(name)
    return Entity(id=key, group_id="g", name=name, canonical_name=key, type=EntityType.PRODUCT,
                  name_keys=[key], created_at=T0, updated_at=T0)


ENTS = {e.id: e for e in map(ent, ("Tollgate", "Vault Ledger", "Quarry"))}
DEPS = [Fact(id=f"d{i}", group_id="g", source_id="tollgate", target_id=t,
             type=RelationType.DEPENDS_ON, fact=f"Tollgate relies on {ENTS[t].name}.", created_at=T0)
        for i, t in enumerate(("vault ledger", "quarry"))]


def result(answer: str, confidence: float, facts: Sequence[Fact] = ()) -> QueryResult:
    return QueryResult(answer=answer, citations=[], confidence=confidence,
                       mode_used=QueryMode.LOCAL, facts=list(facts))


class Search:
    min_answer_score = 0.3

    def __init__(self) -> None:
        self.asked: list[str] = []

    def run(self, question: str, **_: object) -> QueryResult:
        self.asked.append(question)
        if question.startswith("Which system"):
            return result("Tollgate relies on Vault Ledger and Quarry.", 0.9, DEPS)
        if "Quarry" in question:
            return result("The Intake Squad maintains Quarry.", 0.95)
        return result("I could not find support for this.", 0.1)

    def entities(self, ids: Sequence[str]) -> list[Entity]:
        return [ENTS[i] for i in ids if i in ENTS]

    def named_in(self, text: str) -> list[tuple[str, Entity]]:
        return [(e.name, e) for e in ENTS.values() if e.name in text]


def test_the_bridge_whose_outer_question_is_answered() -> None:
    search = Search()
    found = multi_hop(search, "Which squad maintains the system that Tollgate relies on?",  # type: ignore[arg-type]
                      as_of=None, max_context_tokens=2000)
    assert found is not None and "Intake Squad" in found.answer
    assert search.asked[1:] == ["Which squad maintains Vault Ledger?", "Which squad maintains Quarry?"]
