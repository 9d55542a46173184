"""'Which technologies does <company> use?': what the company's systems' usage facts point to."""

from __future__ import annotations

from datetime import UTC, datetime

from knotwork.domain.models import Entity, EntityType, Fact, FactHit, RelationType
from knotwork.retrieval.tech_stack import stack_of

T0 = datetime(2025, 1, 1, tzinfo=UTC)
R = RelationType


def tech(name: str) -> Entity:
    return Entity(id=name.lower(), group_id="g", name=name, canonical_name=name.lower(),
                  type=EntityType.TECHNOLOGY, created_at=T0, updated_at=T0)


def fact(i: int, source: str, target: str, rtype: RelationType = R.USES) -> Fact:
    return Fact(id=f"f{i}", group_id="g", source_id=source, target_id=target, type=rtype,
                fact=f"{source} uses {target}.", created_at=T0)


TECH = {e.id: e for e in map(tech, ("PostgreSQL", "Redis", "Kafka", "Python"))}
FACTS = [fact(1, "billing", "postgresql"), fact(2, "ledger", "postgresql"),
         fact(3, "ledger", "kafka", R.DEPENDS_ON), fact(4, "ledger", "redis"),
         fact(5, "ledger", "python", R.MAINTAINS)]


def test_used_technologies_most_used_first() -> None:
    listed = [e.name for e, _ in stack_of(TECH, FACTS, "technologies")]
    assert listed == ["PostgreSQL", "Kafka", "Redis"]  # Python: no usage fact


def test_a_kind_of_technology_keeps_only_that_kind() -> None:
    assert [e.name for e, _ in stack_of(TECH, FACTS, "databases")] == ["PostgreSQL", "Redis"]


class _Graph:
    """entity_episode_ids / expand_facts over a few facts, as the graph store answers them."""

    def __init__(self, episodes: int, facts: list[Fact]) -> None:
        self.episodes, self.facts = episodes, facts

    def entity_episode_ids(self, group_id: str, entity_id: str) -> list[str]:
        return [f"e{i}" for i in range(self.episodes)]

    def expand_facts(self, group_id: str, seed_ids: list[str], **_: object) -> list[FactHit]:
        return [FactHit(fact=f, hop=0) for f in self.facts
                if f.source_id in seed_ids or f.target_id in seed_ids]


def test_the_company_the_corpus_is_about_has_an_office_or_staff() -> None:
    from knotwork.retrieval.tech_stack import is_home_company

    firm = Entity(id="firm", group_id="g", name="Brindle Health", canonical_name="brindle health",
                  type=EntityType.ORGANIZATION, created_at=T0, updated_at=T0)
    based = fact(9, "firm", "leeds", R.HEADQUARTERED_IN)
    staff = [fact(10, "ana", "firm", R.WORKS_AT), fact(11, "bo", "firm", R.WORKS_AT)]
    invested = fact(12, "firm", "acme", R.INVESTED_IN)
    assert is_home_company(_Graph(1, [based]), "g", firm)  # type: ignore[arg-type]
    assert is_home_company(_Graph(1, staff), "g", firm)  # type: ignore[arg-type]
    assert is_home_company(_Graph(3, []), "g", firm)  # type: ignore[arg-type]
    assert not is_home_company(_Graph(1, [invested, staff[0]]), "g", firm)  # type: ignore[arg-type]


def test_one_database_is_listed_for_a_database_question() -> None:
    from knotwork.retrieval.tech_stack import home_stack

    firm = Entity(id="firm", group_id="g", name="Brindle Health", canonical_name="brindle health",
                  type=EntityType.ORGANIZATION, created_at=T0, updated_at=T0)
    graph = _Graph(3, [fact(1, "billing", "postgresql"), fact(2, "billing", "python")])
    graph.list_entities = lambda group_id: [firm, *TECH.values()]  # type: ignore[attr-defined]

    class Docs:
        def get_chunks(self, ids: list[str]) -> list[object]:
            return []

        def get_documents(self, ids: list[str]) -> list[object]:
            return []

    found = home_stack(graph, Docs(), "g", "Which databases does Brindle Health use?",  # type: ignore[arg-type]
                       [firm], as_of=None)
    assert found is not None and "PostgreSQL" in found.answer and "Python" not in found.answer
    assert home_stack(graph, Docs(), "g", "Which technologies does Brindle Health use?",  # type: ignore[arg-type]
                      [firm], as_of=None) is not None
