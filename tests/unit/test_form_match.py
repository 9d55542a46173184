"""Name-form rules: the keys that find a twin, the short forms that may join, and the
confusable protections (gender-variant given names, one surname with two given names)."""

from __future__ import annotations

from datetime import UTC, datetime

from knotwork.domain.models import Entity, EntityType
from knotwork.resolution.blocking import blocking_keys
from knotwork.resolution.consolidate import RULES, plan_consolidation
from knotwork.resolution.form_match import FORM_RULES, abbreviates, form_keys, same_form
from knotwork.resolution.person_forms import gender_variant, is_short_form, surname_conflict
from knotwork.resolution.resolver import DecisionKind, Resolver
from knotwork.resolution.scoring import CandidateRecord, MentionQuery, name_similarity, rank

P, O = EntityType.PERSON, EntityType.ORGANIZATION
_NOW = datetime(2025, 1, 1, tzinfo=UTC)


def _e(name: str, etype: EntityType = P) -> Entity:
    return Entity(id=name, group_id="g", name=name, canonical_name=name.lower(), type=etype,
                  created_at=_NOW, updated_at=_NOW)


def _groups(*entities: Entity) -> dict[str, set[str]]:
    return {g.target_id: set(g.source_ids) for g in plan_consolidation(entities)}


def _shared(a: str, b: str, etype: EntityType | None) -> set[str]:
    return set(form_keys(a, etype)) & set(form_keys(b, etype))


def test_rules_are_named_data_with_distinct_prefixes() -> None:
    assert len({r.prefix for r in FORM_RULES}) == len(FORM_RULES)
    assert all(r.name and r.description and r.types for r in FORM_RULES)


def test_spacing_punctuation_and_accents_give_one_compact_form() -> None:
    assert same_form("Dev Ops", "DevOps")
    assert same_form("ISO27001", "ISO 27001")
    assert same_form("Jürgen Wälti", "Juergen Waelti")
    assert not same_form("Tier 2", "Tier 3")


def test_a_legal_form_or_project_qualifier_shares_the_qualifier_key() -> None:
    assert "fq:brightmoor" in _shared("Brightmoor Ltd", "Project Brightmoor", O)


def test_an_acronym_shares_a_key_with_the_initials_of_its_name() -> None:
    assert "fa:qhl" in _shared("QHL", "Quayside Harbour Logistics GmbH", O)
    assert abbreviates("Q&O", "Quality & Outreach")
    assert abbreviates("SecOps", "Security Operations team")
    assert not abbreviates("SecOps", "Sales Operations")


def test_person_forms_share_keys_with_the_full_name() -> None:
    assert "fi:r lindqvist" in _shared("R. Lindqvist", "Rosalind Lindqvist", None)
    assert "fs:rosalind l" in _shared("Rosalind L", "Rosalind Lindqvist", None)
    assert "fp:ros" in _shared("Ros", "Rosalind Lindqvist", None)
    assert "fn:robert" in _shared("Bob", "Robert", None)


def test_form_keys_are_blocking_keys() -> None:
    keys = blocking_keys(["Rosalind Lindqvist"], P)
    assert "fi:r lindqvist" in keys and "fg:rosalind" in keys


def test_short_forms_of_a_full_name() -> None:
    assert is_short_form("Rosalind", "Rosalind Lindqvist")
    assert is_short_form("R. Lindqvist", "Rosalind Lindqvist")
    assert is_short_form("Ros L", "Rosalind Lindqvist")
    assert is_short_form("Bob Lindqvist", "Robert Lindqvist")
    assert not is_short_form("Lindqvist", "Rosalind Lindqvist")  # a lone surname is not one
    assert not is_short_form("Tobias", "Rosalind Lindqvist")


def test_a_cut_off_name_ending_is_no_short_form() -> None:
    # "Dani" / "Daniel": what is left is a name ending, so "Dani" is another name
    assert not is_short_form("Dani", "Daniel Oakes")
    assert name_similarity("Dani", "Daniel Oakes", True, P) < 0.85


def test_gender_variant_given_names_are_different_people() -> None:
    assert gender_variant("Gabriel Moss", "Gabriela Moss")
    assert gender_variant("Mario", "Maria")
    assert not gender_variant("Jonathan Moss", "Jon Moss")
    assert not _groups(_e("Gabriel Moss"), _e("Gabriela Moss"))


def test_one_surname_with_different_given_names_is_a_conflict() -> None:
    assert surname_conflict("Ilse Harrow", "Petra Harrow")
    assert not surname_conflict("Ilse Harrow", "Ilse Harow")
    assert not _groups(_e("Ilse Harrow"), _e("Petra Harrow"))


def test_short_forms_score_at_the_short_form_level_and_ties_stay_new() -> None:
    assert name_similarity("Ros L", "Rosalind Lindqvist", True, P) >= 0.9
    assert name_similarity("Q&O", "Quality & Outreach", False, O) >= 0.9
    one = [CandidateRecord("a", "Rosalind Lindqvist", P)]
    two = [*one, CandidateRecord("b", "Rosalind Lowe", P)]
    cfg = Resolver().config
    assert Resolver().decide(rank(cfg, MentionQuery("Rosalind L"), one)).entity_id == "a"
    tied = Resolver().decide(rank(cfg, MentionQuery("Rosalind L"), two))
    assert tied.kind is DecisionKind.NEW  # two people the short form fits: no guess


def test_an_exact_name_wins_a_tie_with_its_qualified_sibling() -> None:
    cands = [CandidateRecord("x", "Harbourline", O), CandidateRecord("y", "Harbourline Ltd", O)]
    resolver = Resolver()
    d = resolver.decide(rank(resolver.config, MentionQuery("Harbourline", O, 1.0), cands))
    assert d.entity_id == "x"


def test_family_name_first_with_a_middle_name_joins_one_person() -> None:
    assert "family_first" in RULES
    assert _groups(_e("Linh Vo"), _e("Vo Thi Linh")) == {"Vo Thi Linh": {"Linh Vo"}} or \
        _groups(_e("Linh Vo"), _e("Vo Thi Linh")) == {"Linh Vo": {"Vo Thi Linh"}}
    # two different people of that family stay apart
    assert not _groups(_e("Linh Vo"), _e("Vo Thi Mai"))


def test_a_camel_case_clipping_joins_the_one_name_it_clips() -> None:
    groups = _groups(_e("SecOps", O), _e("Security Operations team", O))
    assert groups == {"Security Operations team": {"SecOps"}}
    # two names it could clip: no join
    assert not _groups(_e("SecOps", O), _e("Security Operations", O), _e("Second Opinions", O))


def test_a_candidates_lone_alias_is_no_short_form_bridge() -> None:
    # the candidate's alias "Ros" must not make every "Ros..." full name this candidate
    cand = [CandidateRecord("a", "Rosalind Lindqvist", P, aliases=("Ros",))]
    cfg = Resolver().config
    scored = rank(cfg, MentionQuery("Rosamund Pike", P, 1.0), cand)
    assert scored[0].name_score < 0.85
