"""EventQueue over Redis Streams (redis-py): XADD / XREADGROUP / XACK / XAUTOCLAIM.

One stream per topic, ``{prefix}stream:{topic}``, trimmed approximately to ``max_len``.
Consumer groups are created from the start of the stream (id ``0``) on first use, so a group
created after some events were published still sees them. Works against any Redis >= 6.2,
including the embedded FalkorDB's redis-server.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import redis
import structlog
from pydantic import ValidationError

from knotwork.domain.events import CommunitiesRebuilt, CommunityUpdated, Delivery, decode_event

if TYPE_CHECKING:
    from knotwork.infra.falkordb.store import RedisTimeouts

log = structlog.get_logger(__name__)

FIELD = "event"
DEFAULT_MAX_LEN = 100_000


class RedisStreamEventQueue:
    def __init__(self, client: redis.Redis, *, prefix: str = "knotwork:",
                 max_len: int = DEFAULT_MAX_LEN) -> None:
        self._client = client
        self._prefix = prefix
        self._max_len = max_len
        self._groups: set[tuple[str, str]] = set()

    @classmethod
    def from_url(cls, url: str, *, prefix: str = "knotwork:",
                 max_len: int = DEFAULT_MAX_LEN) -> RedisStreamEventQueue:
        client = redis.Redis.from_url(url, decode_responses=True)
        return cls(client, prefix=prefix, max_len=max_len)

    @classmethod
    def connect(cls, host: str, port: int, *, username: str | None = None,
                password: str | None = None, prefix: str = "knotwork:",
                max_len: int = DEFAULT_MAX_LEN,
                options: RedisTimeouts | None = None) -> RedisStreamEventQueue:
        """``options``: more redis-py client options (timeouts, see ``redis_options``)."""
        client = redis.Redis(host=host, port=port, username=username, password=password,
                             decode_responses=True, **(options or {}))
        return cls(client, prefix=prefix, max_len=max_len)

    def key(self, topic: str) -> str:
        if not topic or any(c.isspace() for c in topic):
            raise ValueError(f"invalid topic {topic!r}")
        return f"{self._prefix}stream:{topic}"

    # ------------------------------------------------------------------ port

    def publish(self, topic: str, event: CommunityUpdated | CommunitiesRebuilt) -> str:
        message_id = self._client.xadd(self.key(topic), {FIELD: event.model_dump_json()},
                                       maxlen=self._max_len, approximate=True)
        return str(message_id)

    def consume(self, topic: str, group: str, consumer: str, *, count: int = 10,
                block_ms: int | None = None, claim_idle_ms: int | None = None
                ) -> list[Delivery]:
        if count < 1:
            return []
        key = self.key(topic)
        self._ensure_group(key, group)
        out: list[Delivery] = []
        if claim_idle_ms is not None:
            out += self._claim(topic, key, group, consumer, count, claim_idle_ms)
        if len(out) < count:
            reply = self._client.xreadgroup(group, consumer, {key: ">"}, count=count - len(out),
                                            block=block_ms)
            for _, messages in cast(list[Any], reply or []):
                out += self._deliveries(topic, key, group, messages, redelivered=False)
        return out

    def ack(self, topic: str, group: str, message_ids: Sequence[str]) -> int:
        if not message_ids:
            return 0
        return int(self._client.xack(self.key(topic), group, *message_ids))

    def pending(self, topic: str, group: str) -> int:
        try:
            summary: dict[str, Any] = self._client.xpending(self.key(topic), group)
        except redis.ResponseError as exc:
            if "NOGROUP" in str(exc):
                return 0
            raise
        return int(summary.get("pending") or 0)

    def delete_topic(self, topic: str) -> None:
        key = self.key(topic)
        self._client.delete(key)
        self._groups = {g for g in self._groups if g[0] != key}

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._client.close()

    # ------------------------------------------------------------------ helpers

    def _ensure_group(self, key: str, group: str) -> None:
        if (key, group) in self._groups:
            return
        try:
            self._client.xgroup_create(key, group, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        self._groups.add((key, group))

    def _claim(self, topic: str, key: str, group: str, consumer: str, count: int,
               idle_ms: int) -> list[Delivery]:
        reply: list[Any] = self._client.xautoclaim(key, group, consumer, idle_ms,
                                                   start_id="0-0", count=count)
        messages = reply[1] if len(reply) > 1 else []
        return self._deliveries(topic, key, group, messages, redelivered=True)

    def _deliveries(self, topic: str, key: str, group: str, messages: list[Any],
                    *, redelivered: bool) -> list[Delivery]:
        out: list[Delivery] = []
        for message_id, fields in messages:
            if not fields:  # trimmed away while pending
                self._client.xack(key, group, message_id)
                continue
            try:
                event = decode_event(fields[FIELD])
            except (KeyError, ValidationError, ValueError) as exc:
                log.warning("events.undecodable", topic=topic, id=message_id, error=str(exc))
                self._client.xack(key, group, message_id)  # poison: never hand it out again
                continue
            times = self._times_delivered(key, group, message_id) if redelivered else 1
            out.append(Delivery(topic=topic, message_id=str(message_id), event=event,
                                deliveries=times))
        return out

    def _times_delivered(self, key: str, group: str, message_id: str) -> int:
        rows = cast(list[dict[str, Any]], self._client.xpending_range(
            key, group, min=message_id, max=message_id, count=1))
        return int(rows[0]["times_delivered"]) if rows else 1
