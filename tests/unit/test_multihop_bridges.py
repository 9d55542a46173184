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


PEOPLE = {"ana ruiz": EntityType.PERSON, "payroll": EntityType.PRODUCT,
          "bo chen": EntityType.PERSON}


def typed(name: str) -> Entity:
    key = normalize_name(name)
    return Entity(id=key, group_id="g", name=name, canonical_name=key, type=PEOPLE.get(key, EntityType.ORGANIZATION),
                  name_keys=[key], created_at=T0, updated_at=T0)


LEAD_ENTS = {e.id: e for e in map(typed, ("Ledger Team", "Payroll", "Ana Ruiz", "Bo Chen"))}
LEAD_FACTS = [
    Fact(id="f0", group_id="g", source_id="ledger team", target_id="payroll",
         type=RelationType.MAINTAINS, fact="The Ledger Team maintains Payroll.", created_at=T0),
    Fact(id="f1", group_id="g", source_id="ana ruiz", target_id="ledger team",
         type=RelationType.LEADS, fact="Ana Ruiz leads the Ledger Team.", created_at=T0),
    Fact(id="f2", group_id="g", source_id="bo chen", target_id="ledger team",
         type=RelationType.MEMBER_OF, fact="Bo Chen is on the Ledger Team.", created_at=T0)]


class LeadSearch(Search):
    """The inner answer's facts rank a service and a member above the lead; the service's and
    the member's outer answers read a little more confident than the lead's."""

    def run(self, question: str, **_: object) -> QueryResult:
        self.asked.append(question)
        if question.startswith("Who leads the Ledger Team"):
            return result("Ana Ruiz leads the Ledger Team.", 0.9, LEAD_FACTS)
        if "Payroll" in question:
            return result("Payroll runs in Dublin.", 0.76)
        if "Bo Chen" in question:
            return result("Bo Chen sits in Porto.", 0.75)
        if "Ana Ruiz" in question:
            return result("Ana Ruiz works from Lisbon.", 0.72)
        return result("I could not find support for this.", 0.1)

    def entities(self, ids: Sequence[str]) -> list[Entity]:
        return [LEAD_ENTS[i] for i in ids if i in LEAD_ENTS]

    def named_in(self, text: str) -> list[tuple[str, Entity]]:
        return [(e.name, e) for e in LEAD_ENTS.values() if e.name in text]


def test_the_bridge_is_of_the_clauses_kind_and_the_first_reading_wins_a_near_tie() -> None:
    search = LeadSearch()
    found = multi_hop(search, "Which city does the person who leads the Ledger Team work from?",  # type: ignore[arg-type]
                      as_of=None, max_context_tokens=2000)
    assert found is not None and "Lisbon" in found.answer
    assert not any("Payroll" in q for q in search.asked)  # a service is no person
