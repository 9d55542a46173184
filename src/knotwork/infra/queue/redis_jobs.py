"""JobQueue over Redis Streams (redis-py), for Redis >= 6.2 and the embedded FalkorDB's server.

Keys (``prefix`` default ``knotwork:``):

* ``{prefix}jobs:high`` / ``:normal`` / ``:low`` — one stream per priority, consumer group
  ``workers``; entries ``{kind, body}``. A worker reads ``high`` first, then ``normal``, then
  ``low``. A finished entry is acknowledged **and deleted**, so a stream's length is its
  backlog (waiting + in progress).
* ``{prefix}jobs:retry`` — a sorted set of failed tasks waiting out their backoff (score: due
  time); :meth:`fetch` moves due ones back to their stream atomically (a Lua script), with
  ``retry_count`` already incremented.
* ``{prefix}jobs:dead`` — the dead-letter stream: the task body, its error and history.

At-least-once: an entry stays pending until ``ack`` / ``retry`` / ``dead_letter``; one left
pending by a dead worker is claimed (XAUTOCLAIM) by the next ``fetch`` that passes
``claim_idle_ms``. Undecodable entries go straight to the dead letters.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import redis
import structlog
from pydantic import ValidationError

if TYPE_CHECKING:
    from redis.typing import EncodableT, FieldT, KeyT, StreamIdT

from knotwork.domain.tasks import (
    PRIORITY_ORDER,
    DeadLetter,
    Job,
    QueueStats,
    StreamStats,
    Task,
    decode_task,
    encode_task,
    task_kind,
)
from knotwork.domain.timeutil import utcnow

log = structlog.get_logger(__name__)

GROUP = "workers"
DEAD_MAX_LEN = 100_000
STREAMS: tuple[str, ...] = tuple(p.value.lower() for p in PRIORITY_ORDER)

# KEYS[1] retry zset; ARGV: now, limit, stream key prefix
_PROMOTE = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, member in ipairs(due) do
  redis.call('ZREM', KEYS[1], member)
  local env = cjson.decode(member)
  redis.call('XADD', ARGV[3] .. env['stream'], '*', 'kind', env['kind'], 'body', env['body'])
end
return #due
"""


class RedisJobQueue:
    def __init__(self, client: redis.Redis, *, prefix: str = "knotwork:") -> None:
        self._client = client
        self._prefix = prefix
        self._ready: set[str] = set()
        self._promote = client.register_script(_PROMOTE)

    @classmethod
    def from_url(cls, url: str, *, prefix: str = "knotwork:") -> RedisJobQueue:
        return cls(redis.Redis.from_url(url, decode_responses=True), prefix=prefix)

    @classmethod
    def connect(cls, host: str, port: int, *, username: str | None = None,
                password: str | None = None, prefix: str = "knotwork:") -> RedisJobQueue:
        client = redis.Redis(host=host, port=port, username=username, password=password,
                             decode_responses=True)
        return cls(client, prefix=prefix)

    # ------------------------------------------------------------------ keys
    def stream_key(self, stream: str) -> str:
        return f"{self._prefix}jobs:{stream}"

    @property
    def _retry_key(self) -> str:
        return f"{self._prefix}jobs:retry"

    @property
    def _dead_key(self) -> str:
        return f"{self._prefix}jobs:dead"

    # ------------------------------------------------------------------ port
    def enqueue(self, task: Task) -> str:
        stream = task.priority.value.lower()
        key = self.stream_key(stream)
        self._ensure_group(key)
        return str(self._client.xadd(key, {"kind": task_kind(task), "body": encode_task(task)}))

    def fetch(self, consumer: str, *, count: int = 1, block_ms: int | None = None,
              claim_idle_ms: int | None = None) -> list[Job]:
        if count < 1:
            return []
        for stream in STREAMS:
            self._ensure_group(self.stream_key(stream))
        self._promote(keys=[self._retry_key],
                      args=[time.time(), 1000, f"{self._prefix}jobs:"])
        out: list[Job] = []
        if claim_idle_ms is not None:
            for stream in STREAMS:
                if len(out) >= count:
                    break
                out += self._claim(stream, consumer, count - len(out), claim_idle_ms)
        for stream in STREAMS:
            if len(out) >= count:
                break
            reply = self._client.xreadgroup(GROUP, consumer, {self.stream_key(stream): ">"},
                                            count=count - len(out))
            out += self._jobs_from(reply)
        if not out and block_ms:
            keys: dict[KeyT, StreamIdT] = {self.stream_key(s): ">" for s in STREAMS}
            reply = self._client.xreadgroup(GROUP, consumer, keys, count=count, block=block_ms)
            out += self._jobs_from(reply)
        return out

    def ack(self, job: Job) -> bool:
        key = self.stream_key(job.stream)
        pipe = self._client.pipeline(transaction=True)
        pipe.xack(key, GROUP, job.message_id)
        pipe.xdel(key, job.message_id)
        acked, _ = pipe.execute()
        return bool(acked)

    def retry(self, job: Job, error: str, delay_s: float) -> None:
        task = job.task.model_copy(update={"retry_count": job.task.retry_count + 1})
        member = json.dumps({"kind": task_kind(task), "body": encode_task(task),
                             "stream": job.stream, "error": error[:500]})
        key = self.stream_key(job.stream)
        pipe = self._client.pipeline(transaction=True)
        pipe.zadd(self._retry_key, {member: time.time() + max(0.0, delay_s)})
        pipe.xack(key, GROUP, job.message_id)
        pipe.xdel(key, job.message_id)
        pipe.execute()

    def dead_letter(self, job: Job, error: str) -> None:
        self._bury(job.stream, job.message_id, task_kind(job.task), encode_task(job.task), error,
                   deliveries=job.deliveries, task=job.task)

    def dead_letters(self, limit: int = 100) -> list[DeadLetter]:
        rows = cast(list[Any], self._client.xrevrange(self._dead_key, count=limit))
        return [self._dead_from(message_id, fields) for message_id, fields in rows]

    def requeue_dead(self, message_ids: Sequence[str] | None = None) -> int:
        if message_ids is None:
            rows = cast(list[Any], self._client.xrange(self._dead_key))
        else:
            rows = [r for m in message_ids
                    for r in cast(list[Any], self._client.xrange(self._dead_key, m, m))]
        moved = 0
        for message_id, fields in rows:
            body = fields.get("body", "")
            with contextlib.suppress(ValidationError, ValueError):  # re-queue as is otherwise
                body = encode_task(decode_task(fields.get("kind", ""), body)
                                   .model_copy(update={"retry_count": 0}))
            stream = fields.get("stream") if fields.get("stream") in STREAMS else "normal"
            key = self.stream_key(stream)
            self._ensure_group(key)
            pipe = self._client.pipeline(transaction=True)
            pipe.xadd(key, {"kind": fields.get("kind", ""), "body": body})
            pipe.xdel(self._dead_key, message_id)
            pipe.execute()
            moved += 1
        return moved

    def stats(self) -> QueueStats:
        streams: list[StreamStats] = []
        for stream in STREAMS:
            key = self.stream_key(stream)
            pending, consumers = 0, 0
            with contextlib.suppress(redis.ResponseError):  # no such key / group yet
                for info in self._client.xinfo_groups(key):
                    if info.get("name") == GROUP:
                        pending, consumers = int(info["pending"]), int(info["consumers"])
            streams.append(StreamStats(stream=stream, length=int(self._client.xlen(key)),
                                       pending=pending, consumers=consumers))
        return QueueStats(streams=streams, retrying=int(self._client.zcard(self._retry_key)),
                          dead=int(self._client.xlen(self._dead_key)))

    def purge(self) -> None:
        keys = [self.stream_key(s) for s in STREAMS] + [self._retry_key, self._dead_key]
        self._client.delete(*keys)
        self._ready.clear()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._client.close()

    # ------------------------------------------------------------------ helpers
    def _ensure_group(self, key: str) -> None:
        if key in self._ready:
            return
        try:
            self._client.xgroup_create(key, GROUP, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        self._ready.add(key)

    def _claim(self, stream: str, consumer: str, count: int, idle_ms: int) -> list[Job]:
        key = self.stream_key(stream)
        reply: list[Any] = self._client.xautoclaim(key, GROUP, consumer, idle_ms,
                                                   start_id="0-0", count=count)
        messages = reply[1] if len(reply) > 1 else []
        return self._decode(stream, messages, redelivered=True)

    def _jobs_from(self, reply: object) -> list[Job]:
        jobs: list[Job] = []
        by_stream = {self.stream_key(s): s for s in STREAMS}
        for key, messages in cast(list[Any], reply or []):
            jobs += self._decode(by_stream[key], messages, redelivered=False)
        order = {s: i for i, s in enumerate(STREAMS)}
        return sorted(jobs, key=lambda j: order[j.stream])

    def _decode(self, stream: str, messages: list[Any], *, redelivered: bool) -> list[Job]:
        key = self.stream_key(stream)
        jobs: list[Job] = []
        for message_id, fields in messages:
            if not fields:  # deleted while pending
                self._client.xack(key, GROUP, message_id)
                continue
            kind, body = fields.get("kind", ""), fields.get("body", "")
            try:
                task = decode_task(kind, body)
            except (ValidationError, ValueError) as exc:
                error = f"undecodable task: {str(exc).splitlines()[0]}"
                log.warning("queue.undecodable", stream=stream, id=message_id, error=error)
                self._bury(stream, message_id, kind, body, error, deliveries=1, task=None)
                continue
            times = self._times_delivered(key, message_id) if redelivered else 1
            jobs.append(Job(stream=stream, message_id=str(message_id), task=task,
                            deliveries=times))
        return jobs

    def _times_delivered(self, key: str, message_id: str) -> int:
        rows = cast(list[dict[str, Any]], self._client.xpending_range(
            key, GROUP, min=message_id, max=message_id, count=1))
        return int(rows[0]["times_delivered"]) if rows else 1

    def _bury(self, stream: str, message_id: str, kind: str, body: str, error: str, *,
              deliveries: int, task: Task | None) -> None:
        key = self.stream_key(stream)
        fields: dict[FieldT, EncodableT] = {
            "kind": kind, "body": body, "error": error[:2000], "stream": stream,
            "deliveries": str(deliveries), "retry_count": str(task.retry_count if task else 0),
            "task_id": task.task_id if task else "", "group_id": task.group_id if task else "",
            "failed_at": utcnow().isoformat()}
        pipe = self._client.pipeline(transaction=True)
        pipe.xadd(self._dead_key, fields, maxlen=DEAD_MAX_LEN, approximate=True)
        pipe.xack(key, GROUP, message_id)
        pipe.xdel(key, message_id)
        pipe.execute()

    @staticmethod
    def _dead_from(message_id: str, fields: dict[str, str]) -> DeadLetter:
        return DeadLetter(
            message_id=str(message_id), kind=fields.get("kind", ""),
            task_id=fields.get("task_id") or None, group_id=fields.get("group_id") or None,
            error=fields.get("error", ""), stream=fields.get("stream", ""),
            deliveries=int(fields.get("deliveries", "1")),
            retry_count=int(fields.get("retry_count", "0")),
            failed_at=fields.get("failed_at") or utcnow().isoformat(),  # type: ignore[arg-type]
            body=fields.get("body", ""))
