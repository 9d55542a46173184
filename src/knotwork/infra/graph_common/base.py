"""The GraphStore logic shared by the Cypher adapters; subclasses only run queries."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, TypeVar

import structlog

from knotwork.domain.models import Entity, Episode, Fact, FactHit, GraphCounts
from knotwork.domain.timeutil import to_iso
from knotwork.infra.graph_common import cypher
from knotwork.infra.graph_common.communities import CommunityCypherMixin
from knotwork.infra.graph_common.lineage import LineageCypherMixin
from knotwork.infra.graph_common.records import (
    BATCH_SIZE,
    Row,
    batches,
    entity_to_row,
    episode_to_row,
    fact_to_row,
    row_to_entity,
    row_to_episode,
    row_to_fact,
    unique,
    validate_group_id,
)
from knotwork.infra.graph_common.resolution import ResolutionCypherMixin

log = structlog.get_logger(__name__)

M = TypeVar("M", Entity, Fact, Episode)


def _by_group(items: Sequence[M]) -> dict[str, list[M]]:
    grouped: dict[str, list[M]] = defaultdict(list)
    for item in items:
        grouped[validate_group_id(item.group_id)].append(item)
    return grouped


def _in_order(ids: Sequence[str], models: Sequence[M]) -> list[M]:
    by_id = {model.id: model for model in models}
    return [by_id[i] for i in unique(ids) if i in by_id]


class CypherGraphStore(CommunityCypherMixin, LineageCypherMixin, ResolutionCypherMixin, ABC):
    """Implements :class:`knotwork.domain.ports.GraphStore` on top of :meth:`_run`."""

    batch_size: int = BATCH_SIZE
    find_by_keys_query: str = cypher.FIND_ENTITIES_BY_KEYS_ANY

    def __init__(self) -> None:
        self._schema_ready: set[str] = set()

    # ------------------------------------------------------------------ adapter hooks

    @abstractmethod
    def _run(
        self, group_id: str, query: str, params: dict[str, Any], *, write: bool = False
    ) -> list[Row]:
        """Run one parameterized query for ``group_id``; rows as dicts keyed by column."""

    @abstractmethod
    def _create_schema(self, group_id: str) -> None: ...

    @abstractmethod
    def _drop_group(self, group_id: str) -> None: ...

    @abstractmethod
    def close(self) -> None: ...

    # ------------------------------------------------------------------ schema

    def ensure_schema(self, group_id: str) -> None:
        validate_group_id(group_id)
        self._create_schema(group_id)
        self._schema_ready.add(group_id)

    def _ready(self, group_id: str) -> None:
        if group_id not in self._schema_ready:
            self.ensure_schema(group_id)

    def _write_batches(self, group_id: str, query: str, rows: Sequence[Row]) -> int:
        written = 0
        for chunk in batches(rows, self.batch_size):
            result = self._run(
                group_id, query, {"group_id": group_id, "rows": list(chunk)}, write=True
            )
            written += int(result[0]["written"]) if result else 0
        return written

    # ------------------------------------------------------------------ writes

    def upsert_episodes(self, episodes: Sequence[Episode]) -> None:
        for group_id, items in _by_group(episodes).items():
            self._ready(group_id)
            rows = [episode_to_row(ep) for ep in items]
            self._write_batches(group_id, cypher.UPSERT_EPISODES, rows)

    def upsert_entities(self, entities: Sequence[Entity]) -> None:
        for group_id, items in _by_group(entities).items():
            self._ready(group_id)
            rows = [entity_to_row(e) for e in items]
            self._write_batches(group_id, cypher.UPSERT_ENTITIES, rows)

    def update_entity(self, entity: Entity, expected_version: int) -> bool:
        """Write ``entity``'s editable fields only if the stored version is ``expected_version``
        (then it becomes ``expected_version + 1``). False: missing, or changed meanwhile."""
        self._ready(entity.group_id)
        result = self._run(entity.group_id, cypher.UPDATE_ENTITY_IF_VERSION,
                           {"group_id": entity.group_id, "rows": [entity_to_row(entity)],
                            "expected": int(expected_version)}, write=True)
        return bool(result and int(result[0]["written"]))

    def upsert_mentions(self, group_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        validate_group_id(group_id)
        if not pairs:
            return
        self._ready(group_id)
        rows: list[Row] = [{"episode_id": ep, "entity_id": ent} for ep, ent in dict.fromkeys(pairs)]
        written = self._write_batches(group_id, cypher.UPSERT_MENTIONS, rows)
        if written < len(rows):
            log.warning("graph.mentions_skipped", group_id=group_id, missing=len(rows) - written)

    def upsert_facts(self, facts: Sequence[Fact]) -> None:
        for group_id, items in _by_group(facts).items():
            self._ready(group_id)
            rows = list({f.id: fact_to_row(f) for f in items}.values())
            for chunk in batches(rows, self.batch_size):
                params = {"group_id": group_id, "rows": list(chunk)}
                self._run(group_id, cypher.DETACH_MOVED_FACTS, params, write=True)
            written = self._write_batches(group_id, cypher.UPSERT_FACTS, rows)
            if written < len(rows):
                # an endpoint entity is missing: the fact cannot be stored
                log.warning("graph.facts_skipped", group_id=group_id, missing=len(rows) - written)

    # ------------------------------------------------------------------ reads

    def _read(self, group_id: str, query: str, **params: Any) -> list[Row]:
        return self._run(group_id, query, {"group_id": group_id, **params})

    def get_entities(self, group_id: str, ids: Sequence[str]) -> list[Entity]:
        validate_group_id(group_id)
        found: list[Entity] = []
        for chunk in batches(unique(ids), self.batch_size):
            rows = self._read(group_id, cypher.GET_ENTITIES, ids=list(chunk))
            found += [row_to_entity(r) for r in rows]
        return _in_order(ids, found)

    def find_entities_by_keys(self, group_id: str, keys: Sequence[str]) -> list[Entity]:
        validate_group_id(group_id)
        found: dict[str, Entity] = {}
        for chunk in batches(unique(keys), self.batch_size):
            for row in self._read(group_id, self.find_by_keys_query, keys=list(chunk)):
                entity = row_to_entity(row)
                found[entity.id] = entity
        return [found[i] for i in sorted(found)]

    def get_facts(self, group_id: str, ids: Sequence[str]) -> list[Fact]:
        validate_group_id(group_id)
        found: list[Fact] = []
        for chunk in batches(unique(ids), self.batch_size):
            found += [row_to_fact(r) for r in self._read(group_id, cypher.GET_FACTS, ids=chunk)]
        return _in_order(ids, found)

    def facts_between(self, group_id: str, entity_ids: Sequence[str]) -> list[Fact]:
        validate_group_id(group_id)
        ids = unique(entity_ids)
        if not ids:
            return []
        return [row_to_fact(r) for r in self._read(group_id, cypher.FACTS_BETWEEN, ids=ids)]

    def expand_facts(
        self,
        group_id: str,
        seed_ids: Sequence[str],
        *,
        depth: int = 2,
        as_of: datetime | None = None,
        include_invalid: bool = False,
        limit: int = 200,
        skip_methods: Collection[str] = (),
    ) -> list[FactHit]:
        """Breadth-first, one query per hop; only facts passing the filter are traversed.

        ``depth`` counts edges from a seed: depth 1 gives hop-0 facts, depth 2 adds hop 1.
        Without ``as_of`` and ``include_invalid``, facts with an ``invalid_at`` are left
        out (``expired_at`` is not consulted). Within a hop: confidence desc, then id.
        """
        validate_group_id(group_id)
        frontier = unique(seed_ids)
        if depth < 1 or limit < 1 or not frontier:
            return []
        if as_of is not None:
            query, moment = cypher.EXPAND_HOP_AS_OF, to_iso(as_of)
        elif include_invalid:
            query, moment = cypher.EXPAND_HOP_ANY, None
        else:
            query, moment = cypher.EXPAND_HOP_NOW, None
        visited = set(frontier)
        seen: list[str] = []
        hits: list[FactHit] = []
        for hop in range(depth):
            rows = self._read(
                group_id,
                query,
                frontier=frontier,
                seen=seen,
                skip=sorted(skip_methods),
                as_of=moment,
                limit=limit - len(hits),
            )
            next_frontier: list[str] = []
            for row in rows:
                fact = row_to_fact(row)
                if fact.id in seen:
                    continue
                seen.append(fact.id)
                hits.append(FactHit(fact=fact, hop=hop))
                for node in (fact.source_id, fact.target_id):
                    if node not in visited:
                        visited.add(node)
                        next_frontier.append(node)
            frontier = next_frontier
            if not frontier or len(hits) >= limit:
                break
        return hits

    def get_episodes(self, group_id: str, ids: Sequence[str]) -> list[Episode]:
        validate_group_id(group_id)
        found: list[Episode] = []
        for chunk in batches(unique(ids), self.batch_size):
            rows = self._read(group_id, cypher.GET_EPISODES, ids=list(chunk))
            found += [row_to_episode(r) for r in rows]
        return _in_order(ids, found)

    def episode_entity_ids(self, group_id: str, episode_id: str) -> list[str]:
        validate_group_id(group_id)
        rows = self._read(group_id, cypher.EPISODE_ENTITY_IDS, episode_id=episode_id)
        return [str(r["id"]) for r in rows]

    def recent_episode_ids(self, group_id: str, limit: int) -> list[str]:
        validate_group_id(group_id)
        if limit < 1:
            return []
        rows = self._read(group_id, cypher.RECENT_EPISODE_IDS, limit=int(limit))
        return [str(r["id"]) for r in rows]

    def list_entities(self, group_id: str) -> list[Entity]:
        validate_group_id(group_id)
        return [row_to_entity(r) for r in self._read(group_id, cypher.LIST_ENTITIES)]

    def list_facts(self, group_id: str) -> list[Fact]:
        validate_group_id(group_id)
        return [row_to_fact(r) for r in self._read(group_id, cypher.LIST_FACTS)]

    def counts(self, group_id: str) -> GraphCounts:
        validate_group_id(group_id)

        def count(query: str) -> int:
            rows = self._read(group_id, query)
            return int(rows[0]["n"]) if rows else 0

        return GraphCounts(
            entities=count(cypher.COUNT_ENTITIES),
            facts=count(cypher.COUNT_FACTS),
            episodes=count(cypher.COUNT_EPISODES),
            mentions=count(cypher.COUNT_MENTIONS),
        )

    def delete_group(self, group_id: str) -> None:
        validate_group_id(group_id)
        self._drop_group(group_id)
        self._schema_ready.discard(group_id)
