"""GraphStore over Neo4j (official sync driver). All tenants share one database.

``neo4j`` is an optional backend: it is imported in the constructor only.
"""

from __future__ import annotations

from typing import Any, Final

import structlog

from knotwork.domain.text import clean_value
from knotwork.infra.graph_common import community_cypher, cypher
from knotwork.infra.graph_common.base import CypherGraphStore
from knotwork.infra.graph_common.records import Row

log = structlog.get_logger(__name__)

DELETE_BATCH = 5000

# Schema DDL run once per database by ``_create_schema``, in order (also linted statically by
# tests/contract/test_neo4j_cypher_static.py).
NEO4J_SCHEMA_STATEMENTS: Final[tuple[str, ...]] = (
    *cypher.NEO4J_SCHEMA,
    *community_cypher.NEO4J_SCHEMA,
)


class Neo4jGraphStore(CypherGraphStore):
    """Tenants are isolated by the ``group_id`` filter in every query."""

    find_by_keys_query = cypher.FIND_ENTITIES_BY_KEYS_ANY

    def __init__(self, uri: str, user: str, password: str, database: str = "neo4j",
                 timeout_s: float = 20.0) -> None:
        super().__init__()
        import neo4j

        self._neo4j = neo4j
        # bounded waits: connecting, taking a pooled connection, retrying a transaction, and
        # each query (a server-side transaction timeout); the driver has no client read
        # timeout, a server that stops answering mid-read is dropped at its keep-alive hint
        self._driver: Any = neo4j.GraphDatabase.driver(
            uri, auth=(user, password), connection_timeout=timeout_s,
            connection_acquisition_timeout=timeout_s, max_transaction_retry_time=timeout_s)
        self._timeout = timeout_s
        self._database = database
        self._schema_created = False

    def _run(
        self, group_id: str, query: str, params: dict[str, Any], *, write: bool = False
    ) -> list[Row]:
        routing = self._neo4j.RoutingControl.WRITE if write else self._neo4j.RoutingControl.READ
        result = self._driver.execute_query(
            self._neo4j.Query(query, timeout=self._timeout), clean_value(params),
            database_=self._database, routing_=routing
        )
        return [record.data() for record in result.records]

    def _create_schema(self, group_id: str) -> None:
        if self._schema_created:  # one schema for every tenant
            return
        for statement in NEO4J_SCHEMA_STATEMENTS:
            self._driver.execute_query(statement, database_=self._database)
        self._schema_created = True

    def _drop_group(self, group_id: str) -> None:
        for query in (
            community_cypher.DELETE_COMMUNITIES_BATCH,
            cypher.DELETE_EPISODES_BATCH,
            cypher.DELETE_ENTITIES_BATCH,
        ):
            while True:
                rows = self._run(
                    group_id, query, {"group_id": group_id, "batch": DELETE_BATCH}, write=True
                )
                if not rows or int(rows[0]["deleted"]) == 0:
                    break
        params = {"group_id": group_id}
        self._run(group_id, community_cypher.DELETE_COMMUNITY_STATE, params, write=True)

    def close(self) -> None:
        self._driver.close()
