"""AUTO routing and multi-part splitting (pure: the known names are given)."""

from __future__ import annotations

import pytest

from knotwork.domain.models import QueryMode
from knotwork.retrieval.router import (
    ACCOUNT_CUE,
    account_cue,
    asks_for_themes,
    broad_topic,
    route,
    split_parts,
)

ATLAS = ["Project Atlas"]


@pytest.mark.parametrize(("question", "known"), [
    ("Who leads Project Atlas?", ATLAS),
    ("What does Project Atlas depend on?", ATLAS),
    ("Who does Priya report to?", ["Priya"]),
    ("When will Jenkins be shut down?", ["Jenkins"]),
    ("Who was the incident commander for the Billing Service outage?", ["Billing Service"]),
    ("How long was the outage?", []),  # specific, though it names nothing
    ("When is the launch?", []),
])
def test_entity_specific_questions_go_local(question: str, known: list[str]) -> None:
    assert route(question, known).mode is QueryMode.LOCAL


def test_multi_hop_chains_go_local_before_anything_else() -> None:
    decision = route("Who is the manager of the person who leads Project Atlas?", ATLAS)
    assert decision.mode is QueryMode.LOCAL
    assert "multi-hop" in decision.reason


@pytest.mark.parametrize("question", [
    "What are the main risks?",
    "What are the key challenges for the engineering teams?",
    "What are the themes in our documents?",
    "Give me an overview of engineering",
    "Summarize what our documents say",
    "What happened overall last quarter?",
    "Which decisions were taken across teams?",
])
def test_corpus_wide_wording_goes_global(question: str) -> None:
    decision = route(question, ["Billing Service"] if "Billing" in question else [])
    assert decision.mode is QueryMode.GLOBAL, decision


@pytest.mark.parametrize(("question", "topic"), [
    ("What decisions were made?", "decisions"),
    ("Which projects are running?", "projects"),
    ("What technologies do we use?", "technologies"),
    ("List all the incidents", "incidents"),
])
def test_a_broad_topic_naming_no_entity_goes_global(question: str, topic: str) -> None:
    assert broad_topic(question) == topic
    decision = route(question)
    assert decision.mode is QueryMode.GLOBAL and topic in decision.reason


def test_a_broad_topic_about_a_named_or_unknown_entity_stays_local() -> None:
    assert route("What technologies does Project Atlas use?", ATLAS).mode is QueryMode.LOCAL
    # an unknown name: local search abstains about it rather than summarising the corpus
    assert route("What projects does Zephyr Corp run?", [], ["Zephyr Corp"]).mode is QueryMode.LOCAL
    assert broad_topic("What is the capital of Peru?") is None


@pytest.mark.parametrize(("question", "parts"), [
    ("Who leads Project Atlas and when is the launch?",
     ["Who leads Project Atlas?", "When is the launch (Project Atlas)?"]),
    ("Who leads Project Atlas? Who maintains the Billing Service?",
     ["Who leads Project Atlas?", "Who maintains the Billing Service?"]),
    ("Who leads Project Atlas and the Billing Service?",
     ["Who leads Project Atlas?", "Who leads Billing Service?"]),
    ("Who leads Project Atlas; who owns the Billing Service?",
     ["Who leads Project Atlas?", "Who owns the Billing Service?"]),
])
def test_multi_part_questions_go_drift_with_their_parts(question: str, parts: list[str]) -> None:
    known = ["Project Atlas", "Billing Service"]
    assert split_parts(question, known) == parts
    decision = route(question, known)
    assert decision.mode is QueryMode.DRIFT
    assert list(decision.parts) == parts


def test_and_inside_one_clause_is_not_multi_part() -> None:
    assert split_parts("What does Project Atlas use for ingestion and storage?", ATLAS) == []
    assert split_parts("Who approved the migration from Jenkins to GitHub Actions?") == []
    # "and" between a known name and an unknown word is not a conjunction of entities
    assert split_parts("Who leads Project Atlas and Phoenix?", ATLAS) == []


def test_multi_part_wins_over_corpus_wording() -> None:
    decision = route("What are the main risks and who owns them?")
    assert decision.mode is QueryMode.DRIFT


def test_themes_wording() -> None:
    assert asks_for_themes("What are the themes?")
    assert asks_for_themes("Summarize the corpus")
    assert not asks_for_themes("Who leads Project Atlas?")


def test_a_summary_of_a_named_thing_is_an_account_and_goes_global() -> None:
    named = route("Summarise the Osprey migration from design to cutover.", ["Osprey"])
    assert named.mode is QueryMode.GLOBAL and named.reason.startswith(ACCOUNT_CUE)
    assert route("Summarise the Osprey migration.", []).mode is QueryMode.GLOBAL
    # the other corpus-wide cues stay global even when an entity is named
    assert route("What are the main risks across Osprey?", ["Osprey"]).mode is QueryMode.GLOBAL


@pytest.mark.parametrize("question", [
    "Describe the Heron office move.",
    "How did the Platform Team change between March 2023 and June 2024?",
    "What happened in OUT-77 and what changed as a result?",
    "How does the Support group handle escalations?",
    "What roles do our three vendors play?",
    "What lessons did the Heron launch leave?",
    "Why and how did we leave Dublin?",
    "What has Heron Ltd done to get ready for the audit?",
    "What were the main security milestones in 2024?",
    "Summarize the history of Project Wren.",
])
def test_an_account_of_named_things_goes_global(question: str) -> None:
    decision = route(question, ["Heron", "Platform Team", "Project Wren", "Heron Ltd"])
    assert account_cue(question) is not None
    assert decision.mode is QueryMode.GLOBAL


@pytest.mark.parametrize("question", [
    "Who leads Project Wren?",
    "When did the Platform Team move to Dublin?",
    "What caused OUT-77, and how was it mitigated?",
    "Which team owns the Billing Service, and who leads it?",
    "How many people work in the Heron office?",
])
def test_specific_questions_are_no_accounts(question: str) -> None:
    assert account_cue(question) is None


def test_an_account_of_an_unknown_name_is_not_routed_as_one() -> None:
    assert route("Describe Project Zephyr.", [], ["Project Zephyr"]).mode is QueryMode.LOCAL


@pytest.mark.parametrize(("question", "known"), [
    ("What were the major technical and staffing changes at Acme Works last year?",
     ["Acme Works", "staffing"]),
    ("What are the key legal or financial risks for Orbit Labs?", ["Orbit Labs"]),
])
def test_two_joined_modifiers_before_a_theme_word_still_ask_for_the_main_themes(
        question: str, known: list[str]) -> None:
    decision = route(question, known)
    assert decision.mode is QueryMode.GLOBAL
    assert "main themes" in decision.reason


def test_a_joined_modifier_without_a_theme_word_is_no_corpus_cue() -> None:
    # "main and" followed by a plain noun asks about one thing
    assert route("Who runs the main and backup servers of Project Atlas?", ATLAS).mode \
        is QueryMode.LOCAL
