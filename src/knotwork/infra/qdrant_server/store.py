"""VectorStore over ``qdrant_client.QdrantClient`` (a Qdrant server, or ``":memory:"``).

Collections are named ``<prefix><collection>`` with one unnamed dense vector (cosine) and the
HNSW / payload-index layout of design doc 003 (``vector_factory.COLLECTION_SPECS``). Every
point's payload is its own payload plus ``group_id`` (keyword index, ``is_tenant``);
``VectorHit.payload`` is returned without ``group_id``. ``qdrant_client`` is imported lazily.

In local mode (``":memory:"`` or a ``path``) payload indexes are no-ops (the client's warning
is silenced here) and the client is not thread-safe, so every call is serialised by a lock.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from knotwork.domain.ports import Collection, VectorHit, VectorPoint
from knotwork.infra.vector_factory import (
    COLLECTION_SPECS,
    GROUP_KEY,
    PayloadKind,
    check_dimension,
    check_new_dimension,
    clamp_score,
    dense_vector,
    normalize_point_id,
    returned_payload,
    stored_payload,
)

if TYPE_CHECKING:
    from qdrant_client import QdrantClient
    from qdrant_client.http import models as qm

_UPSERT_BATCH = 512


def _models() -> Any:
    from qdrant_client.http import models

    return models


def _group_filter(group_id: str, filters: dict[str, str] | None = None) -> qm.Filter:
    m = _models()
    must = [m.FieldCondition(key=GROUP_KEY, match=m.MatchValue(value=group_id))]
    must.extend(
        m.FieldCondition(key=key, match=m.MatchValue(value=value))
        for key, value in (filters or {}).items()
    )
    result: qm.Filter = m.Filter(must=must)
    return result


def _index_schema(kind: PayloadKind | None) -> Any:
    m = _models()
    if kind is None:  # the tenant key
        return m.KeywordIndexParams(type=m.KeywordIndexType.KEYWORD, is_tenant=True)
    return {
        "keyword": m.PayloadSchemaType.KEYWORD,
        "integer": m.PayloadSchemaType.INTEGER,
        "float": m.PayloadSchemaType.FLOAT,
    }[kind]


class QdrantServerVectorStore:
    """VectorStore over a ``QdrantClient``; the store owns the client and closes it."""

    def __init__(self, client: QdrantClient, *, collection_prefix: str = "", shards: int = 1,
                 replicas: int = 1) -> None:
        self._client = client
        self._prefix = collection_prefix
        self._shards, self._replicas = shards, replicas
        self._dimensions: dict[Collection, int] = {}
        self._lock = threading.RLock()
        options = getattr(client, "init_options", {}) or {}
        local = options.get("location") == ":memory:" or options.get("path") is not None
        self._calls: AbstractContextManager[object] = self._lock if local else nullcontext()

    @classmethod
    def from_url(
        cls,
        url: str,
        api_key: str | None = None,
        *,
        collection_prefix: str = "",
        timeout: int | None = None,
        shards: int = 1,
        replicas: int = 1,
    ) -> QdrantServerVectorStore:
        """``url`` is a server URL (``http://host:6333``) or ``":memory:"``."""
        from qdrant_client import QdrantClient

        if url == ":memory:":
            client = QdrantClient(location=":memory:")
        else:
            client = QdrantClient(url=url, api_key=api_key, timeout=timeout)
        return cls(client, collection_prefix=collection_prefix, shards=shards, replicas=replicas)

    @property
    def client(self) -> QdrantClient:
        return self._client

    def _name(self, collection: Collection) -> str:
        return f"{self._prefix}{Collection(collection).value}"

    # ----------------------------------------------------------------------- collections

    def _dimension(self, collection: Collection) -> int | None:
        """Vector size of an existing collection (cached), or None if it does not exist."""
        collection = Collection(collection)
        cached = self._dimensions.get(collection)
        if cached is not None:
            return cached
        name = self._name(collection)
        with self._calls:
            if not self._client.collection_exists(name):
                return None
            vectors = self._client.get_collection(name).config.params.vectors
        params = vectors.get("") if isinstance(vectors, dict) else vectors
        if params is None:
            raise RuntimeError(f"collection {name!r} has no unnamed dense vector")
        self._dimensions[collection] = int(params.size)
        return self._dimensions[collection]

    def _require(self, collection: Collection) -> int:
        dimension = self._dimension(collection)
        if dimension is None:
            raise ValueError(
                f"collection {self._name(collection)!r} does not exist; call ensure_collection first"
            )
        return dimension

    def ensure_collection(self, collection: Collection, dimension: int) -> None:
        collection = Collection(collection)
        check_new_dimension(dimension)
        m = _models()
        with self._lock:
            existing = self._dimension(collection)
            if existing is None:
                spec = COLLECTION_SPECS[collection]
                try:
                    self._client.create_collection(
                        self._name(collection),
                        vectors_config=m.VectorParams(size=dimension, distance=m.Distance.COSINE),
                        hnsw_config=m.HnswConfigDiff(
                            m=spec.hnsw_m, ef_construct=spec.hnsw_ef_construct
                        ),
                        shard_number=self._shards,
                        replication_factor=self._replicas,
                    )
                except Exception:
                    # Lost a creation race with another process? Then it exists now.
                    if not self._client.collection_exists(self._name(collection)):
                        raise
                existing = self._dimension(collection)
            if existing != dimension:
                raise ValueError(
                    f"collection {self._name(collection)!r} exists with dimension {existing}, "
                    f"not {dimension}"
                )
            self._ensure_indexes(collection)

    def _ensure_indexes(self, collection: Collection) -> None:
        name = self._name(collection)
        with self._calls:
            present = set(self._client.get_collection(name).payload_schema or {})
        wanted: list[tuple[str, PayloadKind | None]] = [(GROUP_KEY, None)]
        wanted.extend(COLLECTION_SPECS[collection].payload_indexes)
        with self._calls, warnings.catch_warnings():
            warnings.filterwarnings(
                "ignore", message="Payload indexes have no effect", category=UserWarning
            )
            for field, kind in wanted:
                if field not in present:
                    self._client.create_payload_index(
                        name, field_name=field, field_schema=_index_schema(kind), wait=True
                    )

    def close(self) -> None:
        with self._calls:
            self._client.close()

    # ----------------------------------------------------------------------- writes

    def upsert(self, collection: Collection, points: Sequence[VectorPoint]) -> None:
        if not points:
            return
        collection = Collection(collection)
        dimension = self._require(collection)
        m = _models()
        structs: list[qm.PointStruct] = []
        for point in points:  # validate everything before writing anything
            point_id = normalize_point_id(point.id)
            check_dimension(collection, dimension, point.vector, f"point {point_id}")
            structs.append(
                m.PointStruct(
                    id=point_id,
                    vector=[float(x) for x in point.vector],
                    payload=stored_payload(point),
                )
            )
        for start in range(0, len(structs), _UPSERT_BATCH):
            with self._calls:
                self._client.upsert(
                    self._name(collection), points=structs[start : start + _UPSERT_BATCH], wait=True
                )

    def delete(self, collection: Collection, ids: Sequence[str]) -> None:
        if not ids or self._dimension(collection) is None:
            return
        m = _models()
        point_ids: list[int | str] = [normalize_point_id(i) for i in ids]
        with self._calls:
            self._client.delete(
                self._name(collection), points_selector=m.PointIdsList(points=point_ids), wait=True
            )

    def delete_group(self, collection: Collection, group_id: str) -> None:
        if self._dimension(collection) is None:
            return
        m = _models()
        with self._calls:
            self._client.delete(
                self._name(collection),
                points_selector=m.FilterSelector(filter=_group_filter(group_id)),
                wait=True,
            )

    # ----------------------------------------------------------------------- reads

    def search(
        self,
        collection: Collection,
        vector: Sequence[float],
        *,
        group_id: str,
        limit: int = 10,
        filters: dict[str, str] | None = None,
        min_score: float | None = None,
    ) -> list[VectorHit]:
        collection = Collection(collection)
        dimension = self._dimension(collection)
        if dimension is None or limit <= 0:
            return []
        check_dimension(collection, dimension, vector, "query vector")
        with self._calls:
            response = self._client.query_points(
                self._name(collection),
                query=[float(x) for x in vector],
                query_filter=_group_filter(group_id, filters),
                limit=limit,
                with_payload=True,
                with_vectors=False,
                score_threshold=min_score,
            )
        return [
            VectorHit(
                id=str(hit.id), score=clamp_score(hit.score), payload=returned_payload(hit.payload)
            )
            for hit in response.points
        ]

    def scan(self, collection: Collection, group_id: str, batch: int = 256, *,
             with_vectors: bool = True) -> Iterator[VectorPoint]:
        if self._dimension(collection) is None:
            return
        offset: Any = None
        while True:
            with self._calls:
                records, offset = self._client.scroll(
                    self._name(collection), scroll_filter=_group_filter(group_id), limit=batch,
                    offset=offset, with_payload=True, with_vectors=with_vectors)
            for record in records:
                yield VectorPoint(id=str(record.id), vector=dense_vector(record.vector),
                                  group_id=group_id, payload=returned_payload(record.payload))
            if offset is None or not records:
                return

    def vectors_of(self, collection: Collection, group_id: str, ids: Sequence[str]
                   ) -> dict[str, list[float]]:
        """The stored vectors of these point ids within one tenant (missing ids left out)."""
        if not ids or self._dimension(collection) is None:
            return {}
        wanted = {normalize_point_id(i): i for i in ids}
        with self._calls:
            records = self._client.retrieve(self._name(collection), ids=list(wanted),
                                            with_payload=True, with_vectors=True)
        out: dict[str, list[float]] = {}
        for record in records:
            if (record.payload or {}).get(GROUP_KEY) != group_id:
                continue
            vector = dense_vector(record.vector)
            if vector:
                out[wanted.get(str(record.id), str(record.id))] = vector
        return out

    def count(self, collection: Collection, group_id: str) -> int:
        if self._dimension(collection) is None:
            return 0
        with self._calls:
            result = self._client.count(
                self._name(collection), count_filter=_group_filter(group_id), exact=True
            )
        return int(result.count)
