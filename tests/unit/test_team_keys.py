"""A team is one entity whether the text says "Routing", "the Routing team" or "Routing Team"."""

from __future__ import annotations

from datetime import UTC, datetime

from knotwork.domain.models import Entity, EntityType
from knotwork.resolution.exact import entity_keys, resolve
from knotwork.resolution.normalize import normalize_name

ORG, PRODUCT = EntityType.ORGANIZATION, EntityType.PRODUCT


def _stored(name: str, etype: EntityType) -> Entity:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    key = normalize_name(name)
    return Entity(id=key.replace(" ", "-"), group_id="g", name=name, canonical_name=key,
                  type=etype, name_keys=entity_keys(key, [], etype), created_at=now,
                  updated_at=now)


def test_a_team_named_with_and_without_its_team_word_is_one_entity() -> None:
    team = _stored("Routing Team", ORG)
    for said in ("Routing", "Routing team", "routing squad"):
        assert resolve(normalize_name(said), ORG, [team]).entity is team
    bare = _stored("SRE", ORG)
    assert resolve(normalize_name("SRE group"), ORG, [bare]).entity is bare


def test_other_bodies_and_things_named_alike_stay_apart() -> None:
    team = _stored("Platform Team", ORG)
    assert resolve(normalize_name("Platform Guild"), ORG, [team]).entity is None
    system = _stored("Data Platform", PRODUCT)  # the system a team is named after
    assert resolve(normalize_name("Data Platform team"), ORG, [system]).entity is None
    sibling = _stored("Routing Platform Team", ORG)
    assert resolve(normalize_name("Routing Team"), ORG, [sibling]).entity is None


def test_a_company_is_found_by_its_own_word() -> None:
    from knotwork.domain.models import EntityType
    from knotwork.resolution.exact import entity_keys

    assert "brindle" in entity_keys("brindle clinical systems", [], EntityType.ORGANIZATION)
    assert "tallowmere" in entity_keys("tallowmere payments", [], EntityType.ORGANIZATION)
    assert "global" not in entity_keys("global payments", [], EntityType.ORGANIZATION)
    assert "ledger" not in entity_keys("ledger platform", [], EntityType.PRODUCT)
