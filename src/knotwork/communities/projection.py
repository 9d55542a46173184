"""Project a tenant's current fact graph into a weighted, undirected entity graph.

Pure: the input is entities and facts (domain models or the lighter views below), the output
is a :class:`ProjectedGraph` with nodes in sorted-id order and edges in sorted order, so the
same graph always yields the same projection (and, with the same seed, the same communities).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from knotwork.domain.models import Entity, Fact

MIN_CONFIDENCE = 0.05


@dataclass(frozen=True, slots=True)
class EntityView:
    """What detection and summaries need of an entity."""

    id: str
    name: str
    type: str
    evidence: int = 1
    confidence: float = 1.0


@dataclass(frozen=True, slots=True)
class FactView:
    """What detection and summaries need of a fact (a RELATES_TO edge)."""

    id: str
    source: str
    target: str
    type: str
    text: str
    confidence: float = 1.0
    episodes: tuple[str, ...] = ()

    @property
    def weight(self) -> float:
        return fact_weight(self.confidence, len(self.episodes))


def fact_weight(confidence: float, evidence: int) -> float:
    """Edge weight of one fact: confidence, times 1 + ln(evidence count)."""
    return max(float(confidence), MIN_CONFIDENCE) * (1.0 + math.log(max(1, evidence)))


def is_current(fact: Fact, now: datetime) -> bool:
    """Valid now (valid_at <= now < invalid_at) and not expired."""
    if fact.expired_at is not None and fact.expired_at <= now:
        return False
    if fact.valid_at is not None and fact.valid_at > now:
        return False
    return fact.invalid_at is None or fact.invalid_at > now


def entity_view(entity: Entity) -> EntityView:
    return EntityView(entity.id, entity.name, entity.type.value, entity.evidence_count,
                      entity.confidence)


def fact_view(fact: Fact) -> FactView:
    return FactView(fact.id, fact.source_id, fact.target_id, fact.type.value, fact.fact,
                    fact.confidence, tuple(fact.episodes))


@dataclass(slots=True)
class ProjectedGraph:
    """Nodes are the entities with at least one current fact to another entity.

    ``edges``: (i, j, weight) with i < j, parallel facts summed, sorted by (i, j).
    ``facts``: the current facts between projected nodes, sorted by id.
    """

    nodes: list[str]
    edges: list[tuple[int, int, float]]
    entities: dict[str, EntityView]
    facts: list[FactView]
    index: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.index:
            self.index = {node: i for i, node in enumerate(self.nodes)}

    @property
    def total_weight(self) -> float:
        return sum(w for _, _, w in self.edges)

    def neighbours(self) -> list[list[tuple[int, float]]]:
        adjacency: list[list[tuple[int, float]]] = [[] for _ in self.nodes]
        for i, j, w in self.edges:
            adjacency[i].append((j, w))
            adjacency[j].append((i, w))
        return adjacency


def project(entities: Iterable[Entity], facts: Iterable[Fact], now: datetime) -> ProjectedGraph:
    """The current (valid as of ``now``) fact graph."""
    return project_views((entity_view(e) for e in entities),
                         (fact_view(f) for f in facts if is_current(f, now)))


def project_views(entities: Iterable[EntityView], facts: Iterable[FactView]) -> ProjectedGraph:
    """Projection of views that are already filtered to the current graph."""
    known = {e.id: e for e in entities}
    kept = sorted((f for f in facts
                   if f.source != f.target and f.source in known and f.target in known),
                  key=lambda f: f.id)
    nodes = sorted({f.source for f in kept} | {f.target for f in kept})
    index = {node: i for i, node in enumerate(nodes)}
    weights: dict[tuple[int, int], float] = {}
    for f in kept:
        a, b = index[f.source], index[f.target]
        key = (a, b) if a < b else (b, a)
        weights[key] = weights.get(key, 0.0) + f.weight
    edges = [(a, b, w) for (a, b), w in sorted(weights.items())]
    return ProjectedGraph(nodes, edges, {n: known[n] for n in nodes}, kept, index)


def from_edge_list(edges: Sequence[tuple[str, str, float]]) -> ProjectedGraph:
    """A bare weighted graph (benchmarks, tests): nodes named by the edge endpoints."""
    names = sorted({a for a, _, _ in edges} | {b for _, b, _ in edges})
    entities = {n: EntityView(n, n, "CONCEPT") for n in names}
    facts = [FactView(f"f{i}", a, b, "RELATED_TO", f"{a} - {b}", min(1.0, w))
             for i, (a, b, w) in enumerate(edges)]
    return project_views(entities.values(), facts)
