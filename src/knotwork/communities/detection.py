"""Hierarchical Leiden over a :class:`ProjectedGraph` (igraph + leidenalg), pure and seeded.

Top-down, like graspologic's ``hierarchical_leiden``: Leiden (modularity with a resolution) on
the whole graph, then every community larger than ``max_size`` is split by Leiden maximising
the modularity of its induced subgraph, level by level, until every leaf fits (the oversize
communities of a level are split by Leiden runs on batches of them, see :class:`_Level`).
Levels count from the bottom: a leaf is level 0 and a parent is one above its highest child, so
the leaves partition the graph, the roots (communities without a parent) partition it too, and
``cut(level)`` gives a partition at any level. Same graph + same seed => identical memberships.

Two Leiden implementations by the same author: igraph's C core (default: ~6x faster than
leidenalg here, see bench/communities.py) and the leidenalg package.
"""

from __future__ import annotations

import random
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import numpy.typing as npt

from knotwork.communities.projection import ProjectedGraph
from knotwork.settings import LeidenEngine

if TYPE_CHECKING:
    import igraph as ig

T = TypeVar("T")
K = TypeVar("K")
Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]

MAX_RESOLUTION_BOOSTS = 6  # a community Leiden will not split: retry at 2x, 4x, ... resolution
BATCH_NODES = 4096  # communities refined by one Leiden run: at least this many nodes (or the rest)
# Leiden iterations when refining (the whole graph gets ``iterations``): like graspologic, one;
# a second pass costs about as much again for ~1% more modularity of the small leaves
REFINE_ITERATIONS = 1
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
        if level == 0:
            return list(self.leaf_of)  # cut(0) is the leaves
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
    return _seeded_leiden(g, seed, iterations, engine, resolution=resolution)


def _seeded_leiden(g: ig.Graph, seed: int, iterations: int, engine: LeidenEngine, *,
                   resolution: float = 1.0, node_weights: list[float] | None = None) -> list[int]:
    """Modularity with ``resolution``, or with ``node_weights`` the CPM with those weights
    (quality: sum over pairs in a cluster of A_ij - n_i n_j, resolution 1)."""
    if g.vcount() == 0:
        return []
    if engine is LeidenEngine.LEIDENALG:
        import leidenalg as la

        if node_weights is None:
            partition = la.find_partition(
                g, la.RBConfigurationVertexPartition, weights="weight",
                resolution_parameter=resolution, n_iterations=iterations, seed=seed)
        else:  # CPM's n_c (n_c - 1) / 2 differs from n_c^2 / 2 by a constant: same optimum
            partition = la.find_partition(
                g, la.CPMVertexPartition, weights="weight", node_sizes=node_weights,
                resolution_parameter=1.0, n_iterations=iterations, seed=seed)
        return list(partition.membership)
    import igraph as ig

    with _IGRAPH_RNG:
        ig.set_random_number_generator(random.Random(seed))
        try:
            if node_weights is None:
                clustering = g.community_leiden(
                    objective_function="modularity", weights="weight", resolution=resolution,
                    n_iterations=iterations)
            else:
                clustering = g.community_leiden(
                    objective_function="CPM", weights="weight", node_weights=node_weights,
                    resolution=1.0, n_iterations=iterations)
        finally:
            ig.set_random_number_generator(random)  # igraph's default generator
    return list(clustering.membership)


def modularity(graph: ProjectedGraph | ig.Graph, membership: Sequence[int],
               resolution: float = 1.0) -> float:
    g = to_igraph(graph) if isinstance(graph, ProjectedGraph) else graph
    if g.ecount() == 0:
        return 0.0
    return float(g.modularity(list(membership), weights="weight", resolution=resolution))


@dataclass(frozen=True, slots=True)
class _Edges:
    src: Ints  # edge k of the igraph graph is (src[k], dst[k]) with weight[k]
    dst: Ints
    weight: Floats


def _edge_arrays(graph: ProjectedGraph) -> _Edges:
    m = len(graph.edges)
    flat = np.fromiter(chain.from_iterable(graph.edges), dtype=np.float64,
                       count=3 * m).reshape(m, 3)
    return _Edges(flat[:, 0].astype(np.int64), flat[:, 1].astype(np.int64),
                  np.ascontiguousarray(flat[:, 2]))


def _partition(nodes: Ints, clusters: Ints) -> list[Ints]:
    """Split ``nodes`` (ascending) by cluster; groups ordered by their smallest member."""
    if len(nodes) == 0:
        return []
    order = np.argsort(clusters, kind="stable")  # stable: members stay ascending
    grouped, labels = nodes[order], clusters[order]
    starts = np.flatnonzero(np.concatenate(([True], labels[1:] != labels[:-1])))
    parts = np.split(grouped, starts[1:])
    return [parts[i] for i in np.argsort(grouped[starts], kind="stable")]


class _Level:
    """The graph of one refinement level: only the edges inside the communities to split.

    All those communities are split by a few Leiden runs on batches of them, each run on the
    union of the batch's induced subgraphs (one run per community costs more in calls than in
    Leiden; one run for all of them is slower than batches that stay in cache). Leiden never
    puts two disconnected vertices in one cluster, and with the CPM and node weight
    strength_i * sqrt(resolution / 2m_c) (strength and total weight m_c inside community c) the
    quality is the sum over communities of 2m_c times the modularity of c's own subgraph with
    ``resolution``: each community is split as by a separate Leiden run on its subgraph."""

    def __init__(self, g: ig.Graph, edges: _Edges, inner: Ints, label: Ints,
                 split: npt.NDArray[np.bool_]) -> None:
        """``inner``: indices of the edges of ``g`` (ascending, ``g`` holds only those edges,
        in that order); ``label``: node -> community; ``split``: community -> to be split."""
        src, dst = edges.src[inner], edges.dst[inner]
        community = label[src]
        keep = split[community] & (community == label[dst])
        self.inner = inner[keep]
        self.graph = g.subgraph_edges(np.flatnonzero(keep).tolist(), delete_vertices=False)
        weight = edges.weight[self.inner]
        n = g.vcount()
        self.strength = (np.bincount(src[keep], weight, minlength=n)
                         + np.bincount(dst[keep], weight, minlength=n))
        self.twice_m = np.bincount(label, self.strength, minlength=len(split))

    def clusters(self, nodes: Ints, label: Ints, resolution: float, seed: int, iterations: int,
                 engine: LeidenEngine) -> Ints:
        """A cluster per node of ``nodes`` (ascending, whole communities)."""
        twice_m = self.twice_m[label[nodes]]
        scale = np.sqrt(np.divide(resolution, twice_m, out=np.zeros(len(nodes)),
                                  where=twice_m > 0))
        sub = self.graph.induced_subgraph(nodes.tolist())  # vertex k is nodes[k]
        found = _seeded_leiden(sub, seed, iterations, engine,
                               node_weights=(self.strength[nodes] * scale).tolist())
        return np.asarray(found, dtype=np.int64)


def _refine(level: _Level, communities: list[Ints], label: Ints, resolution: float, seed: int,
            iterations: int, engine: LeidenEngine) -> list[list[Ints]]:
    """The Leiden clusters of each community (ordered by smallest member), in batches."""
    clusters: list[Ints] = []
    batch: list[Ints] = []
    size = 0
    for k, members in enumerate(communities):
        batch.append(members)
        size += len(members)
        if size < BATCH_NODES and k + 1 < len(communities):
            continue
        nodes = np.sort(np.concatenate(batch))
        found = level.clusters(nodes, label, resolution, seed, iterations, engine)
        clusters.extend(_partition(nodes, found))
        batch, size = [], 0
    by_community: dict[int, list[Ints]] = {}
    for part in clusters:  # a cluster lies in one community
        by_community.setdefault(int(label[part[0]]), []).append(part)
    return [by_community[int(label[members[0]])] for members in communities]


def _chunks(g: ig.Graph, members: Ints, max_size: int) -> list[Ints]:
    """Deterministic fallback split: breadth-first order, cut into pieces of ``max_size``."""
    sub = g.induced_subgraph(members.tolist())  # vertex k of sub is members[k] (ascending)
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
    pieces = [np.sort(members[order[i:i + max_size]]) for i in range(0, len(order), max_size)]
    return sorted(pieces, key=lambda p: int(p[0]))


class _Builder:
    """Communities in creation order (a parent before its children)."""

    def __init__(self, n: int) -> None:
        self.members: list[Ints] = []
        self.parents: list[int | None] = []
        self.children: list[list[int]] = []
        self.label = np.full(n, -1, dtype=np.int64)  # node -> its deepest community so far

    def add(self, members: Ints, parent: int | None) -> int:
        key = len(self.members)
        self.members.append(members)
        self.parents.append(parent)
        self.children.append([])
        if parent is not None:
            self.children[parent].append(key)
        self.label[members] = key
        return key

    def finish(self) -> Hierarchy:
        height = [0] * len(self.members)
        for slot in reversed(range(len(self.members))):  # children come after their parent
            if self.children[slot]:
                height[slot] = 1 + max(height[c] for c in self.children[slot])
        communities = [
            DetectedCommunity(slot, height[slot], tuple(self.members[slot].tolist()),
                              self.parents[slot], tuple(self.children[slot]))
            for slot in range(len(self.members))
        ]
        return Hierarchy(communities, self.label.tolist(), 1 + max(height))


def detect(graph: ProjectedGraph, *, resolution: float = 1.0, max_size: int = 10,
           seed: int = 42, iterations: int = 2,
           engine: LeidenEngine = LeidenEngine.IGRAPH) -> Hierarchy:
    """Hierarchical Leiden with refinement, level by level, until no leaf exceeds ``max_size``.

    A community Leiden leaves whole is retried at 2x, 4x, ... the resolution, then cut into
    breadth-first pieces."""
    if max_size < 2:
        raise ValueError("max_size must be at least 2")
    if resolution <= 0:
        raise ValueError("resolution must be positive")
    n = len(graph.nodes)
    if n == 0:
        return Hierarchy([], [], 0)
    g = to_igraph(graph)
    top = np.asarray(leiden(g, resolution, seed, iterations, engine), dtype=np.int64)
    built = _Builder(n)
    frontier = [key for key in (built.add(part, None)
                                for part in _partition(np.arange(n, dtype=np.int64), top))
                if len(built.members[key]) > max_size]
    edges = _edge_arrays(graph) if frontier else None
    within, inner = g, np.arange(len(graph.edges), dtype=np.int64)
    while frontier and edges is not None:
        split = np.zeros(len(built.members), dtype=bool)
        split[frontier] = True
        level = _Level(within, edges, inner, built.label, split)
        within, inner = level.graph, level.inner
        following: list[int] = []
        pending, boost = frontier, resolution
        for _ in range(MAX_RESOLUTION_BOOSTS + 1):
            if not pending:
                break
            unsplit: list[int] = []
            for key, parts in zip(pending, _refine(level, [built.members[k] for k in pending],
                                                   built.label, boost, seed,
                                                   min(iterations, REFINE_ITERATIONS), engine),
                                  strict=True):
                if len(parts) < 2:
                    unsplit.append(key)
                    continue
                for part in parts:
                    child = built.add(part, key)
                    if len(part) > max_size:
                        following.append(child)
            pending, boost = unsplit, boost * 2.0
        for key in pending:
            for part in _chunks(g, built.members[key], max_size):
                built.add(part, key)
        frontier = following
    return built.finish()
