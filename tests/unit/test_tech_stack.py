"""'Which technologies does <company> use?': what the company's systems' usage facts point to."""

from __future__ import annotations

from datetime import UTC, datetime

from knotwork.domain.models import Entity, EntityType, Fact, RelationType
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
