"""Entity-to-entity consolidation: twins join on strong name evidence, confusables stay apart."""

from __future__ import annotations

from datetime import UTC, datetime

from knotwork.domain.models import Entity, EntityType
from knotwork.resolution.consolidate import RULES, plan_consolidation
from knotwork.resolution.name_forms import folded_keys

_NOW = datetime(2025, 1, 1, tzinfo=UTC)
P, O, L, PR = EntityType.PERSON, EntityType.ORGANIZATION, EntityType.LOCATION, EntityType.PRODUCT


def _e(name: str, etype: EntityType = P, aliases: tuple[str, ...] = (), evidence: int = 1) -> Entity:
    return Entity(id=name, group_id="g", name=name, canonical_name=name.lower(), type=etype,
                  aliases=list(aliases), evidence_count=evidence, created_at=_NOW, updated_at=_NOW)


def _groups(*entities: Entity, words: frozenset[str] = frozenset()) -> dict[str, set[str]]:
    plan = plan_consolidation(entities, lambda w: w in words)
    return {g.target_id: set(g.source_ids) for g in plan}


def test_folded_keys_ignore_accents_spacing_and_german_transliteration() -> None:
    assert folded_keys("Jürgen Groß") & folded_keys("Juergen Gross")
    assert folded_keys("Biz Ops") & folded_keys("BizOps")


def test_initials_with_a_surname_join_the_one_person_with_that_surname() -> None:
    groups = _groups(_e("Henrietta Vossberg", evidence=4), _e("H. Vossberg"),
                     _e("Oswin Tralle"), _e("O. Tralle"))
    assert groups == {"Henrietta Vossberg": {"H. Vossberg"}, "Oswin Tralle": {"O. Tralle"}}


def test_shared_surname_keeps_a_bare_surname_apart_but_initials_decide() -> None:
    groups = _groups(_e("Lotte Brammer"), _e("Ruben Brammer"), _e("Brammer"), _e("R. Brammer"))
    assert groups == {"Ruben Brammer": {"R. Brammer"}}


def test_gender_variant_given_names_are_never_merged() -> None:
    groups = _groups(_e("Gabriel Ostrowski"), _e("Gabriela Ostrowski"), _e("Dan Ferreira"),
                     _e("Dani Ferreira"))
    assert groups == {}


def test_a_typo_in_a_surname_or_a_long_name_joins_its_twin() -> None:
    groups = _groups(_e("Sunniva Halvorsen", evidence=3), _e("Sunniva Halvorson"),
                     _e("Brightmoor Logistics AG", O, ("Brightmoor",)), _e("Brigthmoor", P))
    assert groups == {"Sunniva Halvorsen": {"Sunniva Halvorson"},
                      "Brightmoor Logistics AG": {"Brigthmoor"}}


def test_lone_given_name_and_nickname_go_to_the_unique_person_whatever_their_guessed_type() -> None:
    groups = _groups(_e("Quillon Ashdown"), _e("Quillon", L), _e("Kevin Marwood"), _e("Kev"))
    assert groups == {"Quillon Ashdown": {"Quillon"}, "Kevin Marwood": {"Kev"}}


def test_ambiguous_given_name_stays_apart() -> None:
    assert _groups(_e("Idris Talbot"), _e("Idris Penhale"), _e("Idris")) == {}


def test_company_short_name_legal_form_and_acronym() -> None:
    groups = _groups(_e("Tarnwick Freight GmbH", O), _e("Tarnwick", PR), _e("Tarnwick Freight", P),
                     _e("Quality & Release", O), _e("Q&R", O))
    assert groups == {"Tarnwick Freight GmbH": {"Tarnwick", "Tarnwick Freight"},
                      "Quality & Release": {"Q&R"}}


def test_team_joins_a_department_word_but_not_an_invented_product_or_a_project() -> None:
    groups = _groups(_e("Treasury team", O), _e("Treasury", O), _e("Glimmerfall team", O),
                     _e("Glimmerfall", PR), _e("Project Sorrel", PR), _e("Sorrel team", O),
                     words=frozenset({"treasury"}))
    assert groups == {"Treasury team": {"Treasury"}}


def test_a_project_and_its_bare_name_join() -> None:
    assert _groups(_e("Project Sorrel", PR), _e("Sorrel", O)) == {"Project Sorrel": {"Sorrel"}}


def test_rules_are_named_data() -> None:
    plan = plan_consolidation([_e("Henrietta Vossberg"), _e("H. Vossberg")])
    assert plan[0].rules == ["initials_surname"] and set(plan[0].rules) <= set(RULES)


def test_family_name_first_and_a_given_name_typo_join_their_twin() -> None:
    groups = _groups(_e("Min-seo Yang", evidence=2), _e("Yang Min-seo"),
                     _e("Rosalind Quarry", evidence=2), _e("Rosalnd Quarry"))
    assert groups == {"Min-seo Yang": {"Yang Min-seo"}, "Rosalind Quarry": {"Rosalnd Quarry"}}


def test_first_letters_of_one_given_name_are_its_short_form_when_unique() -> None:
    groups = _groups(_e("Evandra Wolke"), _e("Evan", L), _e("Octavio Brun"), _e("Octavia Lind"),
                     _e("Octa"))
    assert groups == {"Evandra Wolke": {"Evan"}}


def test_a_short_given_name_with_the_surname_joins_the_full_name() -> None:
    groups = _groups(_e("Joanna Marsh", evidence=3), _e("Jo", aliases=("Jo Marsh",)),
                     _e("J. Marsh"))
    assert groups == {"Joanna Marsh": {"Jo", "J. Marsh"}}


def test_a_legal_form_or_team_word_retypes_the_entity_as_an_organisation() -> None:
    from knotwork.resolution.consolidate import retypes

    found = retypes([_e("Harrowgate Print Co"), _e("Billing team", PR), _e("Mira Holt")])
    assert found == {"Harrowgate Print Co": O, "Billing team": O}


def test_short_company_name_site_qualifier_and_hyphenated_given_name() -> None:
    groups = _groups(_e("Fernhill Studios", O), _e("Fernhill", P), _e("Harwick", L),
                     _e("Harwick HQ", P), _e("Min-ji Sohn"), _e("Min-ji", L))
    assert groups == {"Fernhill Studios": {"Fernhill"}, "Harwick": {"Harwick HQ"},
                      "Min-ji Sohn": {"Min-ji"}}


def test_a_lone_pet_form_typed_a_person_joins_the_one_person_whose_given_name_it_shortens() -> None:
    groups = _groups(_e("Hannelore Quist", evidence=2), _e("Hanni"), _e("Randolph Vane", evidence=2),
                     _e("Rando"), _e("Evander Pryce", evidence=2), _e("Ev"), _e("Theobald Crane"))
    assert groups == {"Hannelore Quist": {"Hanni"}, "Randolph Vane": {"Rando"},
                      "Evander Pryce": {"Ev"}}
    plan = plan_consolidation([_e("Evander Pryce", evidence=2), _e("Ev")])
    assert plan[0].rules == ["two_letters"] and set(plan[0].rules) <= set(RULES)


def test_a_pet_form_stays_apart_when_ambiguous_mistyped_a_given_name_or_a_surname() -> None:
    assert _groups(_e("Evander Pryce"), _e("Evelina Stroud"), _e("Ev")) == {}  # two people
    assert _groups(_e("Evander Pryce"), _e("Ev", L)) == {}  # a place, no table names it
    assert _groups(_e("Marion Holt"), _e("Mario")) == {}  # a given name of its own, not a pet form
    assert _groups(_e("Lina Wu"), _e("Liam Stroud"), _e("Li")) == {}  # two people
    assert _groups(_e("Wei Li"), _e("Lisbeth Brand"), _e("Li")) == {}  # a surname of the tenant


def test_initials_of_a_hyphenated_given_name_join_the_one_person_when_no_other_name_has_them() -> None:
    assert _groups(_e("Mei-Jun Tan", evidence=2), _e("MJ", O)) == {"Mei-Jun Tan": {"MJ"}}
    assert _groups(_e("Mei-Jun Tan"), _e("Mark Jones"), _e("MJ", O)) == {}  # his initials too
    assert _groups(_e("Mei-Jun Tan"), _e("Marble Jetty", O), _e("MJ", O)) == {}
    assert _groups(_e("Mei Tan"), _e("MT", O)) == {}  # no hyphenated given name
