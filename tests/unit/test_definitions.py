"""Describe-questions prefer the sentence saying what the named entity is or does."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from knotwork.retrieval.definitions import asks_to_describe, defines, definition_bonus


@dataclass
class _Unit:
    text: str
    display: str = ""
    bonus: float = 0.0


@pytest.mark.parametrize("question", [
    "What is Project Atlas about?", "What is the Identity Service?", "Tell me about the Billing Service.",
    "Give an overview of the Billing Service.", "What does the Security Team work on?",
    "Describe Orion.", "What does Orion do?", "What is the Platform Team responsible for?"])
def test_questions_asking_to_describe_something(question: str) -> None:
    assert asks_to_describe(question)


@pytest.mark.parametrize("question", [
    "What was Sofia Lindqvist promoted to?", "What is the capital of Peru?", "What is Priya's role?",
    "What are the main risks?", "Who leads Project Atlas?", "What is the status of Project Atlas?"])
def test_questions_about_one_attribute_or_event_are_not(question: str) -> None:
    assert not asks_to_describe(question)


def test_a_definition_opens_with_the_name_as_its_subject() -> None:
    names = ["Project Atlas", "Identity Service"]
    assert defines("Project Atlas is the fleet telemetry platform for warehouse robots.", names)
    assert defines("The Identity Service issues OAuth tokens for every API.", names)
    assert defines("The Identity Service also handles device certificates.", names)
    assert not defines("The Atlas Team builds Project Atlas.", names)  # another subject
    assert not defines("Alice Chen is the product manager for Project Atlas.", names)
    assert not defines("The Identity Service depends on PostgreSQL.", names)  # a relation


def test_only_the_entity_the_question_names_is_described() -> None:
    units = [_Unit("The Atlas Team builds Project Atlas."),
             _Unit("Project Atlas is the fleet telemetry platform for warehouse robots."),
             _Unit("Alice Chen is the product manager for Project Atlas.")]
    # seeds found by similarity too: only "Project Atlas" is in the question
    definition_bonus("What is Project Atlas about?", units,
                     ["Project Atlas", "Atlas Team", "Alice Chen"], 0.4)
    assert [u.bonus for u in units] == [0.0, 0.4, 0.0]
    untouched = [_Unit("Project Atlas is the fleet telemetry platform.")]
    definition_bonus("Who leads Project Atlas?", untouched, ["Project Atlas"], 0.4)
    assert untouched[0].bonus == 0.0


def test_an_abbreviation_question_is_answered_by_its_glossary_line() -> None:
    assert asks_to_describe("What does SCA stand for?")
    assert asks_to_describe("What does PSP mean?")
    assert defines("**SCA**: strong customer authentication under PSD2.", ["SCA"])
    assert defines("SCA stands for strong customer authentication.", ["SCA"])
    assert not defines("SCA was introduced with PSD2.", ["SCA"])
