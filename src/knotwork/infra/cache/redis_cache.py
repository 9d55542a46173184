"""``QueryCache`` on Redis: ``{prefix}{group}:{layer}:{digest}`` keys with the layer's TTL.

Every value stored with ``entity_ids`` is also listed in a per-entity index set
(``{prefix}{group}:idx:{entity_id}``), so an entity or relationship update drops exactly the
values computed from it. Hits and misses are counted per layer in the process (``stats``) and
on the Prometheus ``knotwork_cache_requests`` counter served by ``/metrics``.
"""

from __future__ import annotations

import builtins
import hashlib
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

import structlog

from knotwork.domain.ports import CacheLayer, CacheStats

if TYPE_CHECKING:
    import redis
    import redis.asyncio
    from redis.asyncio.retry import Retry

    from knotwork.infra.cache.async_reader import AsyncCacheReader
    from knotwork.infra.falkordb.store import RedisTimeouts

log = structlog.get_logger(__name__)
_GROUP = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# An event-loop lookup gives up after this (connect or read) and is never retried: the caller
# answers from its worker-thread path instead. redis-py's default (10 retries, exponential
# back-off up to 1 s each) would hold the REST API's one-at-a-time hit lock for seconds.
_ASYNC_TIMEOUT_S = 0.5


@dataclass(frozen=True)
class CacheTTLs:
    """Seconds per layer; design doc 003 values by default."""

    entity: int = 3600
    search: int = 900
    subgraph: int = 300
    community: int = 86_400
    query: int = 300

    def of(self, layer: CacheLayer) -> int:
        return int(getattr(self, layer.value))


class _AsyncOptions(TypedDict):
    decode_responses: bool
    socket_timeout: float
    socket_connect_timeout: float
    retry: Retry


def _async_options() -> _AsyncOptions:
    """The asyncio client's options: one attempt, bounded by ``_ASYNC_TIMEOUT_S``."""
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    return {"decode_responses": True, "socket_timeout": _ASYNC_TIMEOUT_S,
            "socket_connect_timeout": _ASYNC_TIMEOUT_S, "retry": Retry(NoBackoff(), 0)}


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:32]


class RedisCache:
    def __init__(self, client: redis.Redis, *, prefix: str = "knotwork:cache:",
                 ttls: CacheTTLs | None = None,
                 async_client: Callable[[], redis.asyncio.Redis] | None = None) -> None:
        """``async_client``: opens an asyncio client to the same server (``async_reader``)."""
        self._r = client
        self._prefix = prefix
        self._ttls = ttls or CacheTTLs()
        self._hits: dict[str, int] = {}
        self._misses: dict[str, int] = {}
        self._async_client = async_client

    @classmethod
    def from_url(cls, url: str, *, prefix: str = "knotwork:cache:",
                 ttls: CacheTTLs | None = None) -> RedisCache:
        import redis
        import redis.asyncio

        return cls(redis.Redis.from_url(url, decode_responses=True),
                   async_client=lambda: redis.asyncio.Redis.from_url(url, **_async_options()),
                   prefix=prefix, ttls=ttls)

    @classmethod
    def connect(cls, host: str, port: int, *, username: str | None = None,
                password: str | None = None, options: RedisTimeouts | None = None,
                prefix: str = "knotwork:cache:", ttls: CacheTTLs | None = None) -> RedisCache:
        """``options``: more redis-py client options (timeouts, see ``redis_options``)."""
        import redis
        import redis.asyncio

        client = redis.Redis(host=host, port=port, username=username, password=password,
                             decode_responses=True, **(options or {}))
        return cls(client, async_client=lambda: redis.asyncio.Redis(
            host=host, port=port, username=username, password=password, **_async_options()),
            prefix=prefix, ttls=ttls)

    def async_reader(self, *, pause_s: float = 5.0,
                     clock: Callable[[], float] | None = None) -> AsyncCacheReader | None:
        """Lookups from an event loop over an asyncio connection: the same keys and counts;
        after a failure it leaves Redis alone for ``pause_s``. None when this cache was built
        around a bare client. The caller closes it."""
        if self._async_client is None:
            return None
        from knotwork.infra.cache.async_reader import AsyncCacheReader

        return AsyncCacheReader(self, self._async_client(), pause_s=pause_s,
                                clock=clock or time.monotonic)

    # ------------------------------------------------------------------ keys
    def _base(self, group_id: str) -> str:
        if not _GROUP.match(group_id):
            raise ValueError(f"invalid group id {group_id!r}")
        return f"{self._prefix}{group_id}:"

    def key(self, layer: CacheLayer, group_id: str, key: str) -> str:
        return f"{self._base(group_id)}{layer.value}:{_digest(key)}"

    def _index(self, group_id: str, entity_id: str) -> str:
        return f"{self._base(group_id)}idx:{_digest(entity_id)}"

    def count(self, layer: CacheLayer, hit: bool) -> None:
        """Record one lookup (in-process stats and the Prometheus counter)."""
        self._count(layer, hit)

    def _count(self, layer: CacheLayer, hit: bool) -> None:
        bucket = self._hits if hit else self._misses
        bucket[layer.value] = bucket.get(layer.value, 0) + 1
        try:
            from knotwork.observability.metrics import get_metrics

            get_metrics().cache_requests.labels(layer=layer.value, outcome="hit" if hit else "miss").inc()
        except ImportError:  # prometheus_client missing: the in-process counts still work
            pass

    # ------------------------------------------------------------------ port
    def get(self, layer: CacheLayer, group_id: str, key: str) -> str | None:
        value = self._r.get(self.key(layer, group_id, key))
        self._count(layer, value is not None)
        return value  # type: ignore[return-value]

    def get_many(self, layer: CacheLayer, group_id: str, keys: Sequence[str]) -> list[str | None]:
        if not keys:
            return []
        values: list[str | None] = self._r.mget([self.key(layer, group_id, k) for k in keys])  # type: ignore[assignment]
        for value in values:
            self._count(layer, value is not None)
        return values

    def set(self, layer: CacheLayer, group_id: str, key: str, value: str, *,
            entity_ids: Sequence[str] = ()) -> None:
        ttl = self._ttls.of(layer)
        full = self.key(layer, group_id, key)
        ids = list(dict.fromkeys([key] if layer is CacheLayer.ENTITY else entity_ids))
        pipe = self._r.pipeline(transaction=False)
        pipe.set(full, value, ex=ttl)
        for entity_id in ids:
            index = self._index(group_id, entity_id)
            pipe.sadd(index, full)
            # the index outlives what it lists (the longest TTL), never forever
            pipe.expire(index, max(self._ttls.community, ttl))
        pipe.execute()

    def invalidate_entities(self, group_id: str, entity_ids: Sequence[str]) -> int:
        ids = list(dict.fromkeys(entity_ids))
        if not ids:
            return 0
        indexes = [self._index(group_id, e) for e in ids]
        keys: set[str] = {self.key(CacheLayer.ENTITY, group_id, e) for e in ids}
        for members in self._smembers(indexes):
            keys.update(members)
        dropped = int(self._r.delete(*keys))
        self._r.delete(*indexes)
        log.debug("cache.invalidated", group=group_id, entities=len(ids), keys=dropped)
        return dropped

    def _smembers(self, indexes: list[str]) -> list[builtins.set[str]]:
        pipe = self._r.pipeline(transaction=False)
        for index in indexes:
            pipe.smembers(index)
        return list(pipe.execute())

    def _scan(self, pattern: str) -> Iterator[str]:
        yield from self._r.scan_iter(match=pattern, count=500)

    def _delete_matching(self, pattern: str) -> int:
        dropped = 0
        batch: list[str] = []
        for key in self._scan(pattern):
            batch.append(key)
            if len(batch) >= 500:
                dropped += int(self._r.delete(*batch))
                batch = []
        if batch:
            dropped += int(self._r.delete(*batch))
        return dropped

    def invalidate_layer(self, group_id: str, layer: CacheLayer) -> int:
        return self._delete_matching(f"{self._base(group_id)}{layer.value}:*")

    def clear_group(self, group_id: str) -> int:
        return self._delete_matching(f"{self._base(group_id)}*")

    def stats(self) -> CacheStats:
        return CacheStats(hits=dict(self._hits), misses=dict(self._misses))

    def close(self) -> None:
        self._r.close()
