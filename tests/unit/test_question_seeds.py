"""Which known entities a question names (``retrieval/local.py``: question keys, shadowing)."""

from __future__ import annotations

from datetime import UTC, datetime

from knotwork.domain.models import Entity, EntityType
from knotwork.retrieval.local import question_keys, unshadowed

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
