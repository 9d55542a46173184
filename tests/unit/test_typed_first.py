"""Typed answer selection and sentence cuts at initials (small texts of our own)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from knotwork.domain.models import Entity, EntityType
from knotwork.resolution.normalize import normalize_name
from knotwork.retrieval.sentences import split_sentences
from knotwork.retrieval.typed_first import echoes_premise, premise, typed_first


@dataclass
class U:
    text: str
    score: float
    display: str = ""


def _person(name: str) -> Entity:
    now = datetime(2024, 1, 1, tzinfo=UTC)
    words = name.split()
    keys = [normalize_name(name), f"first:{normalize_name(words[0])}"]
    return Entity(
        id=name.lower().replace(" ", "-"),
        group_id="g",
        name=name,
        canonical_name=name,
        type=EntityType.PERSON,
        name_keys=keys,
        created_at=now,
        updated_at=now,
    )


def _lookup(people: list[Entity]):
    def find(keys: list[str]) -> list[Entity]:
        return [p for p in people if any(k in p.name_keys for k in keys)]

    return find


def test_a_who_question_is_answered_by_the_close_unit_naming_a_person() -> None:
    ranked = [
        U("The rollout of the billing service finished in spring.", 0.80),
        U("The rollout was approved by Mara Lindqvist.", 0.74),
    ]
    people = [_person("Mara Lindqvist")]
    assert (
        typed_first("Who approved the rollout of the billing service?", ranked, [], _lookup(people))
        == 1
    )


def test_the_best_unit_stands_when_it_holds_the_asked_type() -> None:
    ranked = [U("Mara Lindqvist approved the rollout.", 0.80), U("The rollout took a week.", 0.79)]
    assert (
        typed_first("Who approved the rollout?", ranked, [], _lookup([_person("Mara Lindqvist")]))
        is None
    )


def test_a_much_weaker_unit_does_not_answer_instead() -> None:
    ranked = [
        U("The rollout of the billing service finished in spring.", 0.80),
        U("Mara Lindqvist likes the new dashboard.", 0.30),
    ]
    assert (
        typed_first("Who approved the rollout?", ranked, [], _lookup([_person("Mara Lindqvist")]))
        is None
    )


def test_a_person_the_premise_names_is_no_answer() -> None:
    question = "The plan names Ola Berg as owner. Who owned the rollout in May?"
    ranked = [
        U("Owner of the rollout: Ola Berg.", 0.80),
        U("Since April the rollout is owned by Mara Lindqvist.", 0.70),
    ]
    people = [_person("Ola Berg"), _person("Mara Lindqvist")]
    assert typed_first(question, ranked, [], _lookup(people)) == 1


def test_a_unit_echoing_the_premise_yields() -> None:
    question = "The runbook says invoices are matched against the old ledger. What are they matched against now?"
    assert premise(question) == "The runbook says invoices are matched against the old ledger."
    assert echoes_premise("Invoices are matched against the old ledger.", premise(question))
    assert not echoes_premise("Matching moved to the new journal in March.", premise(question))
    ranked = [
        U("Invoices are matched against the old ledger.", 0.80),
        U("Matching moved to the new journal in March.", 0.70),
    ]
    assert typed_first(question, ranked, [], _lookup([])) == 1


def test_a_date_question_prefers_a_unit_stating_a_date() -> None:
    ranked = [
        U("The Oslo office is the company's first in Norway.", 0.80),
        U("The Oslo office opened on 4 March 2024.", 0.75),
    ]
    assert typed_first("On what date did the Oslo office open?", ranked, [], _lookup([])) == 1


def test_an_initial_before_a_surname_ends_no_sentence() -> None:
    text = "Until May the team reported to K. Varga. Then it moved. We chose plan B. The end."
    assert split_sentences(text) == [
        "Until May the team reported to K. Varga.",
        "Then it moved.",
        "We chose plan B.",
        "The end.",
    ]
    assert split_sentences("Owner: J. R. Moss. Done.") == ["Owner: J. R. Moss.", "Done."]
