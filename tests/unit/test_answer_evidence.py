"""Evidence an answer must hold (answer_evidence): presupposed qualifiers, the asked date's or
amount's modifier, stated changes; typed values (dates are no numbers, places are no
people); and the gate in calibrate (no stores)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from knotwork.domain.models import Entity, EntityType, QueryMode, QueryResult
from knotwork.resolution.normalize import normalize_name
from knotwork.retrieval.answer_evidence import (
    asked_modifier,
    evidence_gap,
    unknown_qualifiers,
)
from knotwork.retrieval.answerability import FEATURES, AnswerModel, AnswerSupport, calibrate
from knotwork.retrieval.intent import AnswerType, holds_answer, intent_of
from knotwork.retrieval.lexical import term_set

NOW = datetime(2024, 1, 1, tzinfo=UTC)


def entity(eid: str, name: str, etype: EntityType, *aliases: str) -> Entity:
    keys = [normalize_name(n) for n in (name, *aliases)]
    return Entity(id=eid, group_id="g", name=name, canonical_name=name, type=etype,
                  aliases=list(aliases), name_keys=keys, created_at=NOW, updated_at=NOW)


BRIGHTFIELD = entity("o1", "Brightfield Labs", EntityType.ORGANIZATION, "Brightfield")
POOL = term_set("Brightfield Labs has offices in Porto and Berlin. Dana Holt is our CTO. "
                "Ravi Sen leads the Porto office. Ana Ruiz runs support.")


def gap(question: str, shown: str, anchors: tuple[Entity, ...] = (BRIGHTFIELD,),
        pool: set[str] = POOL) -> str | None:
    return evidence_gap(question, shown, shown, list(anchors), pool)


def test_an_answer_to_a_plain_question_has_no_gap() -> None:
    assert gap("Who leads the Porto office?", "Ravi Sen leads the Porto office.") is None


def test_a_qualifier_nothing_mentions_is_a_gap_but_a_misspelling_is_not() -> None:
    assert unknown_qualifiers("Who runs Brightfield's Lisbon office?", [BRIGHTFIELD], POOL) == ["Lisbon"]
    assert unknown_qualifiers("Who runs Brightfield's Porto office?", [BRIGHTFIELD], POOL) == []
    assert unknown_qualifiers("Who runs Brightfeld's Portto office?", [BRIGHTFIELD], POOL) == []
    assert unknown_qualifiers("Who runs support in March?", [], POOL) == []  # calendar words
    why = gap("Who runs Brightfield's Lisbon office?", "Ravi Sen leads the Porto office.")
    assert why is not None and why.startswith("unknown-qualifier") and "Lisbon" in why


def test_the_modifier_of_an_asked_date_or_amount_must_be_in_the_answer() -> None:
    assert asked_modifier("What is the planned launch date for the new app?") == ["launch"]
    assert asked_modifier("What is the exact date?") == []
    assert intent_of("What is the planned launch date for the new app?").answer_type is AnswerType.DATE
    pool = term_set("The app review is planned for May 2026. The launch is set for June 2026.")
    question = "What is the planned launch date for the new app?"
    assert gap(question, "The app review is planned for May 2026.", anchors=(),
               pool=pool) == "asked-modifier: the answer never says launch"
    assert gap(question, "The launch is set for June 2026.", anchors=(), pool=pool) is None


@pytest.mark.parametrize(("question", "shown", "lacking"), [
    ("Which company did Ana Ruiz join after leaving Brightfield?",
     "Ana Ruiz runs support at Brightfield.", True),
    ("Which company did Ana Ruiz join after leaving Brightfield?",
     "Ana Ruiz left Brightfield in May and joined Kettle Labs.", False),
    # the leaving alone does not say where she went
    ("Which company did Ana Ruiz join after leaving Brightfield?",
     "Ana Ruiz has decided to leave Brightfield; her last day is in May.", True),
    ("Which company did Ana Ruiz join after leaving Brightfield?",
     "After Brightfield, Ana Ruiz went to Kettle Labs.", False),
    ("Who was Brightfield's CTO before Dana Holt?", "Dana Holt is our CTO at Brightfield.", True),
    ("Who was Brightfield's CTO before Dana Holt?",
     "Ravi Sen was CTO until 2022, when Dana Holt took over.", False),
    ("Who leads the Porto office?", "Ravi Sen leads the Porto office.", False),
])
def test_a_question_about_a_change_needs_an_answer_stating_one(question: str, shown: str,
                                                               lacking: bool) -> None:
    pool = POOL | term_set("Kettle Labs")
    assert (gap(question, shown, pool=pool) is not None) is lacking


def test_dates_and_years_are_no_numbers() -> None:
    q = "What interest rate does the lender charge?"
    assert holds_answer(AnswerType.NUMBER, "Lender since 2019; signed: 14.03.2023.", q, [], []) is False
    assert holds_answer(AnswerType.NUMBER, "Ticket OPS-2023-017 was closed.", q, [], []) is False
    assert holds_answer(AnswerType.NUMBER, "The lender charges 4.5% a year.", q, [], []) is True
    assert holds_answer(AnswerType.NUMBER, "In 2024 about 180 people worked here.", q, [], []) is True


def test_a_capitalised_pair_naming_a_place_or_company_is_no_person() -> None:
    region = entity("l1", "Northern Europe", EntityType.LOCATION)
    q = "What is the name of our account manager at Brightfield?"
    text = "This is our first office in Northern Europe. Brightfield Labs hosts the servers."
    assert holds_answer(AnswerType.PERSON, text, q, [region], [BRIGHTFIELD]) is False
    assert holds_answer(AnswerType.PERSON, "Our contact there is Mira Olsen.", q, [region],
                        [BRIGHTFIELD]) is True


def test_calibrate_withholds_an_answer_with_a_gap_whatever_its_probability() -> None:
    result = QueryResult(answer="Dana Holt is our CTO.", citations=[], confidence=0.9,
                         mode_used=QueryMode.LOCAL, context="ctx", reasoning_trace=[])
    model = AnswerModel(FEATURES, tuple(0.0 for _ in FEATURES), 5.0, 0.5, "test")  # P ≈ 0.99
    values = tuple(0.0 for _ in FEATURES)
    sure = AnswerSupport(AnswerType.PERSON, "who", values)
    lacking = AnswerSupport(AnswerType.PERSON, "who", values, "predecessor: the answer states no change")
    assert calibrate(result, sure, "no answer", model).answer == "Dana Holt is our CTO."
    withheld = calibrate(result, lacking, "no answer", model)
    assert withheld.answer == "no answer" and withheld.confidence < 0.3
    assert withheld.reasoning_trace[-1].endswith("predecessor: the answer states no change")
