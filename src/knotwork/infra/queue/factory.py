"""Build the JobQueue: ``redis_url``, else the embedded / configured FalkorDB's redis-server."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knotwork.domain.ports import GraphStore, JobQueue
from knotwork.settings import GraphBackend, Settings

if TYPE_CHECKING:
    import redis

    from knotwork.infra.queue.lock import LeaseLock


class NoJobQueueError(RuntimeError):
    """No Redis to carry the job queue (Neo4j without ``KNOTWORK_REDIS_URL``)."""


def redis_client(settings: Settings, graph: GraphStore | None = None) -> redis.Redis:
    """The Redis carrying the queue: ``redis_url``, else the FalkorDB server of ``graph``
    (the embedded stack; an instrumented store forwards ``host``/``port``), else
    ``falkordb_url``."""
    import redis

    from knotwork.infra.falkordb.store import redis_timeouts

    if settings.redis_url:
        return redis.Redis.from_url(settings.redis_url, decode_responses=True)
    host, port = getattr(graph, "host", None), getattr(graph, "port", None)
    if isinstance(host, str) and isinstance(port, int):
        # the graph's socket timeout (a worker blocks on the stream for less, ``block_ms``)
        timeout = getattr(graph, "timeout_s", None)
        return redis.Redis(host=host, port=port, username=getattr(graph, "username", None),
                           password=getattr(graph, "password", None), decode_responses=True,
                           **redis_timeouts(timeout if isinstance(timeout, float) else None))
    if settings.graph_backend == GraphBackend.FALKORDB and settings.falkordb_url:
        return redis.Redis.from_url(settings.falkordb_url, decode_responses=True)
    raise NoJobQueueError("the job queue needs Redis: set KNOTWORK_REDIS_URL")


def create_job_queue(settings: Settings, graph: GraphStore | None = None) -> JobQueue:
    """``graph``: an open graph store (its FalkorDB server carries the streams when no
    ``redis_url`` is set)."""
    from knotwork.infra.queue.redis_jobs import RedisJobQueue

    return RedisJobQueue(redis_client(settings, graph), prefix=settings.queue_prefix)


def create_writer_lock(settings: Settings, graph: GraphStore | None = None) -> LeaseLock:
    """The one store-writer lock of the data (see ``services.worker``)."""
    from knotwork.infra.queue.lock import LeaseLock

    return LeaseLock(redis_client(settings, graph), f"{settings.queue_prefix}lock:writer",
                     ttl_s=settings.queue_lock_ttl_s)
