"""Answer types, typed evidence and the answerability model's gate (no stores)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest

from knotwork.domain.models import Entity, EntityType, Fact, QueryMode, QueryResult
from knotwork.resolution.normalize import normalize_name
from knotwork.retrieval.answerability import (
    FEATURES,
    MODEL,
    AnswerModel,
    AnswerSupport,
    calibrate,
    load_model,
    measure,
    name_keys_of,
)
from knotwork.retrieval.intent import AnswerType, holds_answer, intent_of
from knotwork.retrieval.lexical import term_set

NOW = datetime(2024, 1, 1, tzinfo=UTC)
NO_ANSWER = "I could not find support for this."


def entity(eid: str, name: str, etype: EntityType, *aliases: str) -> Entity:
    keys = [normalize_name(n) for n in (name, *aliases)]
    keys += [f"first:{normalize_name(name.split()[0])}"] if etype is EntityType.PERSON else []
    return Entity(id=eid, group_id="g", name=name, canonical_name=name, type=etype,
                  aliases=list(aliases), name_keys=keys, created_at=NOW, updated_at=NOW)


@pytest.mark.parametrize(("question", "kind"), [
    ("Who runs the Oslo office?", AnswerType.PERSON),
    ("What is the name of our account manager at the hosting vendor?", AnswerType.PERSON),
    ("Which vendor handles payroll?", AnswerType.ORGANIZATION),
    ("In which city is the data team based?", AnswerType.PLACE),
    ("When did the billing service go live?", AnswerType.DATE),
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
    assert holds_answer(AnswerType.PERSON, "Carla Mendes took over.", q, [], [ana]) is True
    money = "How much does the vendor charge per check?"
    assert holds_answer(AnswerType.MONEY, "The vendor went live on 3 May 2024.", money, [], []) is False
    assert holds_answer(AnswerType.MONEY, "Each check costs €0.40.", money, [], []) is True
    assert holds_answer(AnswerType.DESCRIPTION, "Anything.", "Why?", [], []) is None


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


def _support(question: str, chosen: Unit, anchors: list[Entity], known: list[Entity],
             runner_up: float = 0.5) -> AnswerSupport:
    ranked = [chosen, Unit("Something else entirely.", runner_up)]

    def lookup(keys: list[str]) -> list[Entity]:
        return [e for e in known if set(e.name_keys) & set(keys)]

    focus = [t for t in term_set(question) if t not in {"run", "who"}]
    pool = term_set(*(u.text for u in ranked))
    return measure(question, ranked, [chosen], anchors, focus, pool, False, lookup)


def test_support_says_whether_the_answer_states_the_asked_type() -> None:
    office = entity("o1", "Oslo Office", EntityType.LOCATION, "Oslo")
    kari = entity("p1", "Kari Berg", EntityType.PERSON)
    question = "Who runs the Oslo office?"
    person = _support(question, Unit("Kari Berg runs the Oslo office.", 0.8), [office],
                      [office, kari]).as_dict()
    place = _support(question, Unit("It opened the Oslo office in a warehouse.", 0.8), [office],
                     [office, kari]).as_dict()
    assert person["typed"] == 1.0 and place["typed"] == 0.0
    assert person["untyped"] == place["untyped"] == 0.0
    assert person["anchor_answer"] == 1.0 and person["anchored"] == 1.0
    assert person["margin"] == pytest.approx(0.3)
    why = _support("Why did the Oslo office move?", Unit("The lease ended.", 0.8), [office],
                   [office]).as_dict()
    assert why["untyped"] == 1.0 and why["typed"] == 0.0


def test_support_counts_question_names_neither_known_nor_answered() -> None:
    question = "Who runs the Madrid office of Bluefin Labs?"
    bluefin = entity("o1", "Bluefin Labs", EntityType.ORGANIZATION)
    unknown = _support(question, Unit("Bluefin Labs has an office in Lyon.", 0.8), [bluefin],
                       [bluefin]).as_dict()
    stated = _support(question, Unit("Marta Vasko runs the Madrid office.", 0.8), [bluefin],
                      [bluefin]).as_dict()
    assert unknown["novel_names"] == pytest.approx(1 / 3)  # Madrid of Madrid, Bluefin, Labs
    assert stated["novel_names"] == 0.0


def _result() -> QueryResult:
    return QueryResult(answer="Kari Berg runs the Oslo office.", citations=[], confidence=0.8,
                       mode_used=QueryMode.LOCAL, context="Sources: the office page",
                       reasoning_trace=["seeds: Oslo Office"])


def _model(threshold: float) -> AnswerModel:
    weights = tuple(1.0 if f == "typed" else 0.0 for f in FEATURES)
    return AnswerModel(FEATURES, weights, -0.5, threshold, "test")


def _typed(value: float) -> AnswerSupport:
    return AnswerSupport(AnswerType.PERSON, "who",
                         tuple(value if f == "typed" else 0.0 for f in FEATURES))


def test_an_unlikely_answer_is_withheld_with_its_context() -> None:
    model = _model(threshold=0.5)
    withheld = calibrate(_result(), _typed(0.0), NO_ANSWER, model)  # P = sigmoid(-0.5) < 0.5
    assert withheld.answer == NO_ANSWER and withheld.confidence < 0.3
    assert withheld.context == "Sources: the office page"
    assert withheld.reasoning_trace[-1].startswith("abstained: answer type person (rule who)")
    given = calibrate(_result(), _typed(1.0), NO_ANSWER, model)  # P = sigmoid(0.5) > 0.5
    assert given.answer == _result().answer and given.confidence == 0.8
    assert "P(correct)" in given.reasoning_trace[-1]
    assert calibrate(_result(), None, NO_ANSWER, model) == _result()


def test_the_shipped_model_is_complete_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    assert set(MODEL.features) <= set(FEATURES) and len(MODEL.weights) == len(MODEL.features)
    assert 0.0 < MODEL.threshold < 1.0 and MODEL.fitted_on
    bad = tmp_path / "model.json"
    bad.write_text(json.dumps({"features": ["phrase_of_question"], "weights": [1.0], "bias": 0.0,
                               "threshold": 0.5, "fitted_on": "test"}))
    with pytest.raises(ValueError, match="unknown features"):
        load_model(bad)
