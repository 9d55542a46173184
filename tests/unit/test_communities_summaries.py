"""Extractive community reports, the builder, and incremental assignment (pure functions)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from knotwork.communities.builder import BuildParams, build_communities, community_id
from knotwork.communities.incremental import (
    assign_new_entities,
    modal_community,
    needs_rebuild,
    stale_communities,
    with_ancestors,
)
from knotwork.communities.projection import EntityView, FactView, project_views
from knotwork.communities.summaries import (
    CommunitySummarizer,
    ExtractiveSummarizer,
    SummaryInput,
    key_topics,
    rank_facts,
)

NOW = datetime(2025, 6, 1, tzinfo=UTC)

PEOPLE = [EntityView("priya", "Priya Raman", "PERSON"), EntityView("kenji", "Kenji Watanabe", "PERSON"),
          EntityView("atlas", "Project Atlas", "PRODUCT"), EntityView("team", "Atlas Team", "ORGANIZATION"),
          EntityView("kafka", "Kafka", "TECHNOLOGY")]
FACTS = [
    FactView("f1", "priya", "atlas", "LEADS", "Priya Raman leads Project Atlas.", 1.0, ("ep1", "ep2")),
    FactView("f2", "priya", "team", "LEADS", "Priya Raman leads the Atlas Team.", 1.0, ("ep1",)),
    FactView("f3", "kenji", "team", "MEMBER_OF", "Kenji Watanabe is in the Atlas Team.", 1.0, ("ep3",)),
    FactView("f4", "kenji", "kafka", "MAINTAINS", "Kenji Watanabe maintains Kafka", 0.4, ("ep4",)),
    FactView("f5", "kenji", "priya", "REPORTS_TO", "Kenji Watanabe reports to Priya Raman.", 1.0, ("ep3",)),
    FactView("f6", "atlas", "kafka", "USES", "priya raman leads project atlas.", 0.1, ("ep9",)),
]


def _input(facts: list[FactView] = FACTS) -> SummaryInput:
    centrality = {"priya": 0.35, "kenji": 0.25, "team": 0.2, "atlas": 0.12, "kafka": 0.08}
    return SummaryInput(level=0, members=PEOPLE, central=["priya", "kenji", "team"],
                        centrality=centrality, facts=facts)


def test_extractive_report() -> None:
    summarizer = ExtractiveSummarizer(key_facts=3)
    assert isinstance(summarizer, CommunitySummarizer)
    report = summarizer.summarize(_input())
    assert report.title == "Priya Raman, Kenji Watanabe & Atlas Team — leads, maintains"
    assert report.key_facts == ("f1", "f5", "f2")  # centrality x evidence
    assert report.citations == ("ep1", "ep2", "ep3")  # episodes of the key facts, in order
    assert "5 entities (2 people, 1 organization, 1 product, 1 technology)" in report.summary
    assert "(1) Priya Raman leads Project Atlas." in report.summary
    assert "Main relations: leads (2)" in report.summary
    assert summarizer.name == "extractive/1"


def test_rank_drops_text_duplicates_and_keeps_order_stable() -> None:
    ranked = [f.id for f in rank_facts(_input())]
    assert "f6" not in ranked  # same text as f1, weaker
    assert ranked == [f.id for f in rank_facts(_input(list(reversed(FACTS))))]


def test_key_topics_are_themes_then_central_things() -> None:
    topics = key_topics(_input())
    assert topics[:2] == ["leadership", "reporting lines"]
    assert "Atlas Team" in topics and "Priya Raman" not in topics  # people are not topics


def test_report_of_a_parent_names_its_children_and_empty_is_safe() -> None:
    item = SummaryInput(level=1, members=PEOPLE[:2], central=[], centrality={}, facts=[],
                        children=["A — leads", "B — uses"])
    report = ExtractiveSummarizer().summarize(item)
    assert "Made of 2 sub-communities: A — leads; B — uses." in report.summary
    assert report.key_facts == () and report.citations == ()


def test_build_communities_is_complete_and_stable() -> None:
    entities = [EntityView(f"e{i:02d}", f"E{i}", "PERSON") for i in range(12)]
    edges = [(a, b) for block in (range(6), range(6, 12)) for a in block for b in block if a < b]
    facts = [FactView(f"f{a}-{b}", f"e{a:02d}", f"e{b:02d}", "COLLABORATED_WITH",
                      f"E{a} works with E{b}", 1.0, (f"ep{a}",)) for a, b in edges]
    facts.append(FactView("bridge", "e00", "e06", "RELATED_TO", "bridge", 0.2, ("ep0",)))
    graph = project_views(entities, facts)
    params = BuildParams(max_size=4, seed=3)
    built = build_communities(graph, "g", params=params, summarizer=ExtractiveSummarizer(),
                              now=NOW)
    again = build_communities(graph, "g", params=params, summarizer=ExtractiveSummarizer(),
                              now=NOW)
    assert built.communities == again.communities
    by_id = {c.id: c for c in built.communities}
    assert [c.level for c in built.communities] == sorted((c.level for c in built.communities),
                                                          reverse=True)
    for c in built.communities:
        assert c.id == community_id("g", c.level, c.entity_ids)
        assert c.entity_count == len(c.entity_ids) and c.summary and c.name
        assert not c.summary_stale and c.summary_version == 1 and c.last_summarized_at == NOW
        if c.level == 0:
            assert len(c.entity_ids) <= 4
        if c.parent_id:
            assert c.id in by_id[c.parent_id].child_ids
            assert set(c.entity_ids) <= set(by_id[c.parent_id].entity_ids)
        assert set(c.citations) <= {e for f in facts if f.id in c.key_facts for e in f.episodes}
    roots = [c for c in built.communities if c.parent_id is None]
    assert sorted(e for r in roots for e in r.entity_ids) == [e.id for e in entities]
    assert sorted(r.entity_ids for r in roots) == [[f"e{i:02d}" for i in range(6)],
                                                    [f"e{i:02d}" for i in range(6, 12)]]
    assert -0.5 < built.modularity < 1.0  # of the leaves: cliques cut to size 4 score low


def test_modal_community() -> None:
    assert modal_community([]) is None
    assert modal_community([("a", 1.0), ("b", 1.0), ("b", 0.1)]) == "b"  # most frequent
    assert modal_community([("a", 1.0), ("b", 2.0)]) == "b"  # tie: heavier
    assert modal_community([("b", 1.0), ("a", 1.0)]) == "a"  # tie: smaller id


def test_assign_new_entities_propagates_through_new_neighbours() -> None:
    known = {"x1": "cx", "x2": "cx", "y1": "cy"}
    adjacency = {
        "n1": [("x1", 1.0), ("x2", 1.0), ("y1", 1.0)],  # modal: cx
        "n2": [("n1", 1.0)],  # only new neighbours: joins after n1 joined
        "n3": [("n4", 1.0)],  # never reaches a community
        "n4": [("n3", 1.0)],
        "y1": [("n1", 1.0)],
    }
    assigned = assign_new_entities(["n2", "n1", "n3", "n4", "x1"], adjacency, known)
    assert assigned == {"n1": "cx", "n2": "cx"}


def test_stale_communities_include_ancestors() -> None:
    parents = {"leaf1": "mid", "leaf2": "mid", "mid": "root", "root": None, "other": None}
    leaf_of = {"a": "leaf1", "b": "leaf2", "c": "other"}
    assert stale_communities(["a"], leaf_of, parents.get) == ["leaf1", "mid", "root"]
    assert stale_communities(["a", "b", "zz"], leaf_of, parents.get) == [
        "leaf1", "leaf2", "mid", "root"]
    assert with_ancestors([], parents.get) == []


@pytest.mark.parametrize(("changed", "total", "expected"),
                         [(0, 100, False), (10, 100, False), (11, 100, True), (1, 0, True),
                          (0, 0, False)])
def test_needs_rebuild(changed: int, total: int, expected: bool) -> None:
    assert needs_rebuild(changed, total, 0.1) is expected
