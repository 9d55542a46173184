"""The event-loop cache reader against a Redis that fails: one attempt, then a pause.

The "Redis" here is a local TCP server that counts what it is sent: it either drops every
connection at once (a server going away) or reads the command and never answers (a server
that hangs). redis-py's default policy would retry either 10 times with back-off while the
REST API's hit lock is held; the reader must try once, and then leave Redis alone for its pause.
"""

from __future__ import annotations

import asyncio
import socket

import pytest
import redis.exceptions

from knotwork.domain.ports import CacheLayer
from knotwork.infra.cache.redis_cache import RedisCache


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class _BadRedis:
    """Counts connections; ``hang``: reads what it is sent and never answers, else closes
    each connection at once."""

    def __init__(self, hang: bool) -> None:
        self.hang = hang
        self.connections = 0
        self._writers: list[asyncio.StreamWriter] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.append(writer)
        if not self.hang:
            writer.close()
            return
        while await reader.read(65536):
            pass

    def close(self) -> None:
        for writer in self._writers:
            writer.close()


async def _scenario(hang: bool) -> list[str]:
    bad = _BadRedis(hang)
    server = await asyncio.start_server(bad.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    clock = _Clock()
    cache = RedisCache.connect("127.0.0.1", port)
    reader = cache.async_reader(pause_s=5.0, clock=clock)
    assert reader is not None
    outcomes: list[str] = []

    async def attempt() -> None:
        try:
            value = await reader.get(CacheLayer.QUERY, "default", "q")
            outcomes.append("none" if value is None else "value")
        except (redis.exceptions.RedisError, OSError) as exc:
            outcomes.append(type(exc).__name__)

    try:
        await attempt()  # fails once, without retrying
        assert bad.connections == 1  # redis-py's default policy: 11 (10 retries)
        await attempt()  # paused: answered at once, Redis untouched
        await attempt()
        assert bad.connections == 1 and reader.paused
        clock.now += 5.1  # the pause is over: Redis is tried again, once
        await attempt()
        assert bad.connections == 2
    finally:
        bad.close()
        server.close()
        await reader.aclose()
        cache.close()
    return outcomes


def test_a_dropped_connection_is_tried_once_then_the_reader_pauses() -> None:
    outcomes = asyncio.run(_scenario(hang=False))
    assert outcomes[0] == "ConnectionError" and outcomes[1:3] == ["none", "none"]
    assert outcomes[3] == "ConnectionError"


def test_a_hung_server_is_waited_for_once_then_the_reader_pauses() -> None:
    outcomes = asyncio.run(_scenario(hang=True))
    assert outcomes[0] == "TimeoutError" and outcomes[1:3] == ["none", "none"]
    assert outcomes[3] == "TimeoutError"


def test_nothing_listening_is_one_attempt() -> None:
    with socket.socket() as s:  # a port nobody listens on: Redis is down
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cache = RedisCache.connect("127.0.0.1", port)
    reader = cache.async_reader()
    assert reader is not None

    async def run() -> None:
        with pytest.raises(redis.exceptions.ConnectionError):
            await reader.get(CacheLayer.QUERY, "default", "q")
        assert reader.paused
        assert await reader.get(CacheLayer.QUERY, "default", "q") is None
        await reader.aclose()

    asyncio.run(run())
    cache.close()
