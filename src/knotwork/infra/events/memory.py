"""An in-process EventQueue with the Redis Streams semantics (tests, Neo4j without Redis)."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from knotwork.domain.events import CommunitiesRebuilt, CommunityUpdated, Delivery


@dataclass
class _Pending:
    consumer: str
    since: float
    times: int


@dataclass
class _Group:
    cursor: int = 0  # index of the next never-delivered message
    pending: dict[str, _Pending] = field(default_factory=dict)


@dataclass
class _Topic:
    messages: list[tuple[str, CommunityUpdated | CommunitiesRebuilt]] = field(default_factory=list)
    groups: dict[str, _Group] = field(default_factory=dict)


class InMemoryEventQueue:
    def __init__(self) -> None:
        self._topics: dict[str, _Topic] = {}
        self._cond = threading.Condition()
        self._seq = itertools.count(1)

    def publish(self, topic: str, event: CommunityUpdated | CommunitiesRebuilt) -> str:
        with self._cond:
            message_id = f"{int(time.time() * 1000)}-{next(self._seq)}"
            self._topics.setdefault(topic, _Topic()).messages.append((message_id, event))
            self._cond.notify_all()
            return message_id

    def consume(self, topic: str, group: str, consumer: str, *, count: int = 10,
                block_ms: int | None = None, claim_idle_ms: int | None = None
                ) -> list[Delivery]:
        if count < 1:
            return []
        deadline = time.monotonic() + (block_ms or 0) / 1000.0
        with self._cond:
            state = self._topics.setdefault(topic, _Topic())
            grp = state.groups.setdefault(group, _Group())
            out: list[Delivery] = []
            if claim_idle_ms is not None:
                now = time.monotonic()
                by_id = dict(state.messages)
                for message_id, entry in list(grp.pending.items()):
                    if len(out) >= count:
                        break
                    if (now - entry.since) * 1000.0 >= claim_idle_ms:
                        entry.consumer, entry.since, entry.times = consumer, now, entry.times + 1
                        out.append(Delivery(topic=topic, message_id=message_id,
                                            event=by_id[message_id], deliveries=entry.times))
            while len(out) < count:
                if grp.cursor < len(state.messages):
                    message_id, event = state.messages[grp.cursor]
                    grp.cursor += 1
                    grp.pending[message_id] = _Pending(consumer, time.monotonic(), 1)
                    out.append(Delivery(topic=topic, message_id=message_id, event=event))
                    continue
                remaining = deadline - time.monotonic()
                if out or block_ms is None or remaining <= 0:
                    break
                self._cond.wait(remaining)
            return out

    def ack(self, topic: str, group: str, message_ids: Sequence[str]) -> int:
        with self._cond:
            grp = self._topics.get(topic, _Topic()).groups.get(group)
            if grp is None:
                return 0
            return sum(1 for m in dict.fromkeys(message_ids) if grp.pending.pop(m, None))

    def pending(self, topic: str, group: str) -> int:
        with self._cond:
            grp = self._topics.get(topic, _Topic()).groups.get(group)
            return len(grp.pending) if grp else 0

    def delete_topic(self, topic: str) -> None:
        with self._cond:
            self._topics.pop(topic, None)

    def close(self) -> None:
        return None
