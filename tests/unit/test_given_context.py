"""A lone given name read in its document's context (resolution.given_context)."""

from __future__ import annotations

from datetime import UTC, datetime

from knotwork.domain.ids import stable_id
from knotwork.domain.models import Entity, EntityType
from knotwork.resolution.exact import entity_keys, lookup_keys
from knotwork.resolution.given_context import (
    IN_CONTEXT_CONFIDENCE,
    UNIQUE_IN_TENANT_CONFIDENCE,
    is_lone_given_name,
    pick_person,
)
from knotwork.resolution.normalize import normalize_name

T = datetime(2025, 1, 1, tzinfo=UTC)
P = EntityType.PERSON


def person(name: str, etype: EntityType = P, aliases: tuple[str, ...] = ()) -> Entity:
    key = normalize_name(name)
    return Entity(id=stable_id("g", "entity", key), group_id="g", name=name, canonical_name=key,
                  type=etype, aliases=list(aliases),
                  name_keys=entity_keys(key, [normalize_name(a) for a in aliases], etype),
                  created_at=T, updated_at=T)


def test_only_one_word_person_names_count() -> None:
    assert is_lone_given_name("diana", P)
    assert not is_lone_given_name("diana rao", P)
    assert not is_lone_given_name("atlas", EntityType.PRODUCT)
    assert not is_lone_given_name("d", P)


def test_the_person_named_in_the_document_wins_over_a_namesake() -> None:
    rao, park = person("Diana Rao"), person("Diana Park")
    pick = pick_person("diana", [rao, park], {"diana park", "tom becker"})
    assert pick is not None and pick.entity.id == park.id
    assert pick.confidence == IN_CONTEXT_CONFIDENCE


def test_context_matches_an_alias_of_the_person() -> None:
    rao, park = person("Diana Rao"), person("Diana Park", aliases=("Diana Park-Lee",))
    pick = pick_person("diana", [rao, park], {"diana park lee"})
    assert pick is not None and pick.entity.id == park.id


def test_namesakes_and_no_context_give_no_pick() -> None:
    assert pick_person("diana", [person("Diana Rao"), person("Diana Park")], set()) is None
    # both in context: still no guess
    assert pick_person("diana", [person("Diana Rao"), person("Diana Park")],
                       {"diana rao", "diana park"}) is None


def test_the_only_person_with_the_name_is_picked_with_less_confidence() -> None:
    rao = person("Diana Rao")
    pick = pick_person("diana", [rao, person("Tom Becker")], set())
    assert pick is not None and pick.entity.id == rao.id
    assert pick.confidence == UNIQUE_IN_TENANT_CONFIDENCE


def test_a_given_name_only_entity_is_no_candidate() -> None:
    rao = person("Diana Rao")
    pick = pick_person("diana", [rao, person("Diana", P)], {"tom becker"})
    assert pick is not None and pick.entity.id == rao.id  # a given-name-only entity is no candidate


def test_nicknames_reach_the_formal_name() -> None:
    rebecca = person("Rebecca Larsen")
    pick = pick_person("becky", [rebecca], {"rebecca larsen"})
    assert pick is not None and pick.entity.id == rebecca.id
    assert "first:rebecca" in lookup_keys("becky", P)  # so blocking fetches the candidate


def test_organisations_are_never_picked() -> None:
    assert pick_person("diana", [person("Diana Labs Inc", EntityType.ORGANIZATION)], set()) is None
