"""Hierarchical Leiden over a :class:`ProjectedGraph` (igraph + leidenalg), pure and seeded.

Top-down, like graspologic's ``hierarchical_leiden``: Leiden (modularity with a resolution) on
the whole graph, then every community larger than ``max_size`` is split by Leiden on its
induced subgraph, recursively, until every leaf fits. Levels count from the bottom: a leaf is
level 0 and a parent is one above its highest child, so the leaves partition the graph, the
roots (communities without a parent) partition it too, and ``cut(level)`` gives a partition at
any level. Same graph + same seed => identical memberships.

Two Leiden implementations by the same author: igraph's C core (default: ~6x faster than
leidenalg here, see bench/communities.py) and the leidenalg package.
"""

from __future__ import annotations

import random
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from knotwork.communities.projection import ProjectedGraph
from knotwork.settings import LeidenEngine

if TYPE_CHECKING:
    import igraph as ig

T = TypeVar("T")
K = TypeVar("K")

MAX_RESOLUTION_BOOSTS = 6  # a community Leiden will not split: retry at 2x, 4x, ... resolution
_IGRAPH_RNG = threading.Lock()  # igraph's RNG is process-wide: one seeded run at a time


@dataclass(frozen=True, slots=True)
class DetectedCommunity:
    key: int  # position in Hierarchy.communities
    level: int
    members: tuple[int, ...]  # node indices, ascending
    parent: int | None
    children: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Hierarchy:
    communities: list[DetectedCommunity]
    leaf_of: list[int]  # node index -> key of its leaf community
    levels: int  # highest level + 1

    @property
    def roots(self) -> list[DetectedCommunity]:
        return [c for c in self.communities if c.parent is None]

    def at_level(self, level: int) -> list[DetectedCommunity]:
        return [c for c in self.communities if c.level == level]

    def cut(self, level: int) -> list[DetectedCommunity]:
        """The partition at ``level``: the highest community at or below it on each path."""
        return cut([(c.level, c.parent, c) for c in self.communities], level,
                   {c.key: c.level for c in self.communities})

    def membership(self, level: int = 0) -> list[int]:
        """Node index -> key of its community in :meth:`cut` (``level`` 0: the leaves)."""
        out = [-1] * len(self.leaf_of)
        for community in self.cut(level):
            for node in community.members:
                out[node] = community.key
        return out

    def ancestors(self, key: int) -> list[int]:
        """Keys from ``key`` (included) up to its root."""
        chain = [key]
        parent = self.communities[key].parent
        while parent is not None:
            chain.append(parent)
            parent = self.communities[parent].parent
        return chain


def cut(items: Sequence[tuple[int, K | None, T]], level: int,
              level_of: dict[K, int]) -> list[T]:
    """Items (level, parent key, item) whose level <= ``level`` < their parent's level."""
    return [item for lvl, parent, item in items
            if lvl <= level and (parent is None or level_of.get(parent, level + 1) > level)]


def to_igraph(graph: ProjectedGraph) -> ig.Graph:
    import igraph as ig

    pairs = [(i, j) for i, j, _ in graph.edges]
    return ig.Graph(n=len(graph.nodes), edges=pairs,
                    edge_attrs={"weight": [w for _, _, w in graph.edges]})


def leiden(g: ig.Graph, resolution: float, seed: int, iterations: int = 2,
           engine: LeidenEngine = LeidenEngine.IGRAPH) -> list[int]:
    """One seeded Leiden run maximising modularity with ``resolution``; membership per vertex."""
    if g.vcount() == 0:
        return []
    if engine is LeidenEngine.LEIDENALG:
        import leidenalg as la

        partition = la.find_partition(
            g, la.RBConfigurationVertexPartition, weights="weight",
            resolution_parameter=resolution, n_iterations=iterations, seed=seed)
        return list(partition.membership)
    import igraph as ig

    with _IGRAPH_RNG:
        ig.set_random_number_generator(random.Random(seed))
        try:
            clustering = g.community_leiden(objective_function="modularity", weights="weight",
                                            resolution=resolution, n_iterations=iterations)
        finally:
            ig.set_random_number_generator(random)  # igraph's default generator
    return list(clustering.membership)


def modularity(graph: ProjectedGraph | ig.Graph, membership: Sequence[int],
               resolution: float = 1.0) -> float:
    g = to_igraph(graph) if isinstance(graph, ProjectedGraph) else graph
    if g.ecount() == 0:
        return 0.0
    return float(g.modularity(list(membership), weights="weight", resolution=resolution))


def _groups(membership: Sequence[int], members: Sequence[int]) -> list[list[int]]:
    """Split ``members`` by membership label; groups ordered by their smallest member."""
    groups: dict[int, list[int]] = {}
    for local, label in enumerate(membership):
        groups.setdefault(label, []).append(members[local])
    return sorted((sorted(g) for g in groups.values()), key=lambda g: g[0])


def _chunks(sub: ig.Graph, members: Sequence[int], max_size: int) -> list[list[int]]:
    """Deterministic fallback split: breadth-first order, cut into pieces of ``max_size``."""
    seen = [False] * sub.vcount()
    order: list[int] = []
    for start in range(sub.vcount()):
        if seen[start]:
            continue
        seen[start] = True
        queue = deque([start])
        while queue:
            v = queue.popleft()
            order.append(v)
            for u in sorted(sub.neighbors(v)):
                if not seen[u]:
                    seen[u] = True
                    queue.append(u)
    pieces = [order[i:i + max_size] for i in range(0, len(order), max_size)]
    return sorted((sorted(members[v] for v in piece) for piece in pieces), key=lambda p: p[0])


def _split(g: ig.Graph, members: list[int], resolution: float, seed: int, iterations: int,
           max_size: int, engine: LeidenEngine) -> list[list[int]]:
    sub = g.induced_subgraph(members)  # vertex k of sub is members[k] (members ascending)
    boost = resolution
    for _ in range(MAX_RESOLUTION_BOOSTS + 1):
        parts = _groups(leiden(sub, boost, seed, iterations, engine), members)
        if len(parts) > 1:
            return parts
        boost *= 2.0
    return _chunks(sub, members, max_size)


def detect(graph: ProjectedGraph, *, resolution: float = 1.0, max_size: int = 10,
           seed: int = 42, iterations: int = 2,
           engine: LeidenEngine = LeidenEngine.IGRAPH) -> Hierarchy:
    """Hierarchical Leiden with recursive refinement until no leaf exceeds ``max_size``."""
    if max_size < 2:
        raise ValueError("max_size must be at least 2")
    if resolution <= 0:
        raise ValueError("resolution must be positive")
    n = len(graph.nodes)
    if n == 0:
        return Hierarchy([], [], 0)
    g = to_igraph(graph)
    # (members, parent slot) in creation order; children filled in as they are created
    raw_members: list[list[int]] = []
    raw_parent: list[int | None] = []
    raw_children: list[list[int]] = []
    stack: list[tuple[list[int], int | None]] = [
        (part, None) for part in reversed(_groups(leiden(g, resolution, seed, iterations, engine),
                                                  list(range(n))))]
    while stack:
        members, parent = stack.pop()
        slot = len(raw_members)
        raw_members.append(members)
        raw_parent.append(parent)
        raw_children.append([])
        if parent is not None:
            raw_children[parent].append(slot)
        if len(members) > max_size:
            parts = _split(g, members, resolution, seed, iterations, max_size, engine)
            stack.extend((part, slot) for part in reversed(parts))
    return _finish(raw_members, raw_parent, raw_children, n)


def _finish(members: list[list[int]], parents: list[int | None], children: list[list[int]],
            n: int) -> Hierarchy:
    height = [0] * len(members)
    for slot in reversed(range(len(members))):  # children are created after their parent
        if children[slot]:
            height[slot] = 1 + max(height[c] for c in children[slot])
    communities = [
        DetectedCommunity(slot, height[slot], tuple(members[slot]), parents[slot],
                          tuple(children[slot]))
        for slot in range(len(members))
    ]
    leaf_of = [-1] * n
    for community in communities:
        if not community.children:
            for node in community.members:
                leaf_of[node] = community.key
    return Hierarchy(communities, leaf_of, 1 + max(height))
