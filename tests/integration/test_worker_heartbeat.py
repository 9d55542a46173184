"""Worker heartbeats on the local Redis (127.0.0.1:6379): a worker's loop beats, a clean exit
removes its beat, and ``knotwork queue alive`` / ``queue workers`` (the container healthcheck)
read them. No sleeps: stale beats are written with an old timestamp."""

from __future__ import annotations

import json
import secrets
import socket
from collections.abc import Iterator
from datetime import timedelta
from types import SimpleNamespace

import pytest
import redis
from typer.testing import CliRunner

from knotwork.domain.timeutil import utcnow
from knotwork.infra.queue.heartbeat import Heartbeat, WorkerBeat
from knotwork.infra.queue.redis_jobs import RedisJobQueue
from knotwork.services.cli import app as cli_app
from knotwork.services.worker.worker import Worker
from knotwork.settings import Settings

pytestmark = [pytest.mark.integration]

LOCAL_REDIS = "redis://127.0.0.1:6379/0"


@pytest.fixture
def client() -> Iterator[redis.Redis]:
    conn = redis.Redis.from_url(LOCAL_REDIS, decode_responses=True)
    try:
        conn.ping()
    except redis.ConnectionError:
        pytest.skip(f"no Redis at {LOCAL_REDIS}")
    yield conn
    conn.close()


@pytest.fixture
def prefix(client: redis.Redis) -> Iterator[str]:
    value = f"kwtest:{secrets.token_hex(4)}:"
    yield value
    for key in client.scan_iter(match=f"{value}*"):
        client.delete(key)


def _put(client: redis.Redis, prefix: str, name: str, host: str, age_s: float) -> None:
    beat = WorkerBeat(name=name, host=host, pid=1, jobs=3, beat_at=utcnow() - timedelta(seconds=age_s))
    client.set(f"{prefix}worker:{name}", beat.model_dump_json(), ex=600)


def _cli(prefix: str, *args: str) -> tuple[int, str]:
    env = {"KNOTWORK_REDIS_URL": LOCAL_REDIS, "KNOTWORK_QUEUE_PREFIX": prefix}
    result = CliRunner().invoke(cli_app, ["queue", *args], env=env)
    return result.exit_code, result.output


def test_beats_are_throttled_listed_and_removed(client: redis.Redis, prefix: str) -> None:
    beats = Heartbeat(client, prefix=prefix, ttl_s=60, every_s=3600)
    assert beats.workers() == []
    assert beats.beat("w1", 2, force=True) is True
    assert beats.beat("w1", 5) is False  # within every_s: not written again
    [live] = beats.workers()
    assert (live.name, live.host, live.jobs) == ("w1", socket.gethostname(), 2)
    assert 0 < client.pttl(beats.key("w1")) <= 60_000  # expires by itself if the worker dies
    client.set(beats.key("junk"), "not json")
    assert [b.name for b in beats.workers()] == ["w1"]
    beats.stop("w1")
    assert beats.workers() == []


def test_queue_alive_and_workers_commands(client: redis.Redis, prefix: str) -> None:
    code, out = _cli(prefix, "alive")
    assert code == 1 and "no worker" in out
    _put(client, prefix, "elsewhere-1", "another-host", age_s=1)
    assert _cli(prefix, "alive")[0] == 0
    code, out = _cli(prefix, "alive", "--this-host")  # the container's own check
    assert code == 1 and socket.gethostname() in out
    _put(client, prefix, "here-1", socket.gethostname(), age_s=600)  # beat long ago: hung
    assert _cli(prefix, "alive", "--this-host", "--within", "60")[0] == 1
    assert _cli(prefix, "alive", "--this-host", "--within", "900")[0] == 0
    _put(client, prefix, "here-2", socket.gethostname(), age_s=0)
    code, out = _cli(prefix, "alive", "--this-host", "--within", "60")
    assert code == 0 and "here-2" in out and "here-1" not in out
    code, out = _cli(prefix, "workers", "--json")
    assert code == 0
    listed = json.loads(out)
    assert [w["name"] for w in listed] == ["here-2", "elsewhere-1", "here-1"]
    assert listed[-1]["age_s"] >= 600 and listed[0]["jobs"] == 3


def test_queue_alive_without_redis_fails_with_one_line() -> None:
    env = {"KNOTWORK_REDIS_URL": "redis://127.0.0.1:1/0", "KNOTWORK_QUEUE_PREFIX": "kwtest:none:"}
    result = CliRunner().invoke(cli_app, ["queue", "alive"], env=env)
    assert result.exit_code == 2 and "Redis" in result.output


class _Recording:
    """The real heartbeat, noting what the store held right after each beat."""

    def __init__(self, beats: Heartbeat) -> None:
        self.inner = beats
        self.seen: list[list[str]] = []

    def beat(self, name: str, jobs: int = 0, *, force: bool = False) -> bool:
        wrote = self.inner.beat(name, jobs, force=force)
        self.seen.append([b.name for b in self.inner.workers()])
        return wrote

    def stop(self, name: str) -> None:
        self.inner.stop(name)


def test_the_worker_loop_beats_and_clears_its_beat(client: redis.Redis, prefix: str) -> None:
    settings = Settings(queue_batch=4)  # type: ignore[call-arg]
    runtime = SimpleNamespace(settings=settings)  # an empty queue: no job reaches the stores
    queue = RedisJobQueue(client, prefix=prefix)
    beats = _Recording(Heartbeat(client, prefix=prefix, ttl_s=60, every_s=0))
    worker = Worker(runtime, queue, SimpleNamespace(), name="loop-1",  # type: ignore[arg-type]
                    heartbeat=beats)
    worker.run(until_empty=True, block_ms=10)
    assert len(beats.seen) >= 2 and all(seen == ["loop-1"] for seen in beats.seen)
    assert beats.inner.workers() == []  # a clean exit removes the beat
