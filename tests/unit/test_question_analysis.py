"""Question wording → fact hints, multi-hop decomposition, sentence splitting."""

from __future__ import annotations

import pytest

from knotwork.domain.models import RelationType as R
from knotwork.retrieval.multihop import decompose
from knotwork.retrieval.question import QuestionHints, analyze
from knotwork.retrieval.sentences import split_sentences


@pytest.mark.parametrize(
    ("question", "side", "rtype"),
    [
        ("Who does Priya report to?", "source", R.REPORTS_TO),
        ("Who leads Project Atlas?", "target", R.LEADS),
        ("Who is the manager of Priya Raman?", "source", R.REPORTS_TO),
        ("What is Marcus Webb's employer?", "source", R.WORKS_AT),
        ("Who is the lead of the Platform Team?", "target", R.LEADS),
        ("Which team maintains the Billing Service?", "target", R.MAINTAINS),
        ("Which team is Ines Duarte on?", "source", R.MEMBER_OF),
        ("What squad does Bo Lind work in?", "source", R.MEMBER_OF),
    ],
)
def test_hints_name_the_side_and_type(question: str, side: str, rtype: R) -> None:
    hints = analyze(question)
    assert hints.side == side
    assert rtype in hints.types


def test_a_question_without_relation_words_has_no_type_hint() -> None:
    assert analyze("When is the Atlas launch?").types == frozenset()


def test_relative_clause_becomes_two_questions() -> None:
    plan = decompose("Who is the manager of the person who leads Project Atlas?")
    assert plan is not None
    assert plan.inner == "Who leads Project Atlas?"
    assert plan.template.format("Priya Raman") == "Who is the manager of Priya Raman?"


def test_trailing_verb_stays_with_the_outer_question() -> None:
    plan = decompose("Which team does the person who maintains the Kafka pipeline belong to?")
    assert plan is not None
    assert plan.inner == "Who maintains the Kafka pipeline?"
    assert plan.template.format("Kenji") == "Which team does Kenji belong to?"


def test_working_from_stays_with_the_outer_question() -> None:
    plan = decompose("Which city does the person who runs the Ledger Team work from?")
    assert plan is not None
    assert plan.inner == "Who runs the Ledger Team?"
    assert plan.template.format("Ana Ruiz") == "Which city does Ana Ruiz work from?"


def test_clause_about_a_team_asks_which_team() -> None:
    plan = decompose("Where is the office of the team that maintains the Billing Service?")
    assert plan is not None and plan.inner == "Which team maintains the Billing Service?"


@pytest.mark.parametrize(
    ("question", "inner", "outer"),
    [
        # the outer question keeps its closing words: "based", "part of", "on"
        ("Where is the team that maintains the Invoice Renderer based?",
         "Which team maintains the Invoice Renderer?", "Where is Billing Squad based?"),
        ("Which division is the team that owns the Tax Gateway part of?",
         "Which team owns the Tax Gateway?", "Which division is Billing Squad part of?"),
        ("Which team is the manager of Sanna Virta on?",
         "Who is the manager of Sanna Virta?", "Which team is Billing Squad on?"),
        # a lower-case head noun belongs to the name: "the Security team"
        ("Who does the leader of the Security team report to?",
         "Who is the leader of the Security team?", "Who does Billing Squad report to?"),
    ],
)
def test_closing_words_stay_with_the_outer_question(question: str, inner: str, outer: str) -> None:
    plan = decompose(question)
    assert plan is not None
    assert plan.inner == inner
    assert plan.template.format("Billing Squad") == outer


@pytest.mark.parametrize("question", ["Who leads Project Atlas?", "The person who leads it?",
                                      "Who is the person who?"])
def test_simple_questions_are_not_decomposed(question: str) -> None:
    assert decompose(question) is None


def test_sentences_split_per_line_and_after_final_punctuation() -> None:
    text = "ID: DEC-005; Decision: Adopt PostgreSQL.; Date: 2024\nHello there. Dr. Smith left! Ok"
    assert split_sentences(text) == [
        "ID: DEC-005; Decision: Adopt PostgreSQL.; Date: 2024",
        "Hello there.",
        "Dr. Smith left!",
        "Ok",
    ]


def test_no_text_is_lost_when_splitting() -> None:
    text = "a.b c. D e? F!\n\n  G h.  "
    joined = "".join(split_sentences(text)).replace(" ", "")
    assert joined == text.replace(" ", "").replace("\n", "")


def test_where_does_someone_work_asks_for_a_place_or_an_employer() -> None:
    assert {R.LOCATED_IN, R.WORKS_AT, R.MEMBER_OF} <= analyze("Where does Bob Stone work?").types


@pytest.mark.parametrize("question", ["Where is Jia Lin based?", "Where does Klaus work from?",
                                      "Where is the Payments Team located?",
                                      "Where is the Orders API hosted?"])
def test_where_questions_ask_for_a_place_of_the_named_entity(question: str) -> None:
    hints = analyze(question)
    assert R.LOCATED_IN in hints.types and hints.side == "source"


def test_where_questions_about_events_are_not_place_questions() -> None:
    assert R.LOCATED_IN not in analyze("Where did the Atlas decision get recorded?").types


@pytest.mark.parametrize("question", ["Who is on the Checkout team?", "Who's in Payments?",
                                      "Who are currently part of the Atlas Team?"])
def test_who_is_on_a_team_asks_for_its_members(question: str) -> None:
    assert analyze(question) == QuestionHints("target", frozenset({R.MEMBER_OF}))


def test_who_is_in_charge_is_not_membership() -> None:
    assert R.MEMBER_OF not in analyze("Who is in charge of Project Atlas?").types


@pytest.mark.parametrize(
    ("question", "inner", "outer"),
    [
        # the noun is the clause's object: its subject is named, the bridge is what it points to
        ("Which team owns the system that RouteKit depends on?",
         "Which system does RouteKit depend on?", "Which team owns Billing Squad?"),
        ("Who leads the team that Ines Duarte is on?",
         "Which team is Ines Duarte on?", "Who leads Billing Squad?"),
        ("Who maintains the service that the Checkout API calls?",
         "Which service does the Checkout API call?", "Who maintains Billing Squad?"),
        ("Where is the company that Helix Labs relies on?",
         "Which company does Helix Labs rely on?", "Where is Billing Squad?"),
    ],
)
def test_an_object_clause_asks_what_its_subject_points_to(question: str, inner: str,
                                                          outer: str) -> None:
    plan = decompose(question)
    assert plan is not None
    assert plan.inner == inner
    assert plan.template.format("Billing Squad") == outer


def test_on_call_is_no_membership() -> None:
    hints = analyze("Who is on call for the Billing Service?")
    assert R.MAINTAINS in hints.types and R.MEMBER_OF not in hints.types
