"""Entity types from the evidence of all an entity's names and mentions (resolution.retype)."""

from __future__ import annotations

from datetime import UTC, datetime

from knotwork.domain.models import Entity, EntityType
from knotwork.resolution.retype import CUES, decide_types, head_kind, retyped

_NOW = datetime(2025, 1, 1, tzinfo=UTC)
P, O, L, PR, C, EV, T = (EntityType.PERSON, EntityType.ORGANIZATION, EntityType.LOCATION,
                         EntityType.PRODUCT, EntityType.CONCEPT, EntityType.EVENT,
                         EntityType.TECHNOLOGY)


def _e(name: str, etype: EntityType, aliases: tuple[str, ...] = (), subtype: str | None = None
       ) -> Entity:
    return Entity(id=name, group_id="g", name=name, canonical_name=name.lower(), type=etype,
                  subtype=subtype, aliases=list(aliases), created_at=_NOW, updated_at=_NOW)


def _moves(*entities: Entity, extractors: dict[str, dict[str, int]] | None = None,
           words: frozenset[str] = frozenset()) -> dict[str, EntityType]:
    return {k: v[0] for k, v in decide_types(entities, extractors, lambda w: w in words).items()}


def test_every_cue_is_named_data_with_a_weight_and_a_description() -> None:
    assert all(c.weight > 0 and c.describes for c in CUES.values())


def test_the_head_word_of_a_name_states_its_kind() -> None:
    assert head_kind("Brightwater Summit") == ("head_word", EV)
    assert head_kind("Zanbrook Migration") == ("head_word", C)
    assert head_kind("Ledger Ops team") == ("head_word", O)
    assert head_kind("Halvorsen Print Studios") == ("legal_form", O)
    assert head_kind("Project Quillfeather") == ("lead_word", C)
    assert head_kind("Quillfeather") is None


def test_an_event_or_undertaking_the_first_mention_mistyped_is_retyped_by_its_name() -> None:
    moves = _moves(_e("Brightwater Summit", O), _e("Zanbrook Migration", P), _e("Mira Holt", P))
    assert moves == {"Brightwater Summit": EV, "Zanbrook Migration": C}


def test_a_project_is_an_undertaking_and_stays_a_project() -> None:
    project = _e("Project Quillfeather", PR, subtype="PROJECT")
    assert _moves(project) == {"Project Quillfeather": C}
    assert retyped(project, C).subtype == "PROJECT"
    assert retyped(_e("Vantor", L), P).subtype is None


def test_a_team_named_after_a_project_is_an_organisation() -> None:
    # the head word ("team") outweighs the leading word ("Project")
    assert _moves(_e("Project Quillfeather game team", P)) == {"Project Quillfeather game team": O}


def test_a_company_word_in_an_alias_makes_a_two_word_name_an_organisation() -> None:
    assert _moves(_e("Halvorsen Print", P, ("Halvorsen Print Studios",))) == {"Halvorsen Print": O}


def test_names_that_state_different_kinds_state_nothing() -> None:
    assert _moves(_e("Zanbrook Summit", PR, ("Zanbrook Migration",))) == {}


def test_an_acronym_spelled_out_in_common_words_is_a_concept() -> None:
    words = frozenset({"quarterly", "revenue", "target"})
    moved = _moves(_e("QRT", O, ("Quarterly Revenue Target",)), words=words)
    assert moved == {"QRT": C}
    # a spelled-out form with a word that is no common word is a name: no move
    assert _moves(_e("QRT", O, ("Quarterly Revenue Tamsinworks",)), words=words) == {}


def test_a_listed_technology_is_not_made_a_concept_by_its_expansion() -> None:
    words = frozenset({"google", "cloud", "platform"})
    assert _moves(_e("GCP", T, ("Google Cloud Platform", "Google Cloud")), words=words) == {}


def test_a_given_name_or_surname_of_exactly_one_person_is_that_person() -> None:
    people = (_e("Tamsin Okoro-Vale", P), _e("Min-jae Park", P))
    moves = _moves(*people, _e("Okoro", L), _e("Minjae", L), _e("Vantor", L))
    assert moves == {"Okoro": P, "Minjae": P}


def test_a_name_part_two_people_share_moves_nothing() -> None:
    people = (_e("Tamsin Okoro", P), _e("Bram Okoro", P))
    assert _moves(*people, _e("Okoro", L)) == {}


def test_an_organisation_named_like_a_person_stays_an_organisation() -> None:
    assert _moves(_e("Tamsin Okoro", P), _e("Okoro", O)) == {}


def test_a_chat_author_or_user_table_row_is_a_person() -> None:
    moves = _moves(_e("Wren Halloway", L), _e("Dovecote", L),
                   extractors={"Wren Halloway": {"speaker": 2, "spacy": 1}, "Dovecote": {"spacy": 4}})
    assert moves == {"Wren Halloway": P}


def test_an_incident_identifier_is_an_event_a_severity_level_is_not() -> None:
    assert _moves(_e("INC-4417", C), _e("SEV-2", C)) == {"INC-4417": EV}


def test_a_short_twin_of_a_person_does_not_make_their_name_part_ambiguous() -> None:
    people = (_e("Ines Maren Solberg", P), _e("Ines Maren", P))
    assert _moves(*people, _e("Maren", L)) == {"Maren": P}


def test_a_software_shaped_name_is_a_technology_but_a_person_keeps_their_type() -> None:
    moves = _moves(_e("QuarkStore", PR), _e("SKUs", PR), _e("DeMarlo", P), _e("Vexbuild 4.2", O))
    assert moves == {"QuarkStore": T, "Vexbuild 4.2": T}


def test_a_person_named_like_an_organisation_and_not_by_a_given_name_is_its_kin() -> None:
    entities = (_e("Brackwater", O), _e("Brackwater Cloud", P), _e("Mira Holt", P))
    assert _moves(*entities) == {"Brackwater Cloud": O}
    # a chat author is a person whatever their name looks like
    assert _moves(*entities, extractors={"Brackwater Cloud": {"speaker": 1}}) == {}


def test_a_person_written_family_name_first_is_no_organisation_sharing_the_surname() -> None:
    entities = (_e("Okoro", O), _e("Vethra Okoro", P), _e("Okoro Vethra", P))
    assert _moves(*entities) == {}
