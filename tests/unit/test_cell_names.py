"""Names stated by a table row's cells and by a page's heading (``extraction.cell_names``)."""

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.cell_names import PAGE_KINDS, cell_mentions
from knotwork.ingestion.extraction.table_headers import table_row_relations
from knotwork.ingestion.extraction.types import Mention

P, O, L = EntityType.PERSON, EntityType.ORGANIZATION, EntityType.LOCATION


def _m(text: str, name: str, etype: EntityType, extractor: str = "spacy", nth: int = 0) -> Mention:
    at = -1
    for _ in range(nth + 1):
        at = text.index(name, at + 1)
    return Mention(at, at + len(name), name, etype, 0.6, extractor)


def _facts(text: str, mentions: list[Mention]) -> set[tuple[str, str, str]]:
    found = cell_mentions(text, mentions)
    return {(h.source.text, h.type.value, h.target.text) for h in table_row_relations(text, found)}


def test_a_part_of_a_full_name_under_a_name_column_becomes_the_whole_name() -> None:
    text = "Name: Tomas Quill Arden; Unit: Harbor Team; Reports to: Marta Vasko"
    facts = _facts(text, [_m(text, "Tomas Quill", P, "rule"), _m(text, "Marta Vasko", P)])
    assert ("Tomas Quill Arden", "REPORTS_TO", "Marta Vasko") in facts
    assert ("Tomas Quill Arden", "MEMBER_OF", "Harbor Team") in facts
    assert not any(f[0] == "Tomas Quill" for f in facts)


def test_a_full_name_ner_called_a_place_or_a_company_is_a_person() -> None:
    text = "Name: Ji-na Sorrel; Team: Harbor Team; Reports to: Marta Vasko\n" \
           "Name: Bo-ram Tull; Team: Harbor Team; Reports to: Marta Vasko"
    mentions = [_m(text, "Sorrel", L), _m(text, "Marta Vasko", P), _m(text, "Bo-ram Tull", O),
                _m(text, "Marta Vasko", P, nth=1)]
    facts = _facts(text, mentions)
    assert {("Ji-na Sorrel", "REPORTS_TO", "Marta Vasko"), ("Bo-ram Tull", "REPORTS_TO", "Marta Vasko")} <= facts


def test_a_name_column_holding_a_team_name_or_a_known_company_is_left_alone() -> None:
    text = "Name: Harbor Team; Lead: Marta Vasko"
    team = _m(text, "Harbor Team", O, "rule")
    assert any(m.type is O and m.text == "Harbor Team" for m in cell_mentions(text, [team, _m(text, "Marta Vasko", P)]))
    text = "Name: Quill Arden; Lead: Marta Vasko"
    company = _m(text, "Quill Arden", O, "gazetteer")  # not a guess: kept
    assert company in cell_mentions(text, [company])


def test_a_team_cell_guessed_as_a_person_or_swallowing_its_label_is_a_team() -> None:
    text = "Name: Marta Vasko; Team: Route Planning; Studio: Lisbon\n" \
           "Name: Ondrej Vasko; Team: Night Shift; Studio: Lisbon"
    mentions = [_m(text, "Marta Vasko", P), _m(text, "Route Planning", P), _m(text, "Ondrej Vasko", P),
                _m(text, "Team: Night Shift", O), _m(text, "Lisbon", L), _m(text, "Lisbon", L, nth=1)]
    facts = _facts(text, mentions)
    assert {("Marta Vasko", "MEMBER_OF", "Route Planning"), ("Ondrej Vasko", "MEMBER_OF", "Night Shift")} <= facts
    assert not any(m.text == "Team: Night Shift" for m in cell_mentions(text, mentions))


def test_a_name_guessed_in_a_cell_label_is_dropped() -> None:
    text = "Name: Marta Vasko; Studio: Lisbon; Reports to: Ondrej Vasko"
    mentions = [_m(text, "Marta Vasko", P), _m(text, "Studio", P), _m(text, "Lisbon", L),
                _m(text, "Ondrej Vasko", P)]
    assert "Studio" not in {m.text for m in cell_mentions(text, mentions)}


def test_a_project_page_heading_names_the_project_not_its_kind() -> None:
    text = "# Harbor Rewrite — Project Charter\n\nPerson: Marta Vasko; Role: backend\n"
    mentions = [_m(text, "Harbor Rewrite", P), _m(text, "Project Charter", EntityType.PRODUCT, "rule"),
                _m(text, "Marta Vasko", P)]
    found = cell_mentions(text, mentions)
    names = {(m.text, m.type, m.subtype) for m in found}
    assert ("Harbor Rewrite", EntityType.PRODUCT, "PROJECT") in names
    assert not any(m.text == "Project Charter" for m in found)
    assert ("Marta Vasko", "MEMBER_OF", "Harbor Rewrite") in _facts(text, mentions)


def test_page_kinds_are_named_and_need_the_kind_words() -> None:
    assert {name for name, *_ in PAGE_KINDS} == {"unit_page", "project_page"}
    text = "# Harbor Rewrite — Meeting Notes\n\nPerson: Marta Vasko; Role: backend\n"
    found = cell_mentions(text, [_m(text, "Harbor Rewrite", P), _m(text, "Marta Vasko", P)])
    assert ("Harbor Rewrite", P) in {(m.text, m.type) for m in found}


def test_an_area_row_on_a_unit_page_names_a_part_of_the_unit_but_not_a_role() -> None:
    text = ("# Harbor — Team Page\n\nArea: Route Scoring; Lead: Marta Vasko\n"
            "Area: Executive Producer; Lead: Ondrej Vasko\n")
    mentions = [_m(text, "Harbor", O, "rule"), _m(text, "Marta Vasko", P), _m(text, "Ondrej Vasko", P)]
    facts = _facts(text, mentions)
    assert ("Marta Vasko", "LEADS", "Route Scoring") in facts
    assert ("Route Scoring", "MEMBER_OF", "Harbor") in facts
    assert not any("Executive Producer" in f for f in facts)
    # elsewhere an area is a row's topic, no team
    text = "# Harbor Launch Notes\n\nArea: Route Scoring; Owner: Marta Vasko\n"
    assert "Route Scoring" not in {m.text for m in cell_mentions(text, [_m(text, "Marta Vasko", P)])}



def test_the_team_on_a_unit_page_is_that_unit() -> None:
    text = ("# Harbor — Team Home\n\nWe work closely with the Quay Team.\n"
            "Marta Vasko led the team until May. The team lead is Ondrej.\n")
    mentions = [_m(text, "Quay Team", O, "rule"), _m(text, "Marta Vasko", P),
                Mention(text.index("the team until"), text.index("the team until") + 8, "the team", O,
                        0.6, "coref", "TEAM", refers_to="Quay Team")]
    found = cell_mentions(text, mentions)
    refs = [m for m in found if m.extractor == "coref"]
    assert [(m.text, m.refers_to) for m in refs] == [("the team", "Harbor")]  # not "The team lead"
    # on another kind of page, the coreference found before stays
    other = text.replace("Team Home", "Meeting Notes")
    again = cell_mentions(other, mentions)
    assert [m.refers_to for m in again if m.extractor == "coref"] == ["Quay Team"]
