"""GraphStore over FalkorDB (Redis protocol): one graph per tenant, ``knotwork__{group_id}``."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, TypedDict
from urllib.parse import unquote, urlparse

import structlog
from redis.exceptions import ResponseError

from knotwork.domain.text import clean_value
from knotwork.infra.graph_common import community_cypher, cypher
from knotwork.infra.graph_common.base import CypherGraphStore
from knotwork.infra.graph_common.records import Row, validate_group_id

if TYPE_CHECKING:
    from falkordb import FalkorDB, Graph
    from redis.retry import Retry

    from knotwork.infra.falkordb.server import EmbeddedFalkorDB

log = structlog.get_logger(__name__)

GRAPH_PREFIX = "knotwork__"
_EMPTY_KEY = "empty key"  # FalkorDB's error for a query on a graph that does not exist
_ALREADY = ("already indexed", "already exists")


class RedisTimeouts(TypedDict, total=False):
    """redis-py client options (keyword arguments of ``redis.Redis``) bounding a call."""

    socket_timeout: float
    socket_connect_timeout: float
    retry: Retry


def redis_timeouts(timeout_s: float | None) -> RedisTimeouts:
    """redis-py options bounding a call by ``timeout_s``: its default retries a timed-out call
    with backoff (about a minute on a stopped server). No timeout: redis-py's defaults."""
    if timeout_s is None:
        return {}
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    return {"socket_timeout": timeout_s, "socket_connect_timeout": timeout_s,
            "retry": Retry(NoBackoff(), 0)}


def graph_name(group_id: str) -> str:
    return GRAPH_PREFIX + validate_group_id(group_id)


class FalkorGraphStore(CypherGraphStore):
    """One FalkorDB graph per tenant; every query still filters by ``group_id``.

    ``server``: an :class:`EmbeddedFalkorDB` this store owns and closes with itself.
    """

    find_by_keys_query = cypher.FIND_ENTITIES_BY_KEYS_UNWIND

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 6379,
        *,
        password: str | None = None,
        username: str | None = None,
        server: EmbeddedFalkorDB | None = None,
        timeout_s: float | None = None,
    ) -> None:
        super().__init__()
        from falkordb import FalkorDB

        self.host, self.port = host, port
        # kept so other Redis clients (the event queue) can reach the same server
        self.username, self.password = username, password
        self.timeout_s = timeout_s  # a stalled server raises redis' TimeoutError after it
        self._db: FalkorDB = FalkorDB(host=host, port=port, password=password, username=username,
                                      socket_timeout=timeout_s, socket_connect_timeout=timeout_s)
        self._graphs: dict[str, Graph] = {}
        self._server = server

    @classmethod
    def from_url(cls, url: str, *, server: EmbeddedFalkorDB | None = None,
                 timeout_s: float | None = None) -> FalkorGraphStore:
        """``redis://[user:password@]host:port`` (also ``falkor://``)."""
        parsed = urlparse(url)
        if parsed.scheme not in {"redis", "falkor", "falkordb"}:
            raise ValueError(f"unsupported FalkorDB url scheme: {parsed.scheme!r}")
        return cls(
            parsed.hostname or "127.0.0.1",
            parsed.port or 6379,
            username=unquote(parsed.username) if parsed.username else None,
            password=unquote(parsed.password) if parsed.password else None,
            server=server,
            timeout_s=timeout_s,
        )

    def redis_options(self) -> RedisTimeouts:
        """Options for other Redis clients on this server (cache, events, job queue): the same
        socket timeout and one attempt, so a stalled server fails them as fast as the graph."""
        return redis_timeouts(self.timeout_s)

    # ------------------------------------------------------------------ plumbing

    def _graph(self, group_id: str) -> Graph:
        name = graph_name(group_id)
        graph = self._graphs.get(name)
        if graph is None:
            graph = self._graphs[name] = self._db.select_graph(name)
        return graph

    def _run(
        self, group_id: str, query: str, params: dict[str, Any], *, write: bool = False
    ) -> list[Row]:
        graph = self._graph(group_id)
        params = clean_value(params)  # NUL / lone surrogates break FalkorDB's parameter parser
        try:
            result = graph.query(query, params) if write else graph.ro_query(query, params)
        except ResponseError as exc:
            if not write and _EMPTY_KEY in str(exc):
                return []  # the tenant's graph does not exist yet: nothing to read
            raise
        columns = [str(column[1]) for column in result.header]
        return [dict(zip(columns, row, strict=True)) for row in result.result_set]

    # ------------------------------------------------------------------ schema / lifecycle

    def _create_schema(self, group_id: str) -> None:
        graph = self._graph(group_id)
        for statement in (*cypher.FALKOR_INDEXES, *community_cypher.FALKOR_INDEXES):
            try:
                graph.query(statement)
            except ResponseError as exc:
                if not any(marker in str(exc) for marker in _ALREADY):
                    raise
        for label, prop in (*cypher.FALKOR_UNIQUE, *community_cypher.FALKOR_UNIQUE):
            try:
                graph.create_node_unique_constraint(label, prop)
            except ResponseError as exc:
                if not any(marker in str(exc) for marker in _ALREADY):
                    raise

    def _drop_group(self, group_id: str) -> None:
        graph = self._graph(group_id)
        try:
            graph.delete()
        except ResponseError as exc:
            if _EMPTY_KEY not in str(exc):
                raise
        self._graphs.pop(graph_name(group_id), None)

    def list_groups(self) -> list[str]:
        """Tenants that have a graph on this server."""
        names: list[str] = self._db.list_graphs()
        return sorted(n[len(GRAPH_PREFIX) :] for n in names if n.startswith(GRAPH_PREFIX))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._db.connection.close()
        server, self._server = self._server, None
        if server is not None:
            server.close()
