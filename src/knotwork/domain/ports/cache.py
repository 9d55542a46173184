"""The query cache port (optional)."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

# --------------------------------------------------------------------------- cache (optional)


class CacheLayer(StrEnum):
    """Design doc 003, "Cache Strategy": one TTL per layer (settings ``cache_ttl_*``)."""

    ENTITY = "entity"  # entity by id, 1 h
    SEARCH = "search"  # entity / hybrid search results, 15 min
    SUBGRAPH = "subgraph"  # subgraph by entity set, 5 min
    COMMUNITY = "community"  # community summaries, 24 h
    QUERY = "query"  # GraphRAG query results, 5 min


class CacheStats(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hits: dict[str, int] = Field(default_factory=dict)  # per layer, this process
    misses: dict[str, int] = Field(default_factory=dict)

    def hit_rate(self, layer: str | None = None) -> float:
        layers = [layer] if layer else sorted(set(self.hits) | set(self.misses))
        hits = sum(self.hits.get(x, 0) for x in layers)
        total = hits + sum(self.misses.get(x, 0) for x in layers)
        return hits / total if total else 0.0


@runtime_checkable
class QueryCache(Protocol):
    """Serialized values (JSON text) per tenant and layer, with the layer's TTL.

    ``entity_ids``: the entities a value was computed from; updating one of them invalidates
    it (doc 003 triggers: entity update → its entity key, searches, subgraphs and query
    results containing it; community detection complete → every community and query value).
    """

    def get(self, layer: CacheLayer, group_id: str, key: str) -> str | None: ...

    def get_many(self, layer: CacheLayer, group_id: str, keys: Sequence[str]) -> list[str | None]:
        """One round trip; each lookup counts as a hit or a miss."""
        ...

    def set(self, layer: CacheLayer, group_id: str, key: str, value: str, *,
            entity_ids: Sequence[str] = ()) -> None: ...

    def invalidate_entities(self, group_id: str, entity_ids: Sequence[str]) -> int:
        """Drop the entities' own keys and every value computed from them; returns keys dropped."""
        ...

    def invalidate_layer(self, group_id: str, layer: CacheLayer) -> int: ...

    def clear_group(self, group_id: str) -> int: ...

    def stats(self) -> CacheStats: ...

    def close(self) -> None: ...
