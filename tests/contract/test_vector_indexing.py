"""qdrant-edge HNSW builds: due after ``index_threshold`` new points, built by ingest calls.

The engine has no background optimiser, so the product builds the indexes itself: the store
counts the points written since a collection's last build, and the ingestion pipeline builds
the due ones at the end of each ingest call.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from knotwork.core import Knotwork
from knotwork.domain.models import RawDocument, SourceSystem
from knotwork.domain.ports import Collection, VectorPoint
from knotwork.infra.qdrant_edge.store import QdrantEdgeVectorStore
from knotwork.infra.vector_factory import build_due_indexes, create_vector_store
from knotwork.observability.tracing import unwrap
from knotwork.settings import Settings, VectorBackend
from tests.conftest import SettingsFactory

C = Collection.FACTS
DIM = 16


def _points(n: int, start: int = 0, seed: int = 3) -> list[VectorPoint]:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, DIM))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [VectorPoint(id=f"00000000-0000-0000-0000-{start + i:012d}", vector=v.tolist(),
                        group_id="a", payload={"n": start + i}) for i, v in enumerate(vectors)]


def test_a_build_is_due_after_the_threshold_and_search_still_answers(tmp_path: Path) -> None:
    store = QdrantEdgeVectorStore(tmp_path, index_threshold=50)
    store.ensure_collection(C, DIM)
    store.ensure_collection(Collection.ENTITIES, DIM)
    first, second = _points(30), _points(30, start=30, seed=4)
    store.upsert(C, first)
    assert store.index_due() == []
    assert store.build_due_indexes() == []
    store.upsert(C, second)
    store.upsert(Collection.ENTITIES, _points(10))
    assert store.index_due() == [C]  # the entities collection is still below the threshold
    assert store.build_due_indexes() == [C]
    assert store.index_due() == []
    query = second[7].vector
    hits = store.search(C, query, group_id="a", limit=3)
    assert hits[0].id == second[7].id and hits[0].score == pytest.approx(1.0, abs=1e-4)
    assert store.count(C, "a") == 60
    store.close()


def test_points_left_unindexed_by_an_earlier_process_count_at_open(tmp_path: Path) -> None:
    store = QdrantEdgeVectorStore(tmp_path, index_threshold=0)
    store.ensure_collection(C, DIM)
    store.upsert(C, _points(40))
    assert store.index_due() == []  # 0: never due
    store.close()
    again = QdrantEdgeVectorStore(tmp_path, index_threshold=40)
    try:
        assert again.index_due() == [C]  # 40 points, none indexed
        assert again.build_due_indexes() == [C]
        assert again.index_due() == []
    finally:
        again.close()


def test_threshold_comes_from_the_settings(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        QdrantEdgeVectorStore(tmp_path, index_threshold=-1)
    store = create_vector_store(Settings(vector_backend=VectorBackend.QDRANT_EDGE, data_dir=tmp_path,
                                         vector_index_threshold=5))
    assert isinstance(store, QdrantEdgeVectorStore)
    store.ensure_collection(C, DIM)
    store.upsert(C, _points(5))
    assert build_due_indexes(store) == [C]
    store.close()
    server = create_vector_store(Settings(vector_backend=VectorBackend.QDRANT, qdrant_url=":memory:"))
    server.ensure_collection(C, DIM)
    server.upsert(C, _points(5))
    assert build_due_indexes(server) == []  # a server indexes by itself
    server.close()


def test_ingest_builds_the_due_indexes(make_settings: SettingsFactory) -> None:
    settings = make_settings(embedder="hashing", vector_index_threshold=1)
    with Knotwork(settings) as kw:
        store = unwrap(kw.runtime.vectors)
        assert isinstance(store, QdrantEdgeVectorStore)
        report = kw.ingest_documents([RawDocument(
            source_system=SourceSystem.FILE, source_id="notes.md", title="Notes",
            content="Maria Lopez leads Project Atlas. Project Atlas uses the Billing Service.")])
        assert report.chunks >= 1
        assert store.count(Collection.CHUNKS, settings.group) >= 1  # points were written...
        assert store.index_due() == []  # ...and their build ran at the end of the ingest call
        kw.runtime.graph.delete_group(settings.group)
