"""A GraphStore proxy that applies doc 003's cache invalidation triggers on every write.

- entity update (``upsert_entities``, ``delete_entities``): the entities' keys and every
  search / subgraph / query value computed from them;
- relationship update (``upsert_facts``, ``delete_facts``): the same for both endpoints;
- evidence withdrawn (``detach_document_episodes``) and any graph write: the tenant's query
  results (an answer may now have support it lacked);
- community detection complete (``replace_communities``) and summary writes: every community
  value and query result of the tenant;
- ``delete_group``: everything of the tenant.

Reads and everything else go straight to the wrapped store. ``__class__`` reports the wrapped
store's class, so ``isinstance`` checks on the concrete adapter keep working.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from knotwork.domain.models import Community, Entity, Fact
from knotwork.domain.ports import CacheLayer, GraphStore, QueryCache


class InvalidatingGraphStore:
    def __init__(self, inner: GraphStore, cache: QueryCache) -> None:
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_cache", cache)

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance sees the wrapped adapter
        return type(object.__getattribute__(self, "_inner"))

    def __getattr__(self, name: str) -> Any:
        return getattr(object.__getattribute__(self, "_inner"), name)

    @property
    def inner(self) -> GraphStore:
        inner: GraphStore = object.__getattribute__(self, "_inner")
        return inner

    def _entities_changed(self, group_id: str, ids: Sequence[str]) -> None:
        cache: QueryCache = object.__getattribute__(self, "_cache")
        cache.invalidate_entities(group_id, ids)
        cache.invalidate_layer(group_id, CacheLayer.QUERY)

    # -- entity / relationship updates
    def upsert_entities(self, entities: Sequence[Entity]) -> None:
        self.inner.upsert_entities(entities)
        for group in {e.group_id for e in entities}:
            self._entities_changed(group, [e.id for e in entities if e.group_id == group])

    def upsert_facts(self, facts: Sequence[Fact]) -> None:
        self.inner.upsert_facts(facts)
        for group in {f.group_id for f in facts}:
            ends = [x for f in facts if f.group_id == group for x in (f.source_id, f.target_id)]
            self._entities_changed(group, ends)

    def delete_facts(self, group_id: str, ids: Sequence[str]) -> int:
        ends = [x for f in self.inner.get_facts(group_id, ids) for x in (f.source_id, f.target_id)]
        deleted = self.inner.delete_facts(group_id, ids)
        self._entities_changed(group_id, ends)
        return deleted

    def delete_entities(self, group_id: str, ids: Sequence[str]) -> int:
        deleted = self.inner.delete_entities(group_id, ids)
        self._entities_changed(group_id, ids)
        return deleted

    def detach_document_episodes(self, group_id: str, document_ids: Sequence[str]) -> int:
        detached = self.inner.detach_document_episodes(group_id, document_ids)
        cache: QueryCache = object.__getattribute__(self, "_cache")
        for layer in (CacheLayer.QUERY, CacheLayer.SEARCH, CacheLayer.SUBGRAPH):
            cache.invalidate_layer(group_id, layer)
        return detached

    # -- communities
    def _communities_changed(self, group_id: str) -> None:
        cache: QueryCache = object.__getattribute__(self, "_cache")
        cache.invalidate_layer(group_id, CacheLayer.COMMUNITY)
        cache.invalidate_layer(group_id, CacheLayer.QUERY)

    def replace_communities(self, group_id: str, communities: Sequence[Community]) -> None:
        self.inner.replace_communities(group_id, communities)
        self._communities_changed(group_id)

    def upsert_communities(self, communities: Sequence[Community]) -> None:
        self.inner.upsert_communities(communities)
        for group in {c.group_id for c in communities}:
            self._communities_changed(group)

    def mark_stale(self, group_id: str, community_ids: Sequence[str]) -> int:
        marked = self.inner.mark_stale(group_id, community_ids)
        self._communities_changed(group_id)
        return marked

    def delete_group(self, group_id: str) -> None:
        self.inner.delete_group(group_id)
        cache: QueryCache = object.__getattribute__(self, "_cache")
        cache.clear_group(group_id)
