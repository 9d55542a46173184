"""One contract for every EventQueue adapter: Redis Streams on the local Redis
(127.0.0.1:6379), Redis Streams on the embedded FalkorDB's redis-server, and in-memory.

Each test uses its own key prefix and removes its keys afterwards.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import redis

from knotwork.domain.events import (
    COMMUNITY_TOPIC,
    CommunitiesRebuilt,
    CommunityUpdated,
    decode_event,
    encode_event,
)
from knotwork.domain.ports import EventQueue

LOCAL_REDIS = "redis://127.0.0.1:6379/0"
T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def _event(i: int, stale: bool = True) -> CommunityUpdated:
    return CommunityUpdated(group_id="g1", timestamp=T0, community_id=f"c-{i}", level=i % 3,
                            entity_count=10 + i, summary_stale=stale)


@pytest.fixture(params=["redis", "falkordb", "memory"])
def queue(request: pytest.FixtureRequest) -> Iterator[EventQueue]:
    if request.param == "memory":
        from knotwork.infra.events.memory import InMemoryEventQueue

        yield InMemoryEventQueue()
        return
    from knotwork.infra.events.redis_streams import RedisStreamEventQueue

    url = LOCAL_REDIS if request.param == "redis" else request.getfixturevalue("falkordb_url")
    client = redis.Redis.from_url(url, decode_responses=True)
    try:
        client.ping()
    except redis.ConnectionError:
        pytest.skip(f"no Redis at {url}")
    prefix = f"kwtest:{secrets.token_hex(6)}:"
    adapter = RedisStreamEventQueue.from_url(url, prefix=prefix, max_len=1000)
    try:
        yield adapter
    finally:
        adapter.close()
        keys = list(client.scan_iter(match=prefix + "*"))
        if keys:
            client.delete(*keys)
        assert not list(client.scan_iter(match=prefix + "*"))
        client.close()


def test_event_json_round_trip() -> None:
    rebuilt = CommunitiesRebuilt(group_id="g", timestamp=T0, community_count=3, levels=2)
    for event in (_event(1), rebuilt):
        assert decode_event(encode_event(event)) == event
    assert '"event_type":"COMMUNITY_UPDATED"' in encode_event(_event(1))


def test_publish_consume_ack(queue: EventQueue) -> None:
    events = [_event(i) for i in range(3)]
    ids = [queue.publish(COMMUNITY_TOPIC, e) for e in events]
    assert len(set(ids)) == 3
    got = queue.consume(COMMUNITY_TOPIC, "workers", "w1", count=10)
    assert [d.event for d in got] == events
    assert [d.message_id for d in got] == ids
    assert all(d.topic == COMMUNITY_TOPIC and d.deliveries == 1 for d in got)
    assert queue.pending(COMMUNITY_TOPIC, "workers") == 3
    assert queue.ack(COMMUNITY_TOPIC, "workers", ids[:2]) == 2
    assert queue.ack(COMMUNITY_TOPIC, "workers", ids[:2]) == 0  # twice is harmless
    assert queue.pending(COMMUNITY_TOPIC, "workers") == 1
    assert queue.consume(COMMUNITY_TOPIC, "workers", "w1") == []  # nothing new


def test_mixed_event_types_keep_their_type(queue: EventQueue) -> None:
    rebuilt = CommunitiesRebuilt(group_id="g1", timestamp=T0, community_count=5, levels=2)
    queue.publish("t", _event(1))
    queue.publish("t", rebuilt)
    got = [d.event for d in queue.consume("t", "g", "c")]
    assert got == [_event(1), rebuilt]
    assert isinstance(got[1], CommunitiesRebuilt)


def test_count_limits_a_batch(queue: EventQueue) -> None:
    for i in range(5):
        queue.publish("t", _event(i))
    first = queue.consume("t", "g", "c", count=2)
    second = queue.consume("t", "g", "c", count=10)
    assert [d.event.community_id for d in first] == ["c-0", "c-1"]  # type: ignore[union-attr]
    assert len(second) == 3
    assert queue.consume("t", "g", "c", count=0) == []


def test_groups_each_see_every_event_consumers_share(queue: EventQueue) -> None:
    for i in range(4):
        queue.publish("t", _event(i))
    assert len(queue.consume("t", "cache", "a", count=10)) == 4
    a = queue.consume("t", "summaries", "a", count=2)
    b = queue.consume("t", "summaries", "b", count=10)
    assert len(a) == 2 and len(b) == 2
    assert {d.message_id for d in a}.isdisjoint({d.message_id for d in b})


def test_group_created_late_sees_earlier_events(queue: EventQueue) -> None:
    queue.publish("t", _event(7))
    assert [d.event for d in queue.consume("t", "late", "c")] == [_event(7)]


def test_unacked_events_are_claimed_after_idle(queue: EventQueue) -> None:
    message_id = queue.publish("t", _event(1))
    assert len(queue.consume("t", "g", "crashed")) == 1
    assert queue.consume("t", "g", "rescuer", claim_idle_ms=60_000) == []  # not idle long enough
    time.sleep(0.05)
    claimed = queue.consume("t", "g", "rescuer", claim_idle_ms=10)
    assert [(d.message_id, d.deliveries) for d in claimed] == [(message_id, 2)]
    assert queue.ack("t", "g", [message_id]) == 1
    assert queue.consume("t", "g", "rescuer", claim_idle_ms=0) == []
    assert queue.pending("t", "g") == 0


def test_block_waits_for_a_publish(queue: EventQueue) -> None:
    queue.consume("t", "g", "c")  # creates the group
    started = time.monotonic()
    assert queue.consume("t", "g", "c", block_ms=100) == []
    assert time.monotonic() - started >= 0.08
    timer = threading.Timer(0.1, lambda: queue.publish("t", _event(3)))
    timer.start()
    try:
        got = queue.consume("t", "g", "c", block_ms=5000)
    finally:
        timer.join()
    assert [d.event for d in got] == [_event(3)]


def test_topics_are_separate_and_deletable(queue: EventQueue) -> None:
    queue.publish("a", _event(1))
    queue.publish("b", _event(2))
    assert [d.event for d in queue.consume("a", "g", "c")] == [_event(1)]
    queue.delete_topic("b")
    assert queue.consume("b", "g", "c") == []
    assert queue.pending("b", "nobody") == 0
