"""Resolving a mention that is written differently from the entity it names: a hyphen left out
of a given name, a doubled letter written once, a nickname table's short form, "Team X" for
"X team", a component's kebab-case name; and the merges that must not happen (another family
sharing a given name or a lone alias, gender-variant given names)."""

from __future__ import annotations

import pytest

from knotwork.domain.models import EntityType
from knotwork.resolution.exact import team_keys
from knotwork.resolution.form_match import service_core
from knotwork.resolution.names import given_similarity
from knotwork.resolution.resolver import DecisionKind, MemoryCandidates, Resolver
from knotwork.resolution.scoring import (
    CandidateRecord,
    MentionQuery,
    identity_conflict,
    surname_disagrees,
)

P = EntityType.PERSON
ORG = EntityType.ORGANIZATION
PROD = EntityType.PRODUCT


def _store(*records: tuple[str, str, EntityType, tuple[str, ...]]) -> MemoryCandidates:
    store = MemoryCandidates()
    for rid, name, etype, aliases in records:
        store.add(CandidateRecord(id=rid, name=name, type=etype, aliases=aliases))
    return store


def _resolve(mention: str, store: MemoryCandidates, etype: EntityType | None = None) -> str | None:
    query = MentionQuery(mention, etype, type_confidence=1.0 if etype else 0.0)
    decision = Resolver().resolve(query, [store])
    return None if decision.kind is DecisionKind.NEW else decision.entity_id


@pytest.mark.parametrize(("a", "b"), [("isabele", "isabelle"), ("annette", "anette")])
def test_a_doubled_letter_written_once_is_a_typo(a: str, b: str) -> None:
    assert (given_similarity(a, b) or 0.0) >= 0.88


@pytest.mark.parametrize(
    ("a", "b"), [("gabriel", "gabriela"), ("ana", "anna"), ("daniel", "daniele")]
)
def test_name_endings_and_short_names_stay_identity_bearing(a: str, b: str) -> None:
    assert given_similarity(a, b) is None


def test_a_given_name_with_or_without_its_hyphen_is_one_name() -> None:
    assert not identity_conflict("Min-ji Park", "Minji Park")
    assert identity_conflict("Gabriel Park", "Gabriela Park")


def test_surname_disagreement() -> None:
    assert surname_disagrees(["Alex Varga"], ["Alejandro Moreno", "Alex"])
    assert not surname_disagrees(["Alex Moreno"], ["Alejandro Moreno", "Alex"])
    assert not surname_disagrees(["Moreno Alejandro"], ["Alejandro Moreno"])
    assert not surname_disagrees(["Alex"], ["Alejandro Moreno"])


def test_an_exact_alias_wins_over_a_conflicting_other_alias() -> None:
    store = _store(("p", "Park Min-ji", P, ("Min-ji Park", "Minji Park")))
    assert _resolve("Min-ji Park", store) == "p"
    assert _resolve("Minji Park", store) == "p"


def test_a_hyphen_left_out_of_a_given_name_resolves() -> None:
    store = _store(("p", "Seo-yeon Han", P, ()), ("q", "Joon Han", P, ()))
    assert _resolve("Seoyeon Han", store) == "p"


def test_a_doubled_letter_typo_resolves_but_not_a_gender_variant() -> None:
    store = _store(("p", "Isabelle Marchand", P, ()), ("q", "Gabriel Marchand", P, ()))
    assert _resolve("Isabele Marchand", store) == "p"
    assert _resolve("Gabriela Marchand", store) is None


def test_a_lone_alias_does_not_pull_in_another_family() -> None:
    store = _store(("p", "Alejandro Moreno", P, ("Alex", "Alex Moreno")))
    assert _resolve("Alex Varga", store) is None
    assert _resolve("Alex Moreno", store) == "p"


def test_a_nickname_with_the_surname_resolves_to_the_one_person() -> None:
    store = _store(("p", "Johanna Weber", P, ()), ("q", "Markus Weber", P, ()))
    assert _resolve("Jo Weber", store) == "p"


def test_team_word_before_or_after_the_name() -> None:
    assert team_keys("team falcon") == team_keys("falcon team") == ["team:falcon"]
    assert team_keys("team") == []
    store = _store(("t", "Falcon team", ORG, ()), ("x", "Project Falcon", EntityType.CONCEPT, ()))
    assert _resolve("Team Falcon", store) == "t"


@pytest.mark.parametrize(
    ("name", "core"),
    [
        ("billing-svc", "billing"),
        ("billing-db", "billing"),
        ("fraud-scorer", "fraud"),
        ("billing", None),
        ("Billing-Svc", None),
        ("ab-svc", None),
        ("billing-export", None),
    ],
)
def test_service_core(name: str, core: str | None) -> None:
    assert service_core(name) == core


def test_a_component_name_resolves_to_its_product() -> None:
    store = _store(("b", "Billing", PROD, ()), ("r", "Billing reports", PROD, ()))
    assert _resolve("billing-svc", store) == "b"
    assert _resolve("billing-export", store) is None
