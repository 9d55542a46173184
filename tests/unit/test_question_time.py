"""The time a question states becomes its as_of; a wrong surname is someone unknown."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from knotwork.retrieval.question import is_question_phrase, wrong_surnames
from knotwork.retrieval.temporal_question import question_time, without_time

NOW = datetime(2026, 11, 22, tzinfo=UTC)


@pytest.mark.parametrize(("question", "day", "anchor"), [
    ("Who led the Loyalty Team in August 2023?", "2023-08-16", "middle"),
    ("Which vendor did Acme use in July 2023?", "2023-07-16", "middle"),
    ("Who led X in Q3 2023?", "2023-09-30", "end"),
    ("What changed in the third quarter of 2024?", "2024-09-30", "end"),
    ("Which incidents did we have in 2023?", "2023-12-31", "end"),
    ("Who led X in August 2023 according to the wiki?", "2023-08-16", "middle"),
    ("Who led X as of March?", "2026-03-31", "end"),  # the latest March before now
    ("Who led X as of December?", "2025-12-31", "end"),
    ("Who led X before March 2024?", "2024-02-29", "before"),
    ("Where was X based on 2023-04-07?", "2023-04-07", "middle"),
    ("Who led X on 3 September 2023?", "2023-09-03", "middle"),
    ("Who led X on September 3, 2023?", "2023-09-03", "middle"),
    ("Who led X last year?", "2025-07-02", "middle"),
    ("Who led X last month?", "2026-10-16", "middle"),
    # a dated event of the subject dates the question
    ("Who ran the platform at the May 2024 cutover?", "2024-05-16", "middle"),
    ("Who owned billing during the Q2 2024 audit?", "2024-06-30", "end"),
    ("Who was on call at the 4 June 2024 outage?", "2024-06-04", "middle"),
])
def test_question_time(question: str, day: str, anchor: str) -> None:
    found = question_time(question, NOW)
    assert found is not None
    assert found.when.date().isoformat() == day
    assert found.anchor == anchor
    assert found.start <= found.when or anchor == "before"


@pytest.mark.parametrize("question", [
    "Who leads the Payments Team?", "Who may lead the Payments Team?",
    "Who joined since 2023?", "What happened after March 2024?", "How many people are on the team?",
    "Who owns risks in the Q1 2025 risk register?",  # a time that names a document
    "Who led X August 2023?",  # no preposition: not read as a time
])
def test_no_point_in_time(question: str) -> None:
    assert question_time(question, NOW) is None


def test_future_time_is_capped_at_now_and_phrase_is_removable() -> None:
    found = question_time("Who will lead X in 2030?", NOW)
    assert found is not None and found.when == NOW
    q = "Who led the Loyalty Team in August 2023?"
    found = question_time(q, NOW)
    assert found is not None and without_time(q, found) == "Who led the Loyalty Team?"


def test_wrong_surname_is_unknown() -> None:
    q = "Who does Tariq Russo report to?"
    assert wrong_surnames(q, ["Tariq"], []) == ["Tariq Russo"]
    assert wrong_surnames("Who does Tariq Kato report to?", ["Tariq"], ["Tariq Kato"]) == []
    assert wrong_surnames("Who does Tariq report to?", ["Tariq"], []) == []
    assert wrong_surnames(q, [], []) == []  # no known Tariq: the unknown-name rule handles it
    assert wrong_surnames("What is Tariq Kato's role?", ["Tariq"], ["Tariq Kato"]) == []
    assert wrong_surnames("Who Does Tariq Russo Report To?", ["Tariq"], []) == []


def test_question_phrases_are_not_names() -> None:
    assert is_question_phrase("Which team")
    assert not is_question_phrase("Tariq Kato")


@pytest.mark.parametrize(("question", "state"), [
    ("Who led the Loyalty Team in August 2023?", True),
    ("Which team was Kira Jensen on in May 2023?", True),
    ("Which vendor did Acme use in July 2023?", True),
    ("What caused the Kafka consumer lag on March 20, 2025?", False),
    ("How long was telemetry delayed on March 20, 2025?", False),
    ("Which incidents did Northwind have in 2025?", False),
])
def test_only_state_questions_take_their_time_as_as_of(question: str, state: bool) -> None:
    from knotwork.retrieval.temporal_question import asks_about_state

    assert asks_about_state(question) is state


def test_a_when_question_gets_the_facts_date_when_its_sentence_has_none() -> None:
    from knotwork.retrieval.temporal_question import when_note

    start, end = datetime(2024, 7, 1, tzinfo=UTC), datetime(2025, 1, 6, tzinfo=UTC)
    moved = "Pedro Alves moves from Data Platform to the Billing Squad."
    assert when_note("When did Pedro Alves join the Billing Squad?", moved, start, None) \
        == "(recorded from July 1, 2024)"
    assert when_note("When did Pedro Alves leave Data Platform?", moved, None, start) \
        == "(until July 1, 2024)"
    # the sentence says when itself, or the question is no when-question
    assert when_note("When did Pedro join?", "Pedro joined on July 1, 2024.", start, None) is None
    assert when_note("Which team is Pedro on?", moved, start, None) is None
    assert when_note("When did Ana leave?", "Ana is on the Search team.", end, None) is None


def test_a_later_sentence_speaks_for_a_past_date_only_when_it_dates_a_period_covering_it() -> None:
    from knotwork.retrieval.temporal_question import held_then

    written, may = datetime(2025, 4, 25, tzinfo=UTC), datetime(2023, 5, 16, tzinfo=UTC)
    assert held_then("Vendor: Lumenwatch; From: before 2023; Until: 2023-10-13", written, may)
    assert held_then("Carla Iyer led the Ads Team until 19 March 2025.", written, may)
    assert not held_then("Tessellate Labs uses Signalpeak for observability.", written, may)
    assert not held_then("Vendor: Signalpeak; From: 2023-10-13; Until: current", written, may)
    assert not held_then("Ana led it until January 2023.", written, may)  # over before then


def test_when_question_needs_dated_evidence_or_a_fact_of_its_relation() -> None:
    from knotwork.retrieval.temporal_question import undated_when

    undated = ["The SRE team works out of the Pune office.", "Office: Pune"]
    assert undated_when("When was the Pune office opened?", undated, typed_fact=False)
    # a fact of the relation the question names answers with its recorded start
    assert not undated_when("When did Pedro join Billing?", ["Pedro joined Billing."], typed_fact=True)
    for dated in ("Producers must be off it by 30/09/2025.", "It opened on March 3.",
                  "The launch moved to Q3.", "Effective next Monday."):
        assert not undated_when("When was it opened?", [dated], typed_fact=False)
    assert not undated_when("Where is the Pune office?", undated, typed_fact=False)


def test_a_dated_event_noun_is_the_time_but_another_dated_noun_is_not() -> None:
    assert question_time("What did the Q1 2025 risk register list?", NOW) is None
    found = question_time("Who ran the platform at the May 2024 cutover?", NOW)
    assert found is not None
    assert without_time("Who ran the platform at the May 2024 cutover?", found) == "Who ran the platform?"
