"""Per-community metrics (design doc 003, Community schema), computed locally.

Everything here needs only the community's members, the current facts touching them and the
total edge weight of the graph, so a full build and an incremental refresh of one community
compute the same numbers the same way.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from knotwork.communities.projection import FactView

TOP_ENTITIES = 5


@dataclass(frozen=True, slots=True)
class CommunityMetrics:
    central: tuple[str, ...]  # by PageRank within the community, best first
    representative: tuple[str, ...]  # most embedded members, best first
    centrality: dict[str, float]  # PageRank within, per member (sums to 1)
    internal_weight: float
    internal_edges: int
    modularity_contribution: float  # e_c / m - resolution * (K_c / 2m)^2
    internal_density: float  # internal entity pairs linked / possible pairs
    external_connectivity: float  # share of the members' edge weight leaving the community


def split_facts(members: Collection[str], facts: Iterable[FactView]
                ) -> tuple[list[FactView], list[FactView]]:
    """(internal, boundary) facts: both endpoints members, or exactly one."""
    internal: list[FactView] = []
    boundary: list[FactView] = []
    for fact in facts:
        inside = (fact.source in members) + (fact.target in members)
        if inside == 2 and fact.source != fact.target:
            internal.append(fact)
        elif inside == 1:
            boundary.append(fact)
    return internal, boundary


def _pagerank(members: list[str], pairs: dict[tuple[int, int], float]) -> list[float]:
    n = len(members)
    if n == 0:
        return []
    if not pairs:
        return [1.0 / n] * n
    import igraph as ig

    edges = sorted(pairs)
    g = ig.Graph(n=n, edges=edges, edge_attrs={"weight": [pairs[e] for e in edges]})
    return [float(x) for x in g.pagerank(weights="weight", directed=False)]


def community_metrics(members: Iterable[str], facts: Iterable[FactView], total_weight: float,
                      *, resolution: float = 1.0, top: int = TOP_ENTITIES) -> CommunityMetrics:
    """``facts``: current facts touching the members (others are ignored)."""
    ordered = sorted(set(members))
    member_set = set(ordered)
    internal, boundary = split_facts(member_set, facts)
    index = {m: i for i, m in enumerate(ordered)}
    pairs: dict[tuple[int, int], float] = {}
    inner_strength = [0.0] * len(ordered)
    outer_strength = [0.0] * len(ordered)
    for fact in internal:
        a, b = index[fact.source], index[fact.target]
        key = (a, b) if a < b else (b, a)
        pairs[key] = pairs.get(key, 0.0) + fact.weight
        inner_strength[a] += fact.weight
        inner_strength[b] += fact.weight
    for fact in boundary:
        inside = fact.source if fact.source in member_set else fact.target
        outer_strength[index[inside]] += fact.weight
    w_in = sum(pairs.values())
    w_out = sum(outer_strength)
    strength = 2.0 * w_in + w_out
    rank = _pagerank(ordered, pairs)
    centrality = {m: rank[i] for i, m in enumerate(ordered)}
    central = sorted(ordered, key=lambda m: (-centrality[m], m))[:top]

    def embedded(i: int) -> float:
        total = inner_strength[i] + outer_strength[i]
        share = inner_strength[i] / total if total else 0.0
        return share * math.log1p(inner_strength[i])

    representative = [ordered[i] for i in sorted(range(len(ordered)),
                                                 key=lambda i: (-embedded(i), ordered[i]))][:top]
    n = len(ordered)
    possible = n * (n - 1) / 2
    m = float(total_weight)
    contribution = (w_in / m - resolution * (strength / (2.0 * m)) ** 2) if m > 0 else 0.0
    return CommunityMetrics(
        central=tuple(central),
        representative=tuple(representative),
        centrality=centrality,
        internal_weight=w_in,
        internal_edges=len(pairs),
        modularity_contribution=contribution,
        internal_density=len(pairs) / possible if possible else 0.0,
        external_connectivity=w_out / strength if strength else 0.0,
    )
