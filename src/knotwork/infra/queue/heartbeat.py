"""Worker heartbeats in the queue's Redis: each worker's loop writes one key with a TTL.

``{prefix}worker:{name}`` holds a JSON :class:`WorkerBeat` (host, pid, jobs done, time of the
beat) and expires after ``ttl_s``: a worker that died, hung or lost Redis disappears by itself.
``knotwork queue workers`` lists the live beats; ``knotwork queue alive`` exits 0 when a worker
(of this host, with ``--this-host``: the container's own healthcheck) beat within a window.
The beat is written by the job loop itself, between fetches, so a worker stuck in a store call
stops beating, which a process-level check would miss.
"""

from __future__ import annotations

import os
import socket
import time
from datetime import datetime

import redis
from pydantic import BaseModel, ValidationError

from knotwork.domain.timeutil import utcnow


class WorkerBeat(BaseModel):
    name: str
    host: str
    pid: int
    jobs: int = 0
    beat_at: datetime

    def age_s(self, now: datetime | None = None) -> float:
        return ((now or utcnow()) - self.beat_at).total_seconds()


class Heartbeat:
    """Writes (throttled to one per ``every_s``) and reads worker beats."""

    def __init__(self, client: redis.Redis, *, prefix: str = "knotwork:", ttl_s: float = 120.0,
                 every_s: float = 5.0) -> None:
        self._client = client
        self._prefix = f"{prefix}worker:"
        self._ttl_ms = max(1000, int(ttl_s * 1000))
        self._every_s = every_s
        self._last = float("-inf")

    def key(self, name: str) -> str:
        return f"{self._prefix}{name}"

    def beat(self, name: str, jobs: int = 0, *, force: bool = False) -> bool:
        """Record that worker ``name`` is alive; skipped (False) within ``every_s`` of the
        previous beat unless ``force``."""
        now = time.monotonic()
        if not force and now - self._last < self._every_s:
            return False
        beat = WorkerBeat(name=name, host=socket.gethostname(), pid=os.getpid(), jobs=jobs,
                          beat_at=utcnow())
        self._client.set(self.key(name), beat.model_dump_json(), px=self._ttl_ms)
        self._last = now
        return True

    def stop(self, name: str) -> None:
        """A worker that exits cleanly removes its beat."""
        self._client.delete(self.key(name))

    def workers(self) -> list[WorkerBeat]:
        """Every live beat, newest first (entries that do not parse are skipped)."""
        keys = list(self._client.scan_iter(match=f"{self._prefix}*", count=500))
        beats: list[WorkerBeat] = []
        for raw in (self._client.mget(keys) if keys else []):
            if raw is None:
                continue  # expired between SCAN and MGET
            try:
                beats.append(WorkerBeat.model_validate_json(raw))
            except ValidationError:
                continue
        return sorted(beats, key=lambda b: b.beat_at, reverse=True)

    def alive(self, within_s: float, *, host: str | None = None) -> list[WorkerBeat]:
        """The workers (of ``host``, if given) that beat within the last ``within_s`` seconds."""
        now = utcnow()
        return [b for b in self.workers()
                if b.age_s(now) <= within_s and (host is None or b.host == host)]
