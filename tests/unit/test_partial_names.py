"""Consolidation of names with part of a name left off or something glued on
(resolution.partial_names), and the classes kept apart."""

from __future__ import annotations

from datetime import UTC, datetime

from knotwork.domain.models import Entity, EntityType
from knotwork.resolution.consolidate import RULES, plan_consolidation
from knotwork.resolution.partial_names import PARTIAL_RULES

_NOW = datetime(2025, 1, 1, tzinfo=UTC)
P, O, PR = EntityType.PERSON, EntityType.ORGANIZATION, EntityType.PRODUCT


def _e(name: str, etype: EntityType = P, aliases: tuple[str, ...] = (), evidence: int = 1) -> Entity:
    return Entity(id=name, group_id="g", name=name, canonical_name=name.lower(), type=etype,
                  aliases=list(aliases), evidence_count=evidence, created_at=_NOW, updated_at=_NOW)


def _groups(*entities: Entity) -> dict[str, set[str]]:
    return {g.target_id: set(g.source_ids) for g in plan_consolidation(entities)}


def test_the_given_names_without_the_surname_join_the_one_person() -> None:
    assert _groups(_e("Rosa Imelda Quant", evidence=3), _e("Rosa Imelda")) == {
        "Rosa Imelda Quant": {"Rosa Imelda"}}
    # two people with those given names: no link
    assert _groups(_e("Rosa Imelda Quant"), _e("Rosa Imelda Farrow"), _e("Rosa Imelda")) == {}


def test_a_name_the_person_is_known_by_with_the_surname_joins_that_person() -> None:
    groups = _groups(_e("Theodora Vesk", aliases=("Teddie",), evidence=4), _e("Teddie Vesk"))
    assert groups == {"Theodora Vesk": {"Teddie Vesk"}}
    # another given name with the same surname is a relative, not a short form
    assert _groups(_e("Theodora Vesk", aliases=("Teddie",)), _e("Marlon Vesk")) == {}


def test_a_lone_given_or_family_name_of_one_person_in_either_name_order() -> None:
    groups = _groups(_e("Seo-rin Baek", aliases=("Baek Seo-rin",), evidence=3), _e("Seorin"),
                     _e("Huu Phan Dat", aliases=("Dat Huu",), evidence=2), _e("Dat"))
    assert groups == {"Seo-rin Baek": {"Seorin"}, "Huu Phan Dat": {"Dat"}}
    # a word two people carry stays apart
    assert _groups(_e("Huu Phan Dat", aliases=("Dat Huu",)), _e("Dat Lindqvist"), _e("Dat")) == {}


def test_a_title_before_a_name_is_dropped() -> None:
    assert _groups(_e("Mireille Fabre", evidence=5), _e("CTO Mireille")) == {
        "Mireille Fabre": {"CTO Mireille"}}


def test_another_entitys_name_glued_before_a_team_name_and_a_context_after_a_name() -> None:
    groups = _groups(_e("Zephyrine", PR, evidence=9), _e("Zephyrine Audio", O),
                     _e("Audio team", O, evidence=4), _e("Odile Brask", aliases=("OB",), evidence=3),
                     _e("Research", O, evidence=2), _e("OB in Research", O))
    assert groups == {"Audio team": {"Zephyrine Audio"}, "Odile Brask": {"OB in Research"}}


def test_a_glued_name_stays_apart_when_the_rest_names_nothing_or_two_things() -> None:
    assert _groups(_e("Zephyrine", PR), _e("Zephyrine Audio", O)) == {}
    groups = _groups(_e("Zephyrine", PR), _e("Zephyrine Audio", O), _e("Audio Lab", O, ("Audio",)),
                     _e("Audio team", O))
    assert not any("Zephyrine Audio" in {t, *s} for t, s in groups.items())


def test_partial_rules_are_named_data_of_the_consolidation_rules() -> None:
    assert set(PARTIAL_RULES) <= set(RULES)
    plan = plan_consolidation([_e("Mireille Fabre"), _e("CTO Mireille")])
    assert plan[0].rules == ["role_prefix"]
