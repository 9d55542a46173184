"""Answer types, typed evidence, the answerability model and answer selection."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from knotwork.domain.models import Entity, EntityType, Fact
from knotwork.resolution.normalize import normalize_name
from knotwork.retrieval.answerability import ANSWERED, MODEL, AnswerModel
from knotwork.retrieval.intent import AnswerType, asked_head, holds_answer, intent_of
from knotwork.retrieval.question import lone_capitalised
from knotwork.retrieval.selection import name_keys_of, select, what_is_missing

NOW = datetime(2024, 1, 1, tzinfo=UTC)


def entity(eid: str, name: str, etype: EntityType, *aliases: str) -> Entity:
    keys = [normalize_name(n) for n in (name, *aliases)]
    keys += [f"first:{normalize_name(name.split()[0])}"] if etype is EntityType.PERSON else []
    return Entity(id=eid, group_id="g", name=name, canonical_name=name, type=etype,
                  aliases=list(aliases), name_keys=keys, created_at=NOW, updated_at=NOW)


@pytest.mark.parametrize(("question", "kind"), [
    ("Who runs the Oslo office?", AnswerType.PERSON),
    ("To whom did the platform engineers report in May?", AnswerType.PERSON),
    ("What is the name of our account manager at the hosting vendor?", AnswerType.PERSON),
    ("Which vendor handles payroll?", AnswerType.ORGANIZATION),
    ("In which city is the data team based?", AnswerType.PLACE),
    ("Where does Ana work from?", AnswerType.PLACE),
    ("When did the billing service go live?", AnswerType.DATE),
    ("On what date was the audit signed?", AnswerType.DATE),
    ("How much does the vendor charge per check?", AnswerType.MONEY),
    ("What is the company's annual revenue?", AnswerType.MONEY),
    ("How many people work in Lyon?", AnswerType.NUMBER),
    ("Why did the team move to a new queue?", AnswerType.DESCRIPTION),
])
def test_answer_type_of_question(question: str, kind: AnswerType) -> None:
    intent = intent_of(question)
    assert intent.answer_type is kind
    assert (intent.rule is None) == (kind is AnswerType.DESCRIPTION)


def test_typed_values_are_ones_the_question_does_not_state() -> None:
    ana = entity("p1", "Ana Ruiz", EntityType.PERSON)
    bo = entity("p2", "Bo Lind", EntityType.PERSON)
    q = "Who was the CTO before Ana Ruiz?"
    assert holds_answer(AnswerType.PERSON, "Ana Ruiz is the CTO.", q, [ana], [ana]) is False
    assert holds_answer(AnswerType.PERSON, "Bo Lind was CTO until 2020.", q, [bo], [ana]) is True
    # a duplicate entity carrying the asked-about name is no answer either
    dup = entity("p3", "Ruiz Ana", EntityType.PERSON)
    assert holds_answer(AnswerType.PERSON, "Ruiz Ana is CTO.", q, [dup], [ana]) is False
    # a full name the graph does not know still reads as a person
    assert holds_answer(AnswerType.PERSON, "Carla Mendes took over.", q, [], [ana]) is True
    money = "How much does the vendor charge per check?"
    assert holds_answer(AnswerType.MONEY, "The vendor went live on 3 May 2024.", money, [], []) is False
    assert holds_answer(AnswerType.MONEY, "Each check costs €0.40.", money, [], []) is True
    assert holds_answer(AnswerType.DATE, "It went live on 3 May 2024.", "When?", [], []) is True
    assert holds_answer(AnswerType.NUMBER, "About 40 people.", "How many people in Season 4?",
                        [], []) is True
    assert holds_answer(AnswerType.NUMBER, "Season 4 was big.", "How many players in Season 4?",
                        [], []) is False
    assert holds_answer(AnswerType.DESCRIPTION, "Anything.", "Why?", [], []) is None


def test_asked_head_noun() -> None:
    assert asked_head("What penalty did the bank impose?") == "penalty"
    assert asked_head("Who leads the team?") is None


def test_lone_capitalised_words_are_names_a_tagger_may_miss() -> None:
    assert "Madrid" in lone_capitalised("Who runs Acme's Madrid office?")
    assert lone_capitalised("Who led the team in August 2024?") == []  # a month
    assert lone_capitalised("What does the Partner Map say?") == []  # part of a title


def test_name_keys_of_a_text_are_its_capitalised_spans() -> None:
    keys = name_keys_of("Then Bo Lind joined the payments team.")
    assert "bo lind" in keys and "first:bo" in keys
    assert "payments" not in keys


@dataclass
class Unit:
    text: str
    score: float
    context: str = ""
    display: str = ""
    fact: Fact | None = None
    parts: dict[str, float] = field(default_factory=dict)


def test_selection_prefers_the_candidate_stating_the_asked_type() -> None:
    office = entity("o1", "Oslo Office", EntityType.LOCATION, "Oslo")
    kari = entity("p1", "Kari Berg", EntityType.PERSON)
    ranked = [Unit("The Oslo office opened in a converted warehouse by the harbour.", 0.8,
                   parts={"semantic": 0.7}),
              Unit("Kari Berg runs the Oslo office.", 0.7, parts={"semantic": 0.6})]
    known = [office, kari]

    def lookup(keys: list[str]) -> list[Entity]:
        return [e for e in known if set(e.name_keys) & set(keys)]

    picked = select("Who runs the Oslo office?", ranked, [office], ["run", "offic"], lookup)
    assert picked.kind is AnswerType.PERSON and picked.rule == "who"
    assert picked.order[0] == 1
    none = select("Who runs the Oslo office?", ranked[:1], [office], ["run", "offic"], lookup)
    assert none.probability < picked.probability


def test_confidence_maps_the_threshold_to_the_abstention_line() -> None:
    model = AnswerModel(weights=(0.0,), bias=0.0, threshold=0.2, fitted_on="test")
    assert model.confidence(0.2) == pytest.approx(ANSWERED)
    assert model.confidence(0.1) < ANSWERED <= model.confidence(0.5) <= model.confidence(1.0)
    assert model.confidence(1.0) == pytest.approx(1.0)
    assert 0.0 < MODEL.threshold < 1.0


def test_abstention_says_what_is_missing_in_words() -> None:
    assert "could not find the amount" in what_is_missing(AnswerType.MONEY)
