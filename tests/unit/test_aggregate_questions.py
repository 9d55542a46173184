"""Count/list questions: parsing, and counting over a small hand-made graph."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from knotwork.domain.models import Entity, EntityType, Fact
from knotwork.domain.models import RelationType as R
from knotwork.retrieval.aggregate import answer_text, collect, parse_aggregate, wanted

T0 = datetime(2023, 1, 1, tzinfo=UTC)


def _e(name: str, etype: EntityType) -> Entity:
    return Entity(id=name.lower().replace(" ", "_"), group_id="g", name=name, canonical_name=name,
                  type=etype, created_at=T0, updated_at=T0)


def _f(src: Entity, rtype: R, tgt: Entity, text: str, valid: datetime = T0,
       invalid: datetime | None = None) -> Fact:
    return Fact(id=f"{src.id}-{rtype.value}-{tgt.id}-{valid.date()}", group_id="g",
                source_id=src.id, target_id=tgt.id, type=rtype, fact=text, episodes=["c1"],
                valid_at=valid, invalid_at=invalid, created_at=T0)


@pytest.mark.parametrize(("question", "kind", "noun", "types", "side"), [
    ("How many people are on the Payments Team?", "count", "people", {R.MEMBER_OF}, "target"),
    ("How many teams are in the Commerce Division?", "count", "teams", {R.MEMBER_OF}, "target"),
    ("How many systems does the Payments Team maintain?", "count", "systems", {R.MAINTAINS}, "source"),
    ("How many people report to Chen Abbott?", "count", "people", {R.REPORTS_TO}, "target"),
    ("How many direct reports does Chen Abbott have?", "count", "reports", {R.REPORTS_TO}, "target"),
    ("How many projects use PostgreSQL?", "count", "projects", {R.USES}, "target"),
    ("Which teams are in the Platform Division?", "list", "teams", {R.MEMBER_OF}, "target"),
    ("List all the members of the Loyalty Team", "list", "members", {R.MEMBER_OF}, "target"),
    ("What is the number of services that depend on Redis?", "count", "services", {R.DEPENDS_ON}, "target"),
])
def test_parse_count_and_list_questions(question: str, kind: str, noun: str, types: set[R],
                                        side: str) -> None:
    ask = parse_aggregate(question)
    assert ask is not None
    assert (ask.kind, ask.noun, ask.side) == (kind, noun, side)
    assert types <= ask.types
    if R.REPORTS_TO in types:
        assert R.MEMBER_OF not in ask.types  # "report to" is not membership


@pytest.mark.parametrize("question", [
    "Who leads the Payments Team?", "Which team is Dev Sullivan on?",
    "Which team was Kira Jensen on in May 2023?", "Where is the Loyalty Team based?",
    "What are the main risks?",
])
def test_single_answer_questions_are_not_aggregations(question: str) -> None:
    assert parse_aggregate(question) is None


def test_inverse_relation_counts_the_same_people() -> None:
    ask = parse_aggregate("How many people report to Chen Abbott?")
    assert ask is not None
    assert (R.MANAGES, "source") in wanted(ask)


def _world() -> tuple[dict[str, Entity], list[Fact]]:
    div = _e("Commerce Division", EntityType.ORGANIZATION)
    fraud = _e("Fraud Team", EntityType.ORGANIZATION)
    loyalty = _e("Loyalty Team", EntityType.ORGANIZATION)
    proc = _e("Procurement Team", EntityType.ORGANIZATION)
    vendor = _e("Hirewell", EntityType.ORGANIZATION)
    ana, bo, diana = (_e(n, EntityType.PERSON) for n in ("Ana Silva", "Bo Chen", "Diana Rao"))
    lone_diana = _e("Diana", EntityType.PERSON)
    facts = [
        _f(fraud, R.MEMBER_OF, div, "The Fraud Team sits in the Commerce division."),
        _f(loyalty, R.RELATED_TO, div, "Organisationally, the Loyalty Team falls under the Commerce Division."),
        _f(proc, R.RELATED_TO, div, "The Procurement Team left the Commerce Division."),
        _f(vendor, R.RELATED_TO, div, "Hirewell invoices the Commerce Division."),
        _f(ana, R.MEMBER_OF, loyalty, "Ana Silva is on the Loyalty Team."),
        _f(bo, R.MEMBER_OF, loyalty, "Bo Chen is on the Loyalty Team."),
        _f(bo, R.MEMBER_OF, fraud, "Bo Chen moved to the Fraud Team.", valid=datetime(2023, 9, 1, tzinfo=UTC)),
        _f(diana, R.MEMBER_OF, loyalty, "Diana Rao is on the Loyalty Team.",
           valid=datetime(2023, 3, 1, tzinfo=UTC)),
        _f(lone_diana, R.MEMBER_OF, loyalty, "Diana is in the Loyalty team."),
    ]
    ents = {e.id: e for e in (div, fraud, loyalty, proc, vendor, ana, bo, diana, lone_diana)}
    return ents, facts


def test_teams_in_a_division_count_typed_and_worded_links_only() -> None:
    ents, facts = _world()
    ask = parse_aggregate("How many teams are in the Commerce Division?")
    assert ask is not None
    counted = collect(ask, ents["commerce_division"], facts, ents, None)
    # the vendor is no team; the team that left is not counted
    assert [c.entity.name for c in counted] == ["Fraud Team", "Loyalty Team"]
    assert answer_text(ask, ents["commerce_division"], counted).startswith("2 teams")


def test_people_who_moved_on_and_partial_names_are_not_counted() -> None:
    ents, facts = _world()
    ask = parse_aggregate("How many people are on the Loyalty Team?")
    assert ask is not None
    now = collect(ask, ents["loyalty_team"], facts, ents, None)
    assert [c.entity.name for c in now] == ["Ana Silva", "Diana Rao"]
    # in February 2023 Bo Chen was still on the team and Diana Rao had not joined
    before = collect(ask, ents["loyalty_team"], facts, ents, datetime(2023, 2, 1, tzinfo=UTC))
    assert [c.entity.name for c in before] == ["Ana Silva", "Bo Chen", "Diana"]


def test_invalidated_facts_are_not_counted_today() -> None:
    ents, facts = _world()
    ended = _f(ents["ana_silva"], R.MEMBER_OF, ents["fraud_team"], "Ana Silva was on the Fraud Team.",
               invalid=datetime(2023, 6, 1, tzinfo=UTC))
    ask = parse_aggregate("How many people are on the Fraud Team?")
    assert ask is not None
    assert [c.entity.name for c in collect(ask, ents["fraud_team"], [*facts, ended], ents, None)] \
        == ["Bo Chen"]


def test_a_teams_current_lead_is_one_of_its_people() -> None:
    ents, facts = _world()
    cy, old = _e("Cy Park", EntityType.PERSON), _e("Dee Old", EntityType.PERSON)
    ents |= {cy.id: cy, old.id: old}
    leads = [_f(cy, R.LEADS, ents["fraud_team"], "Cy Park leads the Fraud Team."),
             _f(old, R.LEADS, ents["fraud_team"], "Dee Old led the Fraud Team until May 2023.",
                invalid=datetime(2023, 5, 1, tzinfo=UTC))]
    ask = parse_aggregate("How many people are on the Fraud Team?")
    assert ask is not None
    counted = collect(ask, ents["fraud_team"], [*facts, *leads], ents, None)
    assert [c.entity.name for c in counted] == ["Bo Chen", "Cy Park"]
    # a question about a relation that is not membership does not count leads
    reports = parse_aggregate("How many people report to the Fraud Team?")
    assert reports is not None and (R.LEADS, "target") not in wanted(reports)
