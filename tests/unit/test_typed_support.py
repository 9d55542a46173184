"""Abstaining when a question names a relation nothing states about the named entity."""

from __future__ import annotations

from datetime import UTC, datetime

from knotwork.domain.models import Entity, EntityType, Fact
from knotwork.domain.models import RelationType as R
from knotwork.retrieval.typed_support import unsupported_relation

NOW = datetime(2025, 6, 1, tzinfo=UTC)
ROUTING = Entity(created_at=NOW, updated_at=NOW, id="t", group_id="g", name="Routing team", canonical_name="routing team",
                 type=EntityType.ORGANIZATION)
MOVED = Fact(created_at=NOW, id="f1", group_id="g", source_id="p", target_id="t", type=R.MEMBER_OF,
             fact="Deepak Iyer moved to the Routing team in May.")
LEADS = Fact(created_at=NOW, id="f2", group_id="g", source_id="q", target_id="t", type=R.MANAGES,
             fact="Ana Ruiz manages the Routing team.")


def test_a_member_is_no_answer_to_who_leads() -> None:
    why = unsupported_relation("Who leads the Routing team?", {"t": ROUTING}, [MOVED],
                               [MOVED.fact])
    assert why == "no leads fact about Routing team"


def test_a_fact_of_the_family_or_a_sentence_stating_it_supports() -> None:
    assert unsupported_relation("Who leads the Routing team?", {"t": ROUTING},
                                [MOVED, LEADS], [MOVED.fact]) is None
    stated = "Bo Lind is the tech lead of the Routing team."  # extraction typed it loosely
    assert unsupported_relation("Who leads the Routing team?", {"t": ROUTING}, [MOVED],
                                [MOVED.fact, stated]) is None
    elsewhere = "Bo Lind leads the Search team."  # a lead, of something else
    assert unsupported_relation("Who leads the Routing team?", {"t": ROUTING}, [MOVED],
                                [elsewhere]) is not None


def test_only_who_where_which_questions_are_checked() -> None:
    for question in ("When did the Routing team migrate to Kafka?",
                     "What happened to the Routing team?"):
        assert unsupported_relation(question, {"t": ROUTING}, [MOVED], [MOVED.fact]) is None
    assert unsupported_relation("Who leads the Routing team?", {}, [], ["x"]) is None


def test_dated_and_usage_questions_are_not_checked() -> None:
    tessellate = ROUTING.model_copy(update={"name": "Tessellate Labs"})
    row = "Vendor: Lumenwatch; From: before 2023; Until: 2023-10-13"
    assert unsupported_relation("Which vendor did Tessellate Labs use in May 2023?",
                                {"t": tessellate}, [], [row]) is None
    assert unsupported_relation("Which vendor does Tessellate Labs use?",
                                {"t": tessellate}, [], [row]) is None
    assert unsupported_relation("Who led the Routing team in May 2024?", {"t": ROUTING},
                                [MOVED], [MOVED.fact]) is None


def test_a_title_question_needs_evidence_stating_the_title() -> None:
    from knotwork.retrieval.typed_support import unsupported_title

    about = ["Meridian Freightworks is a mid-sized freight forwarding company."]
    assert unsupported_title("Who is the CEO of Meridian Freightworks?", about) is not None
    assert unsupported_title("Who is the CTO of Meridian?",
                             ["Engineering is run by Olufemi Adeyemi (CTO)."]) is None
    assert unsupported_title("Who is the CEO?", ["Dana is our chief executive officer."]) is None
    assert unsupported_title("Who leads Atlas?", about) is None  # no title asked


def test_leading_a_team_is_no_answer_to_whom_a_person_reports() -> None:
    ines = ROUTING.model_copy(update={"id": "p", "name": "Ines Alba", "type": EntityType.PERSON})
    leads = Fact(created_at=NOW, id="f3", group_id="g", source_id="p", target_id="t",
                 type=R.LEADS, fact="Ines Alba leads the Routing team.")
    why = unsupported_relation("Who does Ines Alba report to?", {"p": ines}, [leads], [leads.fact])
    assert why is not None and "reports_to" in why
    manager = Fact(created_at=NOW, id="f4", group_id="g", source_id="p", target_id="q",
                   type=R.REPORTS_TO, fact="Ines Alba reports to Bo Lind.")
    assert unsupported_relation("Who does Ines Alba report to?", {"p": ines}, [leads, manager],
                                [manager.fact]) is None


def test_a_heading_names_what_a_labelled_line_is_about() -> None:
    incident = ROUTING.model_copy(update={"id": "i", "name": "INC-2207",
                                          "type": EntityType.CONCEPT})
    line = "Incident lead: Ola Berg."
    assert unsupported_relation("Who was the incident lead for INC-2207?", {"i": incident}, [],
                                [line]) is not None
    assert unsupported_relation("Who was the incident lead for INC-2207?", {"i": incident}, [],
                                [f"Incident INC-2207: checkout outage {line}"]) is None


def test_where_a_system_is_hosted_is_answered_by_its_cloud() -> None:
    portal = ROUTING.model_copy(update={"id": "s", "name": "Bookwell", "type": EntityType.PRODUCT})
    hosted = Fact(created_at=NOW, id="f5", group_id="g", source_id="s", target_id="az",
                  type=R.USES, fact="Since May, Bookwell is hosted on Microsoft Azure.")
    assert unsupported_relation("Where is Bookwell hosted?", {"s": portal}, [hosted],
                                [hosted.fact]) is None
    assert unsupported_relation("Where is Bookwell based?", {"s": portal}, [hosted],
                                ["Bookwell has 40 users."]) is not None


def test_what_a_team_holds_says_nothing_of_who_leads_it() -> None:
    owns = Fact(created_at=NOW, id="f6", group_id="g", source_id="t", target_id="svc",
                type=R.OWNS, fact="The Routing team owned the Geo Service until May.")
    seen = ["The Routing team moved to Oslo.", "The Geo Service was previously owned by the Routing team."]
    assert unsupported_relation("Who leads the Routing team?", {"t": ROUTING}, [owns],
                                seen) is not None
    assert unsupported_relation("Who leads the Routing team?", {"t": ROUTING}, [owns, LEADS],
                                seen) is None


def test_a_title_of_the_corpus_company_does_not_answer_for_an_investor() -> None:
    from knotwork.retrieval.typed_support import unsupported_title

    fund = ROUTING.model_copy(update={"id": "f", "name": "Larkfield Capital"})
    home = ROUTING.model_copy(update={"id": "h", "name": "Brindle Health"})
    evidence = ["Ines Alba heads Risk and reports to the CEO, Bo Lind.",
                "Brindle Health closed a round led by Larkfield Capital."]
    widely = {"h"}
    assert unsupported_title("Who is the CEO of Larkfield Capital?", evidence, [fund],
                             lambda e: e.id in widely) is not None
    assert unsupported_title("Who is the CEO of Brindle Health?", evidence, [home],
                             lambda e: e.id in widely) is None
    stated = [*evidence, "Larkfield Capital's CEO is Ada Moss."]
    assert unsupported_title("Who is the CEO of Larkfield Capital?", stated, [fund],
                             lambda e: e.id in widely) is None


def test_a_sentence_where_the_team_is_the_holder_says_nothing_of_its_lead() -> None:
    assert unsupported_relation("Who leads the Routing team?", {"t": ROUTING}, [],
                                ["The Routing team owns the Geo Service."]) is not None
    assert unsupported_relation("Who leads the Routing team?", {"t": ROUTING}, [],
                                ["The Routing team is led by Bo Lind."]) is None
