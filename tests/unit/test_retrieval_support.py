"""Multi-hop role chains, abstention on unmentioned focus terms, list answers (no stores)."""

from __future__ import annotations

from datetime import UTC, datetime

from knotwork.domain.models import Entity, EntityType, Fact, RelationType
from knotwork.retrieval.coverage import focus_terms, uncovered_terms
from knotwork.retrieval.local import Unit
from knotwork.retrieval.multihop import decompose
from knotwork.retrieval.siblings import siblings as _siblings
from knotwork.retrieval.support import unsupported

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def _entity(eid: str, name: str) -> Entity:
    return Entity(id=eid, group_id="g", name=name, canonical_name=name.lower(), type=EntityType.PERSON,
                  name_keys=[name.lower()], created_at=NOW, updated_at=NOW)


def _fact_unit(fid: str, src: str, dst: str, rel: RelationType, text: str, bonus: float = 0.0) -> Unit:
    fact = Fact(id=fid, group_id="g", source_id=src, target_id=dst, type=rel, fact=text, created_at=NOW)
    return Unit(text, ["c"], fact, bonus)


def test_role_chains_decompose_and_single_hops_do_not() -> None:
    plan = decompose("Who does the leader of the Security Team report to?")
    assert plan is not None and plan.inner == "Who is the leader of the Security Team?"
    assert plan.template.format("Omar Haddad") == "Who does Omar Haddad report to?"
    nested = decompose("Who is the manager of the incident commander of the Billing Service outage?")
    assert nested is not None and nested.inner == "Who is the incident commander of the Billing Service outage?"
    for single in ("Who is the manager of Priya Raman?", "What is the capital of Peru?",
                   "Give an overview of the Billing Service.", "What are the main risks of Project Atlas?"):
        assert decompose(single) is None, single


def test_focus_terms_leave_out_names_and_question_words() -> None:
    hendrik = _entity("h", "Hendrik de Vries")
    seeds = {"h": (hendrik, 1.0)}
    assert focus_terms("What is Hendrik de Vries's salary?", seeds) == ["salary"]
    pool = [Unit("Hendrik de Vries is the site lead of the Rotterdam warehouse.", ["c"])]
    assert uncovered_terms("What is Hendrik de Vries's salary?", seeds, pool) == ["salary"]
    assert uncovered_terms("Where does Hendrik de Vries lead a site?", seeds, pool) == []
    # the question's idiom and a verb's other form are no missing topic
    assert uncovered_terms("What does Hendrik de Vries stand for?", seeds, pool) == []
    chose = [Unit("Hendrik de Vries chose Rotterdam for the site.", ["c"])]
    assert uncovered_terms("Why did Hendrik de Vries choose Rotterdam?", seeds, chose) == []


def test_unsupported_answers_abstain() -> None:
    evidence = ["The Platform Team maintains the Billing Service."]
    assert unsupported("Who is the CFO of Northwind?", [], [], evidence) is not None
    assert "Zephyr" in (unsupported("Who leads Project Zephyr?", [], ["Project Zephyr"], evidence) or "")
    assert unsupported("Which team maintains the Billing Service?", [], [], evidence) is None
    # one of two focus terms missing is not enough (strictly more than half must be)
    assert unsupported("What are the Billing Service maintenance tasks?", [], [],
                       ["Billing Service maintenance: restart workers."]) is None


def test_list_questions_list_every_fact_of_the_relation() -> None:
    marcus = _entity("m", "Marcus Webb")
    seeds = {"m": (marcus, 1.0)}
    reports = [_fact_unit(f"r{i}", f"p{i}", "m", RelationType.REPORTS_TO, f"P{i} reports to Marcus Webb.", 0.1)
               for i in range(4)]
    other = _fact_unit("x", "m", "b", RelationType.LOCATED_IN, "Marcus Webb works in Berlin.")
    facts = [*reports, other]
    extra = _siblings("Who reports to Marcus Webb?", reports[0], [reports[0]], facts, seeds, limit=8)
    assert {u.fact.id for u in extra if u.fact} == {"r1", "r2", "r3"}
    assert len(_siblings("Who reports to Marcus Webb?", reports[0], [reports[0]], facts, seeds, limit=2)) == 2
    # a question naming no relation gets no list
    assert _siblings("Tell me about Marcus Webb.", reports[0], [reports[0]], facts, seeds, limit=8) == []


def test_an_analyst_topic_is_mentioned_by_its_evidence_words() -> None:
    """A corpus states its risks as outages and delays, seldom as "risks"."""
    evidence = ["Solver runtime on the largest depots may exceed the 90-second budget.",
                "Manually issued certificates caused the April TrackPoint outage."]
    assert unsupported("What are the main engineering risks?", [], [], evidence) is None
    unrelated = ["The Lyon office opened in 2019.", "Rafael Duarte works in Lyon."]
    assert unsupported("What are the main engineering risks?", [], [], unrelated) is not None
