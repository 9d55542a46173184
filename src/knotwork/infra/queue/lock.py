"""A lease lock on Redis (SET NX PX + a renewal thread), released by compare-and-delete.

Used to serialise the store writes of workers (see ``services.worker``): a worker that dies
holding it loses it when the lease runs out (``ttl_s``); a live holder renews it every third
of the lease, so long commits keep it.
"""

from __future__ import annotations

import secrets
import threading
import time
from types import TracebackType
from typing import Self

import redis

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""


class LockTimeoutError(TimeoutError):
    """The lock was not acquired within the wait."""


class LeaseLock:
    def __init__(self, client: redis.Redis, key: str, ttl_s: float = 30.0) -> None:
        self._client = client
        self._key = key
        self._ttl_ms = max(100, int(ttl_s * 1000))
        self._token: str | None = None
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self._release = client.register_script(_RELEASE)
        self._renew = client.register_script(_RENEW)
        self.lost = False  # the lease ran out while held (renewal failed)

    @property
    def key(self) -> str:
        return self._key

    @property
    def held(self) -> bool:
        return self._token is not None

    def acquire(self, wait_s: float | None = None) -> None:
        """Block until acquired (``wait_s``: at most that long, else ``LockTimeoutError``)."""
        token = secrets.token_hex(16)
        deadline = None if wait_s is None else time.monotonic() + wait_s
        pause = 0.01
        while not self._client.set(self._key, token, nx=True, px=self._ttl_ms):
            if deadline is not None and time.monotonic() >= deadline:
                raise LockTimeoutError(f"lock {self._key} still held after {wait_s:.0f}s")
            time.sleep(pause)
            pause = min(pause * 2, 0.2)
        self._token, self.lost = token, False
        self._stop.clear()
        self._renewer = threading.Thread(target=self._keep, args=(token,), daemon=True,
                                         name="lease-renewal")
        self._renewer.start()

    def release(self) -> None:
        token, self._token = self._token, None
        if token is None:
            return
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(timeout=5)
            self._renewer = None
        self._release(keys=[self._key], args=[token])

    def _keep(self, token: str) -> None:
        while not self._stop.wait(self._ttl_ms / 3000.0):
            try:
                if not self._renew(keys=[self._key], args=[token, self._ttl_ms]):
                    self.lost = True
                    return
            except redis.RedisError:
                continue  # transient: the next round retries while the lease lasts

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()
