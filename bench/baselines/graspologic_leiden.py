"""graspologic's hierarchical Leiden on the graph Knotwork's communities are built from.

The graph is the store's current fact graph projected exactly as the community build does it
(``knotwork.communities.projection.project``: current facts, weight = confidence x
(1 + ln evidence), parallel facts summed). On it, Knotwork's ``detect`` (the product's
resolution, max leaf size and seed) and graspologic's ``hierarchical_leiden`` (its Rust core
``graspologic_native.hierarchical_leiden``, which graspologic's Python function wraps; same
max cluster size and seed; see ``bench/communities.py``) are timed back to back; for both
leaf partitions: modularity, leaf count, and — over the people whose gold entity maps to one
graph entity — NMI and pairwise P/R/F1 against the world's teams.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from bench.quality_metrics import pairwise_scores
from knotwork.communities.projection import ProjectedGraph
from knotwork.settings import LeidenEngine


@dataclass
class Partition:
    seconds: float
    leaves: int
    modularity: float
    team_nmi: float | None
    team_precision: float | None
    team_recall: float | None
    team_f1: float | None


def nmi(truth: list[str], predicted: list[int]) -> float | None:
    if len(truth) < 2:
        return None
    from sklearn.metrics import normalized_mutual_info_score

    return round(float(normalized_mutual_info_score(truth, predicted)), 4)


def _score(graph: ProjectedGraph, membership: list[int], seconds: float,
           team_of: Mapping[str, str]) -> Partition:
    from knotwork.communities.detection import modularity

    people = [(team, membership[graph.index[node]]) for node, team in sorted(team_of.items())
              if node in graph.index]
    pairs = pairwise_scores([(team, str(leaf)) for team, leaf in people])
    return Partition(round(seconds, 3), len(set(membership)),
                     round(modularity(graph, membership), 4),
                     nmi([t for t, _ in people], [leaf for _, leaf in people]),
                     pairs.precision, pairs.recall, pairs.f1)


def knotwork_partition(graph: ProjectedGraph, resolution: float, max_size: int, seed: int,
                       team_of: Mapping[str, str],
                       engine: LeidenEngine = LeidenEngine.IGRAPH) -> Partition:
    from knotwork.communities.detection import detect

    t0 = time.perf_counter()
    membership = detect(graph, resolution=resolution, max_size=max_size, seed=seed,
                        engine=engine).membership(0)
    return _score(graph, membership, time.perf_counter() - t0, team_of)


def graspologic_partition(graph: ProjectedGraph, max_size: int, seed: int,
                          team_of: Mapping[str, str]) -> Partition | None:
    """None when ``graspologic-native`` (the ``bench`` extra) is not installed."""
    try:
        import graspologic_native  # noqa: F401

        from bench.communities import graspologic_leaves
    except ImportError:
        return None
    edges = [(graph.nodes[i], graph.nodes[j], w) for i, j, w in graph.edges]
    t0 = time.perf_counter()
    membership = graspologic_leaves(edges, graph.index, max_size, seed)
    return _score(graph, membership, time.perf_counter() - t0, team_of)
