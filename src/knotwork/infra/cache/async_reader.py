"""Cache reads from an event loop: ``redis.asyncio`` over the ``RedisCache``'s own keys.

The REST API answers a query-cache hit on its event loop with this, without a worker thread;
a miss goes on to the sync path (which looks the key up again and counts the miss), so every
lookup is counted once, in the same stats as the sync cache's.

A lookup that fails (Redis unreachable, or no answer within the client's timeout) is not
retried, and pauses the reader for ``pause_s``: meanwhile ``get`` answers None at once without
touching Redis, so the callers go to their sync path (which reports a real outage as usual)
instead of each waiting out its own timeout on the event loop, one after the other.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import structlog

from knotwork.domain.ports import CacheLayer

if TYPE_CHECKING:
    import redis.asyncio

    from knotwork.infra.cache.redis_cache import RedisCache

log = structlog.get_logger(__name__)


class AsyncCacheReader:
    def __init__(self, cache: RedisCache, client: redis.asyncio.Redis, *, pause_s: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._cache = cache
        self._client = client
        self._pause_s = pause_s
        self._clock = clock
        self._paused_until = float("-inf")

    @property
    def paused(self) -> bool:
        return self._clock() < self._paused_until

    async def get(self, layer: CacheLayer, group_id: str, key: str) -> str | None:
        """The value, a hit counted; None on a miss (not counted: the sync path that answers
        the miss counts it) or while paused. A failure pauses the reader and is raised."""
        if self.paused:
            return None
        full = self._cache.key(layer, group_id, key)
        try:
            # a str: the client decodes responses (``_async_options``)
            value = cast("str | None", await self._client.get(full))
        except Exception as exc:
            self._paused_until = self._clock() + self._pause_s
            log.warning("cache.async_reader_paused", error=type(exc).__name__,
                        seconds=self._pause_s)
            raise
        if value is not None:
            self._cache.count(layer, hit=True)
        return value

    async def aclose(self) -> None:
        await self._client.aclose()
