"""Hierarchical Leiden detection, projection and metrics (pure functions)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import networkx as nx
import numpy as np
import pytest
from sklearn.metrics import normalized_mutual_info_score

from knotwork.communities import detection
from knotwork.communities.detection import Hierarchy, detect, leiden, modularity, to_igraph
from knotwork.communities.metrics import community_metrics
from knotwork.communities.projection import (
    EntityView,
    FactView,
    ProjectedGraph,
    fact_weight,
    from_edge_list,
    project,
    project_views,
)
from knotwork.domain.models import Entity, EntityType, Fact, RelationType
from knotwork.settings import LeidenEngine

NOW = datetime(2025, 6, 1, tzinfo=UTC)


def _lfr(n: int = 500, seed: int = 3) -> tuple[ProjectedGraph, list[int]]:
    g = nx.LFR_benchmark_graph(n, 3, 1.5, 0.1, average_degree=10, max_degree=40,
                               min_community=20, max_community=80, seed=seed)
    graph = from_edge_list([(f"n{a:05d}", f"n{b:05d}", 1.0) for a, b in g.edges() if a != b])
    truth_of: dict[int, int] = {}
    for label, community in enumerate({frozenset(g.nodes[v]["community"]) for v in g}):
        for v in community:
            truth_of[v] = label
    return graph, [truth_of[int(name[1:])] for name in graph.nodes]


@pytest.fixture(scope="module")
def lfr() -> tuple[ProjectedGraph, list[int]]:
    return _lfr()


def _check_hierarchy(h: Hierarchy, n: int, max_size: int) -> None:
    by_key = {c.key: c for c in h.communities}
    leaves = [c for c in h.communities if not c.children]
    assert all(c.level == 0 for c in leaves)
    assert all(len(c.members) <= max_size for c in leaves)
    for partition in (leaves, h.roots, *(h.cut(level) for level in range(h.levels))):
        members = sorted(m for c in partition for m in c.members)
        assert members == list(range(n))  # a partition of every node
    for c in h.communities:
        assert list(c.members) == sorted(c.members)
        if c.parent is not None:
            parent = by_key[c.parent]
            assert parent.level > c.level
            assert c.key in parent.children
        if c.children:
            assert len(c.children) >= 2
            assert c.level == 1 + max(by_key[k].level for k in c.children)
            union = sorted(m for k in c.children for m in by_key[k].members)
            assert union == list(c.members)
    assert h.levels == 1 + max(c.level for c in h.communities)
    for node, leaf in enumerate(h.leaf_of):
        assert node in by_key[leaf].members and not by_key[leaf].children
        assert h.ancestors(leaf)[-1] in {r.key for r in h.roots}


@pytest.mark.parametrize("engine", list(LeidenEngine))
def test_same_seed_gives_identical_memberships(lfr: tuple[ProjectedGraph, list[int]],
                                               engine: LeidenEngine) -> None:
    graph, _ = lfr
    first = detect(graph, max_size=15, seed=11, engine=engine)
    second = detect(graph, max_size=15, seed=11, engine=engine)
    assert first == second
    _check_hierarchy(first, len(graph.nodes), 15)
    for level in range(first.levels):
        assert first.membership(level) == second.membership(level)


def test_input_order_does_not_matter(lfr: tuple[ProjectedGraph, list[int]]) -> None:
    graph, _ = lfr
    facts = list(graph.facts)
    random.Random(5).shuffle(facts)
    shuffled = project_views(reversed(list(graph.entities.values())), facts)
    assert shuffled.nodes == graph.nodes and shuffled.edges == graph.edges
    assert detect(shuffled, max_size=15, seed=2) == detect(graph, max_size=15, seed=2)


@pytest.mark.parametrize("max_size", [4, 10, 25])
def test_max_size_levels_and_parents(lfr: tuple[ProjectedGraph, list[int]], max_size: int) -> None:
    graph, _ = lfr
    h = detect(graph, max_size=max_size, seed=7)
    _check_hierarchy(h, len(graph.nodes), max_size)
    assert h.levels >= 2  # true communities of 20-80 nodes must be refined


def test_small_graph_is_one_level() -> None:
    graph = from_edge_list([("a", "b", 1.0), ("b", "c", 1.0), ("c", "a", 1.0),
                            ("x", "y", 1.0), ("y", "z", 1.0), ("z", "x", 1.0), ("c", "x", 0.1)])
    h = detect(graph, max_size=10)
    assert h.levels == 1
    assert sorted(sorted(graph.nodes[i] for i in c.members) for c in h.communities) == [
        ["a", "b", "c"], ["x", "y", "z"]]


def test_a_clique_is_still_split_to_max_size() -> None:
    names = [f"k{i:02d}" for i in range(12)]
    graph = from_edge_list([(a, b, 1.0) for i, a in enumerate(names) for b in names[i + 1:]])
    h = detect(graph, max_size=5)
    _check_hierarchy(h, 12, 5)


def test_cliques_left_whole_are_split_together() -> None:
    """Three 12-cliques chained by single edges: each is refined (with resolution boosts and
    maybe the fallback) in the same batched runs."""
    names = [[f"c{c}k{i:02d}" for i in range(12)] for c in range(3)]
    edges = [(a, b, 1.0) for clique in names for i, a in enumerate(clique) for b in clique[i + 1:]]
    edges += [(names[0][0], names[1][0], 1.0), (names[1][1], names[2][0], 1.0)]
    graph = from_edge_list(edges)
    h = detect(graph, max_size=5)
    _check_hierarchy(h, 36, 5)
    assert h == detect(graph, max_size=5)


@pytest.mark.parametrize("batch", [1, 600, 10**9])
def test_batch_size_keeps_a_valid_deterministic_hierarchy(
        lfr: tuple[ProjectedGraph, list[int]], batch: int, monkeypatch: pytest.MonkeyPatch) -> None:
    graph, _ = lfr
    monkeypatch.setattr(detection, "BATCH_NODES", batch)
    h = detect(graph, max_size=8, seed=3)
    _check_hierarchy(h, len(graph.nodes), 8)
    assert h.levels >= 3
    assert h == detect(graph, max_size=8, seed=3)


@pytest.mark.parametrize("engine", list(LeidenEngine))
def test_batched_refinement_splits_each_community_as_if_alone(
        lfr: tuple[ProjectedGraph, list[int]], engine: LeidenEngine) -> None:
    """One Leiden run over many communities (CPM with per-community node weights) finds, in
    each, clusters as good as a modularity run on that community's own subgraph."""
    graph, _ = lfr
    g = to_igraph(graph)
    label = np.asarray(leiden(g, 1.0, seed=3, engine=engine), dtype=np.int64)
    communities = [np.flatnonzero(label == c) for c in range(int(label.max()) + 1)]
    communities = [c for c in communities if len(c) > 15]
    assert len(communities) >= 5
    split = np.zeros(int(label.max()) + 1, dtype=bool)
    split[[int(label[c[0]]) for c in communities]] = True
    level = detection._Level(g, detection._edge_arrays(graph),
                             np.arange(len(graph.edges), dtype=np.int64), label, split)
    batched = detection._refine(level, communities, label, 1.0, 5, 2, engine)
    assert len(batched) == len(communities)
    ours, alone, ours_count, alone_count = [], [], 0, 0
    for members, parts in zip(communities, batched, strict=True):
        assert sorted(int(v) for part in parts for v in part) == members.tolist()
        sub = g.induced_subgraph(members.tolist())
        local = {int(v): k for k, v in enumerate(members)}
        membership = [0] * len(members)
        for cluster, part in enumerate(parts):
            for v in part:
                membership[local[int(v)]] = cluster
        separate = leiden(sub, 1.0, seed=5, engine=engine)
        ours.append(modularity(sub, membership))
        alone.append(modularity(sub, separate))
        ours_count += len(parts)
        alone_count += len(set(separate))
    assert sum(ours) / len(ours) == pytest.approx(sum(alone) / len(alone), abs=0.01)
    assert ours_count == pytest.approx(alone_count, rel=0.15)


def test_empty_graph_and_bad_parameters() -> None:
    empty = project_views([], [])
    assert detect(empty) == Hierarchy([], [], 0)
    with pytest.raises(ValueError):
        detect(empty, max_size=1)
    with pytest.raises(ValueError):
        detect(empty, resolution=0)


@pytest.mark.parametrize("engine", list(LeidenEngine))
def test_lfr_nmi_is_reasonable(lfr: tuple[ProjectedGraph, list[int]],
                               engine: LeidenEngine) -> None:
    graph, truth = lfr
    h = detect(graph, max_size=1000, seed=1, engine=engine)
    found = h.membership(0)
    assert normalized_mutual_info_score(truth, found) > 0.9
    assert modularity(graph, found) > modularity(graph, truth) - 0.02


def test_metrics_add_up_to_modularity(lfr: tuple[ProjectedGraph, list[int]]) -> None:
    graph, _ = lfr
    h = detect(graph, max_size=30, seed=4)
    total = graph.total_weight
    incident: dict[str, list[FactView]] = {}
    for fact in graph.facts:
        incident.setdefault(fact.source, []).append(fact)
        incident.setdefault(fact.target, []).append(fact)
    contributions = 0.0
    for community in h.cut(0):
        members = [graph.nodes[i] for i in community.members]
        facts = {f.id: f for m in members for f in incident[m]}.values()
        metrics = community_metrics(members, facts, total)
        contributions += metrics.modularity_contribution
        assert 0.0 <= metrics.internal_density <= 1.0
        assert 0.0 <= metrics.external_connectivity <= 1.0
        assert abs(sum(metrics.centrality.values()) - 1.0) < 1e-6
        assert set(metrics.central) <= set(members) and len(metrics.central) <= 5
        assert set(metrics.representative) <= set(members)
    assert contributions == pytest.approx(modularity(graph, h.membership(0)), abs=1e-9)
    assert modularity(to_igraph(graph), h.membership(0)) > 0.4  # leaves split true communities


def test_metrics_of_a_closed_clique() -> None:
    facts = [FactView(f"f{a}{b}", a, b, "RELATED_TO", "") for a, b in
             [("a", "b"), ("a", "c"), ("b", "c"), ("c", "d")]]
    clique = community_metrics(["a", "b", "c"], facts, total_weight=4.0)
    assert clique.internal_density == 1.0
    assert clique.external_connectivity == pytest.approx(1 / 7)
    assert clique.central == ("a", "b", "c")  # equal PageRank inside: by id
    assert clique.representative == ("a", "b", "c")  # c leaks a third of its weight outside
    alone = community_metrics(["a", "b", "c", "d"], facts, total_weight=4.0)
    assert alone.external_connectivity == 0.0
    assert alone.modularity_contribution == pytest.approx(1.0 - 1.0)


def _entity(key: str) -> Entity:
    return Entity(id=key, group_id="g", name=key.upper(), canonical_name=key, type=EntityType.PERSON,
                  created_at=NOW, updated_at=NOW)


def _fact(key: str, a: str, b: str, **kw: object) -> Fact:
    data: dict[str, object] = {"id": key, "group_id": "g", "source_id": a, "target_id": b,
                               "type": RelationType.WORKS_AT, "fact": key, "created_at": NOW}
    data.update(kw)
    return Fact.model_validate(data)


def test_projection_keeps_the_current_graph_only() -> None:
    entities = [_entity(k) for k in "abcdefg"]
    later, earlier = NOW + timedelta(days=1), NOW - timedelta(days=1)
    facts = [
        _fact("ab", "a", "b", episodes=["e1", "e2", "e3"], confidence=0.5),
        _fact("ba", "b", "a"),  # parallel: summed
        _fact("bc-old", "b", "c", invalid_at=earlier),
        _fact("bd-future", "b", "d", valid_at=later),
        _fact("be-expired", "b", "e", expired_at=earlier),
        _fact("bf-ends-later", "b", "f", invalid_at=later),
        _fact("gg-self", "g", "g"),
        _fact("ax-ghost", "a", "x"),
    ]
    graph = project(entities, facts, NOW)
    assert graph.nodes == ["a", "b", "f"]
    assert [f.id for f in graph.facts] == ["ab", "ba", "bf-ends-later"]
    ab = fact_weight(0.5, 3) + fact_weight(1.0, 0)
    assert graph.edges == [(0, 1, pytest.approx(ab)), (1, 2, 1.0)]
    assert fact_weight(1.0, 4) > fact_weight(1.0, 1) > fact_weight(0.2, 1)
    assert graph.entities["a"] == EntityView("a", "A", "PERSON")
