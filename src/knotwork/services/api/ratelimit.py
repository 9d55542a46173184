"""Per-key request budgets: a fixed one-minute window, in Redis when configured, else in-process."""

from __future__ import annotations

import threading
import time
from typing import Protocol


class RateLimiter(Protocol):
    def hit(self, key: str, limit: int) -> int | None:
        """Count one request; None when within ``limit`` per minute, else seconds to wait."""
        ...


class InMemoryRateLimiter:
    """One process's windows (several API processes each allow ``limit``: use Redis there)."""

    def __init__(self) -> None:
        self._now = time.time
        self._windows: dict[str, tuple[int, int]] = {}
        self._lock = threading.Lock()

    def hit(self, key: str, limit: int) -> int | None:
        now = self._now()
        window = int(now // 60)
        with self._lock:
            start, count = self._windows.get(key, (window, 0))
            if start != window:
                start, count = window, 0
            count += 1
            self._windows[key] = (start, count)
        if count <= limit:
            return None
        return max(1, int(60 - now % 60) + 1)


class RedisRateLimiter:
    """Shared by every API process: INCR of ``<prefix>ratelimit:<key>:<minute>`` with a TTL."""

    def __init__(self, url: str, prefix: str) -> None:
        import redis

        self._client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        self._prefix = prefix

    def hit(self, key: str, limit: int) -> int | None:
        now = time.time()
        name = f"{self._prefix}ratelimit:{key}:{int(now // 60)}"
        pipe = self._client.pipeline()
        pipe.incr(name)
        pipe.expire(name, 120)
        count = int(pipe.execute()[0])
        if count <= limit:
            return None
        return max(1, int(60 - now % 60) + 1)

    def close(self) -> None:
        self._client.close()
