"""Graph operations over the GraphStore port: k-hop traversal, subgraph extraction, paths.

Design doc 003, "Graph APIs". Traversal is breadth-first, one ``expand_facts`` call per hop
(so it runs the same on FalkorDB and Neo4j); direction, relationship type and confidence
filters are applied per hop, so a filtered-out edge is never walked through.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from knotwork.domain.models import DERIVED_METHODS, Community, Entity, Fact
from knotwork.domain.ports import CacheLayer, GraphStore, QueryCache
from knotwork.domain.timeutil import holds_at

MAX_PATHS = 20


class Direction(StrEnum):
    OUTGOING = "OUTGOING"
    INCOMING = "INCOMING"
    BOTH = "BOTH"


@dataclass(frozen=True)
class EdgeFilter:
    relationship_types: frozenset[str] = frozenset()  # empty: every type
    direction: Direction = Direction.BOTH
    min_confidence: float = 0.0
    as_of: datetime | None = None
    include_invalid: bool = False

    def steps(self, fact: Fact, frontier: set[str]) -> list[str]:
        """Entities this fact leads to from the frontier (none when filtered out)."""
        if self.relationship_types and fact.type.value not in self.relationship_types:
            return []
        if fact.confidence < self.min_confidence:
            return []
        out = []
        if self.direction in (Direction.OUTGOING, Direction.BOTH) and fact.source_id in frontier:
            out.append(fact.target_id)
        if self.direction in (Direction.INCOMING, Direction.BOTH) and fact.target_id in frontier:
            out.append(fact.source_id)
        return out


@dataclass(frozen=True)
class GraphPath:
    entity_ids: tuple[str, ...]
    relationship_ids: tuple[str, ...]

    @property
    def length(self) -> int:
        return len(self.relationship_ids)


@dataclass
class Traversal:
    entities: list[Entity]
    relationships: list[Fact]
    paths: list[GraphPath]
    truncated: bool = False


@dataclass
class Subgraph:
    entities: list[Entity]
    relationships: list[Fact]
    communities: list[Community] = field(default_factory=list)


@dataclass
class PathResult:
    paths: list[GraphPath]
    shortest_path_length: int | None


class UnknownEntities(LookupError):
    def __init__(self, ids: Sequence[str]) -> None:
        super().__init__(f"unknown entity ids: {', '.join(ids[:5])}")
        self.ids = list(ids)


class GraphOps:
    def __init__(self, graph: GraphStore, group_id: str, *, hop_limit: int = 2000,
                 cache: QueryCache | None = None) -> None:
        self._graph = graph
        self._group = group_id
        self._hop_limit = hop_limit  # facts read per hop at most
        self._cache = cache

    def entities(self, ids: Sequence[str]) -> list[Entity]:
        """Entities by id, through the cache's entity layer (1 h) when there is one."""
        wanted = list(dict.fromkeys(ids))
        if self._cache is None or not wanted:
            return self._graph.get_entities(self._group, wanted)
        found: dict[str, Entity] = {}
        for eid, hit in zip(wanted, self._cache.get_many(CacheLayer.ENTITY, self._group, wanted), strict=True):
            if hit is not None:
                found[eid] = Entity.model_validate_json(hit)
        missing = [i for i in wanted if i not in found]
        for entity in self._graph.get_entities(self._group, missing) if missing else []:
            found[entity.id] = entity
            self._cache.set(CacheLayer.ENTITY, self._group, entity.id, entity.model_dump_json())
        return [found[i] for i in wanted if i in found]

    def require(self, ids: Sequence[str]) -> list[Entity]:
        wanted = list(dict.fromkeys(ids))
        found = self.entities(wanted)
        known = {e.id for e in found}
        missing = [i for i in wanted if i not in known]
        if missing:
            raise UnknownEntities(missing)
        return found

    def _hop(self, frontier: set[str], flt: EdgeFilter) -> list[Fact]:
        hits = self._graph.expand_facts(self._group, sorted(frontier), depth=1, as_of=flt.as_of,
                                        include_invalid=flt.include_invalid, limit=self._hop_limit,
                                        skip_methods=DERIVED_METHODS)
        return [h.fact for h in hits]

    def _bfs(self, seeds: Sequence[str], max_hops: int, flt: EdgeFilter, max_entities: int,
             stop_at: str | None = None
             ) -> tuple[dict[str, int], dict[str, list[tuple[str, str]]], dict[str, Fact], bool]:
        """depth of each reached entity, its predecessors (entity, fact) at minimal depth,
        the facts walked, and whether ``max_entities`` cut the search short."""
        depth = {s: 0 for s in seeds}
        preds: dict[str, list[tuple[str, str]]] = {}
        facts: dict[str, Fact] = {}
        frontier = set(seeds)
        truncated = False
        for hop in range(1, max_hops + 1):
            if not frontier or (stop_at is not None and stop_at in depth):
                break
            nxt: set[str] = set()
            for fact in self._hop(frontier, flt):
                for origin, target in ((fact.source_id, fact.target_id), (fact.target_id, fact.source_id)):
                    if origin not in frontier or target not in flt.steps(fact, {origin}):
                        continue
                    if target in depth and depth[target] < hop:
                        facts.setdefault(fact.id, fact)  # an edge between reached entities
                        continue
                    if target not in depth:
                        if len(depth) >= max_entities:
                            truncated = True
                            continue
                        depth[target] = hop
                        nxt.add(target)
                    facts.setdefault(fact.id, fact)
                    preds.setdefault(target, []).append((origin, fact.id))
            frontier = nxt
        return depth, preds, facts, truncated

    def traverse(self, entity_ids: Sequence[str], *, max_hops: int = 2, flt: EdgeFilter | None = None,
                 max_entities: int = 100) -> Traversal:
        flt = flt or EdgeFilter()
        seeds = [e.id for e in self.require(entity_ids)]
        depth, preds, facts, truncated = self._bfs(seeds, max_hops, flt, max_entities)
        order = sorted(depth, key=lambda i: (depth[i], i))
        entities = {e.id: e for e in self.entities(order)}
        paths = [_one_path(t, preds) for t in order if depth[t] > 0]
        return Traversal(entities=[entities[i] for i in order if i in entities],
                         relationships=sorted(facts.values(), key=lambda f: (-f.confidence, f.id)),
                         paths=paths, truncated=truncated)

    def subgraph(self, entity_ids: Sequence[str], *, include_hops: int = 0,
                 include_communities: bool = False, as_of: datetime | None = None,
                 include_invalid: bool = False, max_entities: int = 500) -> Subgraph:
        flt = EdgeFilter(as_of=as_of, include_invalid=include_invalid)
        seeds = [e.id for e in self.require(entity_ids)]
        depth = self._bfs(seeds, include_hops, flt, max_entities)[0]
        ids = sorted(depth, key=lambda i: (depth[i], i))
        facts = [f for f in self._graph.facts_between(self._group, ids)
                 if not f.derived and (include_invalid or holds_at(f.valid_at, f.invalid_at, as_of))]
        communities: list[Community] = []
        if include_communities:
            cids = sorted(set(self._graph.community_of(self._group, ids).values()))
            for cid in cids:
                community = self._graph.get_community(self._group, cid)
                if community is not None:
                    communities.append(community)
        entities = {e.id: e for e in self.entities(ids)}
        return Subgraph(entities=[entities[i] for i in ids if i in entities],
                        relationships=sorted(facts, key=lambda f: (-f.confidence, f.id)),
                        communities=communities)

    def paths(self, source_id: str, target_id: str, *, max_length: int = 4,
              flt: EdgeFilter | None = None, max_entities: int = 10_000) -> PathResult:
        """Every shortest path (up to ``MAX_PATHS``) of at most ``max_length`` edges."""
        flt = flt or EdgeFilter()
        self.require([source_id, target_id])
        if source_id == target_id:
            return PathResult([GraphPath((source_id,), ())], 0)
        depth, preds, _, _ = self._bfs([source_id], max_length, flt, max_entities, stop_at=target_id)
        if target_id not in depth:
            return PathResult([], None)
        found: list[GraphPath] = []

        def walk(node: str, ents: list[str], rels: list[str]) -> None:
            if len(found) >= MAX_PATHS:
                return
            if node == source_id:
                found.append(GraphPath(tuple(reversed(ents)), tuple(reversed(rels))))
                return
            for prev, fid in sorted(preds.get(node, [])):
                if depth.get(prev, -1) == depth[node] - 1:
                    walk(prev, [*ents, prev], [*rels, fid])

        walk(target_id, [target_id], [])
        return PathResult(found, depth[target_id])


def _one_path(target: str, preds: dict[str, list[tuple[str, str]]]) -> GraphPath:
    ents, rels = [target], []
    node = target
    while node in preds:
        prev, fid = min(preds[node])
        ents.append(prev)
        rels.append(fid)
        node = prev
    return GraphPath(tuple(reversed(ents)), tuple(reversed(rels)))
