"""Which known entities a question names (``retrieval/local.py``: question keys, shadowing)."""

from __future__ import annotations

from datetime import UTC, datetime

from knotwork.domain.models import Entity, EntityType
from knotwork.retrieval.local import question_keys
from knotwork.retrieval.question import unshadowed

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def person(name: str) -> Entity:
    key = name.lower()
    return Entity(id=key, group_id="g", name=name, canonical_name=key, type=EntityType.PERSON,
                  name_keys=[key, f"first:{key.split()[0]}"], created_at=NOW, updated_at=NOW)


def test_a_full_name_in_the_question_is_not_also_every_namesake() -> None:
    colombo, kang = person("Jasmine Colombo"), person("Jasmine Kang")
    keys = question_keys("Who is the manager of Jasmine Colombo?")
    assert [e.name for e in unshadowed([colombo, kang], keys)] == ["Jasmine Colombo"]


def test_a_lone_given_name_still_names_its_people() -> None:
    colombo, kang = person("Jasmine Colombo"), person("Jasmine Kang")
    keys = question_keys("Who does Jasmine report to?")
    assert {e.name for e in unshadowed([colombo, kang], keys)} == {"Jasmine Colombo", "Jasmine Kang"}
    # and beside another person's full name too
    keys = question_keys("Does Jasmine work with Omar Haddad?")
    assert {e.name for e in unshadowed([kang, person("Omar Haddad")], keys)} == {"Jasmine Kang", "Omar Haddad"}


def test_the_kind_of_entity_that_answers() -> None:
    from knotwork.retrieval.question import answer_kind

    team = answer_kind("Which team was Tariq Tran on in October 2023?")
    assert team is not None
    assert team.fits(EntityType.ORGANIZATION, "Fraud API Team")
    assert team.fits(EntityType.ORGANIZATION, "Billing Squad")
    assert not team.fits(EntityType.ORGANIZATION, "Enterprise Division")
    assert not team.fits(EntityType.LOCATION, "Singapore")
    division = answer_kind("Which division was the Risk Team part of in April 2023?")
    assert division is not None and division.fits(EntityType.ORGANIZATION, "Enterprise Division")
    assert not division.fits(EntityType.ORGANIZATION, "Risk Team")
    where = answer_kind("Where is the Billing Squad based?")
    assert where is not None and where.fits(EntityType.LOCATION, "Lisbon")
    vendor = answer_kind("Which observability vendor did Tessellate Labs use in May 2023?")
    assert vendor is not None and vendor.fits(EntityType.ORGANIZATION, "Lumenwatch")
    assert answer_kind("How many people are on the Ads Team?") is None
