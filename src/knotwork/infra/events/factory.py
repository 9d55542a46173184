"""Build the EventQueue: ``redis_url``, else the embedded/configured FalkorDB's redis-server."""

from __future__ import annotations

import structlog

from knotwork.domain.ports import EventQueue, GraphStore
from knotwork.settings import Settings

log = structlog.get_logger(__name__)


def create_event_queue(settings: Settings, graph: GraphStore | None = None) -> EventQueue:
    from knotwork.infra.events.redis_streams import RedisStreamEventQueue

    if settings.redis_url:
        return RedisStreamEventQueue.from_url(settings.redis_url, prefix=settings.queue_prefix)
    from knotwork.infra.falkordb.store import FalkorGraphStore
    from knotwork.observability.tracing import unwrap

    graph = unwrap(graph)
    if isinstance(graph, FalkorGraphStore):  # FalkorDB is a Redis: its server carries the streams
        return RedisStreamEventQueue.connect(graph.host, graph.port, username=graph.username,
                                             password=graph.password,
                                             prefix=settings.queue_prefix,
                                             options=graph.redis_options())
    from knotwork.infra.events.memory import InMemoryEventQueue

    log.warning("events.in_memory", reason="no redis_url and the graph store is not FalkorDB")
    return InMemoryEventQueue()
