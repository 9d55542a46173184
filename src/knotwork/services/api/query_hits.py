"""Query-cache hits answered on the event loop: no worker thread, no GIL hand-off.

``/v1/graphrag/query`` asks :func:`cached_response` first: the key is
``Knotwork.query_cache_key`` (the very key ``Knotwork.query`` stores the answer under), read
with the app's :class:`AsyncCacheReader`. A hit is rendered like a computed answer; the body is
kept (:class:`HitBodies`) with the cached text it came from, so the next hit on unchanged text
is sent without decoding and rendering again. Every hit still reads Redis, so an invalidated
or expired answer is never served from here. A Redis read that fails is not retried and pauses
this path for a few seconds (:class:`AsyncCacheReader`): hits are answered one at a time, so
retries with back-off there would hold up every hit behind them.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable

import redis.exceptions
import structlog
from fastapi import Request
from fastapi.responses import JSONResponse, Response

from knotwork.domain.models import QueryResult
from knotwork.domain.ports import CacheLayer
from knotwork.infra.cache.async_reader import AsyncCacheReader

log = structlog.get_logger(__name__)

Slot = tuple[str, str, tuple[bool, ...]]  # tenant, cache key, the request's rendering options


class HitBodies:
    """The last ``size`` rendered hit bodies, each with the cached text it was rendered from,
    and the lock that answers hits one at a time. Used from the event loop only."""

    def __init__(self, size: int = 128) -> None:
        self._size = size
        self._items: OrderedDict[Slot, tuple[str, bytes]] = OrderedDict()
        # First come, first served: hits interleaved at their Redis round trip would all
        # finish with the last of a burst (and their clients come back together, a burst
        # again); one at a time, each finishes in its turn and the next burst is spread out.
        self.turn = asyncio.Lock()

    def get(self, slot: Slot, cached: str) -> bytes | None:
        item = self._items.get(slot)
        if item is None or item[0] != cached:
            return None
        self._items.move_to_end(slot)
        return item[1]

    def put(self, slot: Slot, cached: str, body: bytes) -> None:
        self._items[slot] = (cached, body)
        self._items.move_to_end(slot)
        while len(self._items) > self._size:
            self._items.popitem(last=False)


async def cached_response(request: Request, entry: tuple[str, str] | None,
                          options: tuple[bool, ...],
                          render: Callable[[QueryResult], JSONResponse]) -> Response | None:
    """The response for the answer cached under ``entry`` (tenant, key), rendered by
    ``render`` (``options``: whatever else it depends on); None when the answer is not cached,
    the app has no async reader, or Redis fails (the worker-thread path then answers, and
    reports a store outage as usual)."""
    reader = getattr(request.app.state, "cache_reader", None)
    bodies = getattr(request.app.state, "hit_bodies", None)
    if entry is None or not isinstance(reader, AsyncCacheReader) or not isinstance(bodies, HitBodies):
        return None
    if reader.paused:  # Redis failed a moment ago: the worker-thread path answers meanwhile
        return None
    async with bodies.turn:
        return await _hit(reader, bodies, entry, options, render)


async def _hit(reader: AsyncCacheReader, bodies: HitBodies, entry: tuple[str, str],
               options: tuple[bool, ...],
               render: Callable[[QueryResult], JSONResponse]) -> Response | None:
    group, key = entry
    try:
        cached = await reader.get(CacheLayer.QUERY, group, key)
    except (redis.exceptions.RedisError, OSError) as exc:
        log.debug("api.async_cache_failed", error=type(exc).__name__)
        return None
    if cached is None:
        return None
    slot: Slot = (group, key, options)
    body = bodies.get(slot, cached)
    if body is not None:
        return Response(body, media_type="application/json")
    response = render(QueryResult.model_validate_json(cached))
    bodies.put(slot, cached, bytes(response.body))
    return response
