"""One contract for every JobQueue adapter: Redis Streams on the local Redis (127.0.0.1:6379)
and on the embedded FalkorDB's redis-server. Each test uses its own key prefix and removes
its keys afterwards."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import redis

from knotwork.domain.models import RawDocument, SourceSystem
from knotwork.domain.ports import JobQueue
from knotwork.domain.tasks import (
    CommunityUpdatedTask,
    EntityToResolve,
    ExtractEntitiesTask,
    ExtractMetadata,
    Priority,
    ResolveEntityTask,
    decode_task,
    encode_task,
    task_kind,
)
from knotwork.infra.queue.redis_jobs import RedisJobQueue

LOCAL_REDIS = "redis://127.0.0.1:6379/0"
T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def _extract(i: int, priority: Priority = Priority.NORMAL) -> ExtractEntitiesTask:
    raw = RawDocument(source_system=SourceSystem.CONFLUENCE, source_id=f"p{i}", title=f"Page {i}",
                      content=f"Alice Chen leads Project {i}.", created_at=T0,
                      metadata={"space": "ENG"})
    return ExtractEntitiesTask(group_id="g1", document_id=f"d{i}", priority=priority,
                               created_at=T0, document=raw,
                               metadata=ExtractMetadata(source_system="confluence",
                                                        document_title=raw.title,
                                                        source_id=raw.source_id,
                                                        content_hash=f"h{i}"))


@pytest.fixture(params=["redis", "falkordb"])
def queue(request: pytest.FixtureRequest) -> Iterator[RedisJobQueue]:
    url = LOCAL_REDIS if request.param == "redis" else request.getfixturevalue("falkordb_url")
    client = redis.Redis.from_url(url, decode_responses=True)
    try:
        client.ping()
    except redis.ConnectionError:
        pytest.skip(f"no Redis at {url}")
    prefix = f"kwtest:{secrets.token_hex(6)}:"
    adapter = RedisJobQueue.from_url(url, prefix=prefix)
    try:
        yield adapter
    finally:
        adapter.close()
        keys = list(client.scan_iter(match=prefix + "*"))
        if keys:
            client.delete(*keys)
        client.close()


def test_the_adapter_satisfies_the_port(queue: RedisJobQueue) -> None:
    assert isinstance(queue, JobQueue)


def test_messages_round_trip_in_the_design_formats() -> None:
    resolve = ResolveEntityTask(group_id="g", created_at=T0, blocking_keys=["prefix:john"],
                                entity=EntityToResolve(display_name="John Smith",
                                                       embedding=[0.5, 0.25]))
    community = CommunityUpdatedTask(group_id="g", community_id="c1", level=0, entity_count=4,
                                     created_at=T0, timestamp=T0)
    for task in (_extract(1), resolve, community):
        kind = task_kind(task)
        assert decode_task(kind, encode_task(task)) == task
    assert '"task_type":"EXTRACT_ENTITIES"' in encode_task(_extract(1))
    assert resolve.priority is Priority.HIGH and community.priority is Priority.LOW
    with pytest.raises(ValueError):
        decode_task("NOPE", "{}")


def test_enqueue_fetch_ack_empties_the_stream(queue: RedisJobQueue) -> None:
    tasks = [_extract(i) for i in range(3)]
    ids = [queue.enqueue(t) for t in tasks]
    assert len(set(ids)) == 3
    jobs = queue.fetch("w1", count=10)
    assert [j.task for j in jobs] == tasks
    assert all(j.stream == "normal" and j.deliveries == 1 for j in jobs)
    stats = queue.stats()
    normal = next(s for s in stats.streams if s.stream == "normal")
    assert (normal.length, normal.pending, normal.consumers) == (3, 3, 1)
    assert queue.ack(jobs[0]) is True
    assert queue.ack(jobs[0]) is False  # twice is harmless
    queue.ack(jobs[1])
    queue.ack(jobs[2])
    assert queue.fetch("w1", count=10) == []
    assert queue.stats().outstanding == 0


def test_higher_priority_is_served_first(queue: RedisJobQueue) -> None:
    queue.enqueue(_extract(1, Priority.LOW))
    queue.enqueue(_extract(2, Priority.NORMAL))
    queue.enqueue(_extract(3, Priority.HIGH))
    queue.enqueue(_extract(4, Priority.NORMAL))
    order = [j.task.document_id for j in queue.fetch("w", count=10)]  # type: ignore[union-attr]
    assert order == ["d3", "d2", "d4", "d1"]
    one = queue.fetch("w", count=1)
    assert one == []  # all delivered already
    queue.enqueue(_extract(5, Priority.LOW))
    queue.enqueue(_extract(6, Priority.HIGH))
    assert [j.task.document_id for j in queue.fetch("w", count=1)] == ["d6"]  # type: ignore[union-attr]


def test_consumers_share_the_work(queue: RedisJobQueue) -> None:
    for i in range(6):
        queue.enqueue(_extract(i))
    a = queue.fetch("a", count=3)
    b = queue.fetch("b", count=10)
    assert len(a) == 3 and len(b) == 3
    assert {j.message_id for j in a}.isdisjoint({j.message_id for j in b})


def test_a_job_abandoned_by_a_dead_worker_is_claimed(queue: RedisJobQueue) -> None:
    queue.enqueue(_extract(1))
    [lost] = queue.fetch("crashed")
    assert queue.fetch("rescuer", claim_idle_ms=60_000) == []  # not idle long enough
    time.sleep(0.05)
    [claimed] = queue.fetch("rescuer", claim_idle_ms=10)
    assert (claimed.message_id, claimed.deliveries, claimed.task) == (lost.message_id, 2, lost.task)
    assert queue.ack(claimed)
    assert queue.fetch("rescuer", claim_idle_ms=0) == []


def test_retry_comes_back_after_its_delay_with_a_count(queue: RedisJobQueue) -> None:
    queue.enqueue(_extract(1))
    [job] = queue.fetch("w")
    queue.retry(job, "boom", delay_s=0.3)
    stats = queue.stats()
    assert stats.retrying == 1 and stats.outstanding == 1
    assert all(s.length == 0 and s.pending == 0 for s in stats.streams)
    assert queue.fetch("w") == []
    time.sleep(0.35)
    [again] = queue.fetch("w")
    assert again.task.retry_count == 1 and again.task.task_id == job.task.task_id
    assert again.task.document == job.task.document  # type: ignore[union-attr]
    assert queue.stats().retrying == 0


def test_dead_letters_are_listed_and_can_be_requeued(queue: RedisJobQueue) -> None:
    queue.enqueue(_extract(1))
    queue.enqueue(_extract(2))
    first, second = queue.fetch("w", count=2)
    queue.retry(first, "transient", delay_s=0)
    [first] = queue.fetch("w")
    queue.dead_letter(first, "ValueError: page is not valid")
    [dead] = queue.dead_letters()
    assert (dead.kind, dead.error, dead.task_id, dead.group_id, dead.retry_count) == (
        "EXTRACT_ENTITIES", "ValueError: page is not valid", first.task.task_id, "g1", 1)
    assert queue.stats().dead == 1
    assert queue.requeue_dead() == 1
    assert queue.stats().dead == 0
    [back] = queue.fetch("w")
    assert back.task.task_id == first.task.task_id and back.task.retry_count == 0
    queue.ack(second)
    queue.ack(back)
    assert queue.stats().outstanding == 0


def test_an_undecodable_entry_is_dead_lettered_not_delivered(queue: RedisJobQueue) -> None:
    client = queue._client  # the adapter's own connection
    queue.fetch("w")  # creates the groups
    client.xadd(queue.stream_key("normal"), {"kind": "EXTRACT_ENTITIES", "body": "{not json"})
    client.xadd(queue.stream_key("high"), {"kind": "MYSTERY", "body": "{}"})
    queue.enqueue(_extract(1))
    jobs = queue.fetch("w", count=10)
    assert [j.task.document_id for j in jobs] == ["d1"]  # type: ignore[union-attr]
    dead = queue.dead_letters()
    assert sorted(d.kind for d in dead) == ["EXTRACT_ENTITIES", "MYSTERY"]
    assert all(d.error.startswith("undecodable task") for d in dead)
    assert queue.stats().streams[0].length == 0  # the poison entry left the high stream


def test_block_waits_for_an_enqueue(queue: RedisJobQueue) -> None:
    started = time.monotonic()
    assert queue.fetch("w", block_ms=100) == []
    assert time.monotonic() - started >= 0.08
    timer = threading.Timer(0.1, lambda: queue.enqueue(_extract(9, Priority.LOW)))
    timer.start()
    try:
        jobs = queue.fetch("w", block_ms=5000)
    finally:
        timer.join()
    assert [j.stream for j in jobs] == ["low"]


def test_purge_removes_everything(queue: RedisJobQueue) -> None:
    queue.enqueue(_extract(1))
    [job] = queue.fetch("w")
    queue.dead_letter(job, "x")
    queue.enqueue(_extract(2))
    queue.purge()
    stats = queue.stats()
    assert stats.outstanding == 0 and stats.dead == 0
    queue.enqueue(_extract(3))  # usable again after a purge
    assert len(queue.fetch("w")) == 1


def test_writer_lease_excludes_renews_and_expires(queue: RedisJobQueue) -> None:
    from knotwork.infra.queue.lock import LeaseLock, LockTimeoutError

    client = queue._client
    key = queue.stream_key("lock-test")
    a, b = LeaseLock(client, key, ttl_s=0.3), LeaseLock(client, key, ttl_s=0.3)
    a.acquire()
    time.sleep(0.8)  # past the lease: still held because the holder renews it
    with pytest.raises(LockTimeoutError):
        b.acquire(wait_s=0.2)
    assert a.held and not a.lost
    a.release()
    b.acquire(wait_s=1)
    b.release()
    client.set(key, "a-dead-worker", px=300)  # a holder that died: nobody renews
    started = time.monotonic()
    b.acquire(wait_s=5)
    assert 0.15 <= time.monotonic() - started < 2
    b.release()
    assert client.get(key) is None
