"""The Neo4j adapter bounds every wait by ``graph_timeout_s`` (a stalled store must fail a
request, not hang it): the driver's connect, pool-acquisition and retry limits, and each
query's transaction timeout. A fake driver records what the adapter asks for."""

from __future__ import annotations

from typing import Any

import neo4j
import pytest

from knotwork.infra.graph_factory import create_graph_store
from knotwork.infra.neo4j.store import Neo4jGraphStore
from knotwork.settings import GraphBackend, Settings


class _Result:
    def __init__(self) -> None:
        self.records: list[Any] = []


class _Driver:
    def __init__(self, uri: str, **config: Any) -> None:
        self.uri, self.config = uri, config
        self.queries: list[Any] = []

    def execute_query(self, query: Any, params: Any = None, **kwargs: Any) -> _Result:
        self.queries.append(query)
        return _Result()

    def close(self) -> None:
        pass


def test_the_driver_and_each_query_are_bounded(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Any) -> None:
    made: list[_Driver] = []

    def driver(uri: str, **config: Any) -> _Driver:
        made.append(_Driver(uri, **config))
        return made[-1]

    monkeypatch.setattr(neo4j.GraphDatabase, "driver", driver)
    settings = Settings(data_dir=tmp_path, graph_backend=GraphBackend.NEO4J,  # type: ignore[call-arg]
                        neo4j_uri="neo4j://db.invalid:7687", graph_timeout_s=3.5)
    store = create_graph_store(settings)
    assert isinstance(store, Neo4jGraphStore)
    [d] = made
    assert d.config["connection_timeout"] == 3.5
    assert d.config["connection_acquisition_timeout"] == 3.5
    assert d.config["max_transaction_retry_time"] == 3.5
    store.get_entities("g", ["x"])
    assert d.queries and all(isinstance(q, neo4j.Query) and q.timeout == 3.5 for q in d.queries)
