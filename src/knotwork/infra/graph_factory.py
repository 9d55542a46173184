"""Build the configured GraphStore. Closing the store also stops an embedded server it owns."""

from __future__ import annotations

from knotwork.domain.ports import GraphStore
from knotwork.settings import GraphBackend, Settings


def create_graph_store(settings: Settings) -> GraphStore:
    """FALKORDB: ``falkordb_url`` if set, else an embedded server in ``data_dir/falkordb``.

    NEO4J: the ``neo4j_*`` settings (``neo4j_uri`` is required).
    """
    if settings.graph_backend == GraphBackend.FALKORDB:
        from knotwork.infra.falkordb.store import FalkorGraphStore

        if settings.falkordb_url:
            return FalkorGraphStore.from_url(settings.falkordb_url,
                                             timeout_s=settings.graph_timeout_s)
        from knotwork.infra.falkordb.server import EmbeddedFalkorDB

        server = EmbeddedFalkorDB(settings.data_dir / "falkordb").start()
        try:
            return FalkorGraphStore(server.host, server.port, server=server,
                                    timeout_s=settings.graph_timeout_s)
        except Exception:
            server.close()
            raise
    if settings.graph_backend == GraphBackend.NEO4J:
        if not settings.neo4j_uri:
            raise ValueError("graph_backend=neo4j needs KNOTWORK_NEO4J_URI")
        from knotwork.infra.neo4j.store import Neo4jGraphStore

        return Neo4jGraphStore(
            settings.neo4j_uri,
            settings.neo4j_user,
            settings.neo4j_password.get_secret_value(),
            settings.neo4j_database,
            timeout_s=settings.graph_timeout_s,
        )
    raise ValueError(f"unknown graph backend: {settings.graph_backend!r}")
