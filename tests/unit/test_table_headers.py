"""Table rows: the column header decides the relation between the row's subject and a cell."""

from __future__ import annotations

from knotwork.domain.models import EntityType, RelationType
from knotwork.ingestion.extraction.table_headers import header_rule, table_row_relations
from knotwork.ingestion.extraction.types import Mention

P, O, L = EntityType.PERSON, EntityType.ORGANIZATION, EntityType.LOCATION


def _mentions(text: str, names: list[tuple[str, EntityType, int]]) -> list[Mention]:
    """(name, type, occurrence) → mentions at that occurrence of the name in ``text``."""
    out = []
    for name, etype, nth in names:
        pos = -1
        for _ in range(nth + 1):
            pos = text.index(name, pos + 1)
        out.append(Mention(pos, pos + len(name), name, etype, 0.9, "rule"))
    return sorted(out, key=lambda m: m.start)


def _facts(text: str, names: list[tuple[str, EntityType, int]]) -> set[tuple[str, str, str]]:
    return {(h.source.text, h.type.value, h.target.text)
            for h in table_row_relations(text, _mentions(text, names))}


def test_a_directory_row_relates_its_person_to_each_cell_by_header() -> None:
    text = "Name: Ondrej Vasko; Title: Staff Engineer; Unit: Harbor Team; Reports to: Marta Vasko; Office: Lisbon"
    facts = _facts(text, [("Ondrej Vasko", P, 0), ("Harbor Team", O, 0), ("Marta Vasko", P, 0),
                          ("Lisbon", L, 0)])
    assert facts == {("Ondrej Vasko", "MEMBER_OF", "Harbor Team"),
                     ("Ondrej Vasko", "REPORTS_TO", "Marta Vasko"),
                     ("Ondrej Vasko", "LOCATED_IN", "Lisbon")}


def test_a_lead_column_makes_the_cell_lead_the_row_and_a_parts_column_its_members() -> None:
    text = "Division: Engineering; Head: Marta Vasko; Teams: Harbor Team, Pricing Squad"
    facts = _facts(text, [("Engineering", O, 0), ("Marta Vasko", P, 0), ("Harbor Team", O, 0),
                          ("Pricing Squad", O, 0)])
    assert facts == {("Marta Vasko", "LEADS", "Engineering"),
                     ("Harbor Team", "MEMBER_OF", "Engineering"),
                     ("Pricing Squad", "MEMBER_OF", "Engineering")}


def test_a_numbering_first_column_leaves_the_subject_to_the_next_cell() -> None:
    text = "#: 3; Workstream: Pricing Engine; Owner: Marta Vasko; Status: done"
    facts = _facts(text, [("Pricing Engine", EntityType.PRODUCT, 0), ("Marta Vasko", P, 0)])
    assert facts == {("Marta Vasko", "LEADS", "Pricing Engine")}


def test_the_owner_of_a_decision_or_action_item_row_does_not_lead_it() -> None:
    text = "Decision: Move billing to the new ledger; Owner: Marta Vasko; Status: Decided"
    facts = _facts(text, [("Move billing to the new ledger", EntityType.CONCEPT, 0),
                          ("Marta Vasko", P, 0)])
    assert ("Marta Vasko", "LEADS", "Move billing to the new ledger") not in facts
    # the same column under a system's row names who leads it
    text = "System: Pricing Engine; Owner: Marta Vasko; Tier: 1"
    assert _facts(text, [("Pricing Engine", EntityType.PRODUCT, 0), ("Marta Vasko", P, 0)]) == {
        ("Marta Vasko", "LEADS", "Pricing Engine")}


def test_the_facts_of_a_row_share_the_row_read_from_its_subject() -> None:
    text = "Name: Ondrej Vasko; Title: Staff Engineer; Reports to: Marta Vasko"
    hits = table_row_relations(text, _mentions(text, [("Ondrej Vasko", P, 0), ("Marta Vasko", P, 0)]))
    assert [h.fact for h in hits] == ["Ondrej Vasko — Title: Staff Engineer; Reports to: Marta Vasko"]


def test_a_sentence_in_a_cell_or_with_a_semicolon_states_nothing() -> None:
    text = "Ondrej Vasko joined in May; Marta Vasko moved to Lisbon"
    assert not _facts(text, [("Ondrej Vasko", P, 0), ("Marta Vasko", P, 0), ("Lisbon", L, 0)])
    row = "Name: Ondrej Vasko; Notes: says Marta Vasko will review the Harbor Team plan next week"
    assert not _facts(row, [("Ondrej Vasko", P, 0), ("Marta Vasko", P, 0), ("Harbor Team", O, 0)])


def test_a_header_without_a_rule_or_types_that_do_not_fit_state_nothing() -> None:
    assert header_rule("What it covers") is None
    assert header_rule("Reports to", P, L) is None  # a place is nobody's manager
    text = "Name: Ondrej Vasko; Favourite band: Harbor Team"
    assert not _facts(text, [("Ondrej Vasko", P, 0), ("Harbor Team", O, 0)])


def test_a_parenthesis_after_a_value_is_about_the_value() -> None:
    text = "Team: Harbor Team; Lead: Marta Vasko (backup: Ondrej Vasko)"
    facts = _facts(text, [("Harbor Team", O, 0), ("Marta Vasko", P, 0), ("Ondrej Vasko", P, 0)])
    assert facts == {("Marta Vasko", "LEADS", "Harbor Team")}
    assert RelationType.LEADS.value in {f[1] for f in facts}


def test_cells_under_team_and_place_headers_name_teams_and_places() -> None:
    from knotwork.ingestion.extraction.cell_names import cell_mentions

    text = "Name: Ondrej Vasko; Unit: Harbor Team; Studio: Lisbon"
    guessed_place = Mention(text.index("Lisbon"), text.index("Lisbon") + 6, "Lisbon", P, 0.6, "spacy")
    found = cell_mentions(text, [guessed_place])  # NER found only "Lisbon", as a person
    assert {(m.text, m.type) for m in found} == {("Ondrej Vasko", P), ("Harbor Team", O), ("Lisbon", L)}
    facts = {(h.source.text, h.type.value, h.target.text) for h in table_row_relations(text, found)}
    assert facts == {("Ondrej Vasko", "MEMBER_OF", "Harbor Team"), ("Ondrej Vasko", "LOCATED_IN", "Lisbon")}


def test_a_row_without_a_named_subject_gets_no_invented_names() -> None:
    from knotwork.ingestion.extraction.cell_names import cell_mentions

    text = "Status: open; Team: Harbor Team"
    assert cell_mentions(text, []) == []


def test_a_roster_row_on_a_team_page_is_a_member_of_the_team() -> None:
    text = "# Harbor Team — Team Home\n\nName: Ondrej Vasko; Role: Staff Engineer; Location: Lisbon"
    facts = _facts(text, [("Harbor Team", O, 0), ("Ondrej Vasko", P, 0), ("Lisbon", L, 0)])
    assert facts == {("Ondrej Vasko", "MEMBER_OF", "Harbor Team"),
                     ("Ondrej Vasko", "LOCATED_IN", "Lisbon")}


def test_a_row_naming_its_own_unit_is_not_read_against_the_page() -> None:
    text = "# Staff Directory of Quayside\n\nName: Ondrej Vasko; Unit: Pricing Squad"
    facts = _facts(text, [("Quayside", O, 0), ("Ondrej Vasko", P, 0), ("Pricing Squad", O, 0)])
    assert facts == {("Ondrej Vasko", "MEMBER_OF", "Pricing Squad")}


def test_a_unit_row_on_a_division_page_is_one_of_its_parts() -> None:
    text = "# Engineering Division\n\nTeam: Harbor Team; Lead: Marta Vasko"
    facts = _facts(text, [("Engineering Division", O, 0), ("Harbor Team", O, 0), ("Marta Vasko", P, 0)])
    assert facts == {("Harbor Team", "MEMBER_OF", "Engineering Division"),
                     ("Marta Vasko", "LEADS", "Harbor Team")}


def test_a_unit_column_opening_a_row_and_a_unit_page_heading_name_teams() -> None:
    from knotwork.ingestion.extraction.cell_names import cell_mentions
    text = "# Harbor — Team Page\n\nDivision: Engineering; Head: Marta Vasko; Teams: Harbor, Pricing"
    marta = _mentions(text, [("Marta Vasko", P, 0)])
    found = {(m.text, m.type, m.subtype) for m in cell_mentions(text, marta)}
    assert {("Harbor", O, "TEAM"), ("Engineering", O, "TEAM"), ("Pricing", O, "TEAM")} <= found
    # a row of values without a unit or person column invents nothing
    assert cell_mentions("Phase: Beta; When: June", []) == []


def test_a_squad_manager_column_manages_the_squad() -> None:
    text = "Squad: Checkout; Manager: Idris Okafor"
    assert _facts(text, [("Checkout", O, 0), ("Idris Okafor", P, 0)]) == {
        ("Idris Okafor", "MANAGES", "Checkout")}


def test_a_title_heading_the_row_unit_also_leads_it() -> None:
    text = ("Name: Ondrej Vasko; Title: Head of Harbor; Unit: Harbor; Office: Lisbon\n"
            "Name: Marta Vasko; Title: Pricing Lead; Unit: Pricing; Office: Lisbon\n"
            "Name: Ivo Brandt; Title: Staff Engineer, Billing lead; Unit: Harbor; Office: Lisbon\n"
            "Name: Lea Brandt; Title: Settlement Lead; Unit: Pricing; Office: Lisbon")
    facts = _facts(text, [("Ondrej Vasko", P, 0), ("Harbor", O, 1), ("Marta Vasko", P, 0), ("Pricing", O, 1),
                          ("Ivo Brandt", P, 0), ("Harbor", O, 2), ("Lea Brandt", P, 0), ("Pricing", O, 2),
                          ("Lisbon", L, 0)])
    assert ("Ondrej Vasko", "LEADS", "Harbor") in facts
    assert ("Ondrej Vasko", "MEMBER_OF", "Harbor") in facts
    assert ("Marta Vasko", "LEADS", "Pricing") in facts
    # a lead of something else, or a title that names no unit of the row: a member only
    assert ("Ivo Brandt", "LEADS", "Harbor") not in facts
    assert ("Lea Brandt", "LEADS", "Pricing") not in facts
    assert ("Lea Brandt", "MEMBER_OF", "Pricing") in facts


def test_a_function_manager_title_is_no_head_of_the_unit() -> None:
    text = ("Name: Ondrej Vasko; Title: Pricing Manager; Unit: Pricing; Office: Lisbon\n"
            "Name: Marta Vasko; Title: Engineering Manager, Pricing; Unit: Pricing; Office: Lisbon")
    facts = _facts(text, [("Ondrej Vasko", P, 0), ("Pricing", O, 1), ("Marta Vasko", P, 0), ("Pricing", O, 3),
                          ("Lisbon", L, 0)])
    assert ("Ondrej Vasko", "LEADS", "Pricing") not in facts
    assert ("Marta Vasko", "LEADS", "Pricing") in facts
