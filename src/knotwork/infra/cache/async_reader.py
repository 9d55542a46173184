"""Cache reads from an event loop: ``redis.asyncio`` over the ``RedisCache``'s own keys.

The REST API answers a query-cache hit on its event loop with this, without a worker thread;
a miss goes on to the sync path (which looks the key up again and counts the miss), so every
lookup is counted once, in the same stats as the sync cache's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knotwork.domain.ports import CacheLayer

if TYPE_CHECKING:
    import redis.asyncio

    from knotwork.infra.cache.redis_cache import RedisCache


class AsyncCacheReader:
    def __init__(self, cache: RedisCache, client: redis.asyncio.Redis) -> None:
        self._cache = cache
        self._client = client

    async def get(self, layer: CacheLayer, group_id: str, key: str) -> str | None:
        """The value, a hit counted; None on a miss (not counted: the sync path that answers
        the miss counts it)."""
        value: str | None = await self._client.get(self._cache.key(layer, group_id, key))
        if value is not None:
            self._cache.count(layer, hit=True)
        return value

    async def aclose(self) -> None:
        await self._client.aclose()
