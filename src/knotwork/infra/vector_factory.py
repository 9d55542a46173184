"""Explicit vector-store factory, plus the collection layout shared by both Qdrant adapters.

The layout follows design doc 003 ("Vector Database Indexes"): cosine distance everywhere,
HNSW m=16 / ef_construct=200 for entities, chunks and facts, m=12 / ef_construct=100 for
communities, a keyword (tenant) index on ``group_id`` plus the design's metadata fields.

Payload convention of both adapters: the stored payload is the point's payload plus
``group_id``; ``VectorHit.payload`` is returned WITHOUT ``group_id`` (exactly what was put in
``VectorPoint.payload``). A point whose payload carries a different ``group_id`` is rejected.

Nothing here imports an engine; adapters are imported inside the factory branches.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, cast

from knotwork.domain.ports import Collection, PayloadValue, VectorPoint, VectorStore
from knotwork.settings import Settings, VectorBackend

GROUP_KEY = "group_id"
FULL_SCAN_THRESHOLD = 10_000  # KB of vectors below which a segment is searched exactly

PayloadKind = Literal["keyword", "integer", "float"]


@dataclass(frozen=True, slots=True)
class CollectionSpec:
    hnsw_m: int
    hnsw_ef_construct: int
    payload_indexes: tuple[tuple[str, PayloadKind], ...]


COLLECTION_SPECS: Mapping[Collection, CollectionSpec] = {
    Collection.ENTITIES: CollectionSpec(
        16, 200, (("entity_type", "keyword"), ("confidence", "float"), ("entity_id", "keyword"))
    ),
    Collection.CHUNKS: CollectionSpec(
        16, 200, (("document_id", "keyword"), ("source_system", "keyword"))
    ),
    Collection.FACTS: CollectionSpec(16, 200, ()),
    Collection.COMMUNITIES: CollectionSpec(
        12, 100, (("level", "integer"), ("entity_count", "integer"))
    ),
    # read by id only (local search's candidate sentences): no HNSW graph to build (m=0)
    Collection.SENTENCES: CollectionSpec(0, 100, ()),
}


def create_vector_store(settings: Settings) -> VectorStore:
    """Build the configured adapter. Qdrant-edge opens its shards lazily on first use."""
    if settings.vector_backend is VectorBackend.QDRANT_EDGE:
        from knotwork.infra.qdrant_edge.store import QdrantEdgeVectorStore

        return QdrantEdgeVectorStore(settings.data_dir / "qdrant",
                                     index_threshold=settings.vector_index_threshold)
    if settings.vector_backend is VectorBackend.QDRANT:
        from knotwork.infra.qdrant_server.store import QdrantServerVectorStore

        if not settings.qdrant_url:
            raise ValueError(
                "vector_backend=qdrant needs KNOTWORK_QDRANT_URL (a server URL or ':memory:')"
            )
        return QdrantServerVectorStore.from_url(
            settings.qdrant_url,
            settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None,
                                                shards=settings.qdrant_shards,
                                                replicas=settings.qdrant_replicas)
    raise ValueError(f"unknown vector backend: {settings.vector_backend!r}")


def build_due_indexes(store: VectorStore) -> list[Collection]:
    """Build the vector indexes the store says are due (qdrant-edge: HNSW after
    ``vector_index_threshold`` new points; a Qdrant server indexes by itself). Blocking."""
    from knotwork.observability.tracing import unwrap

    build = getattr(unwrap(store), "build_due_indexes", None)
    return list(build()) if callable(build) else []


# --------------------------------------------------------------------------- shared helpers


def normalize_point_id(point_id: str) -> str:
    """Canonical (lower-case, hyphenated) UUID string; ValueError for anything else."""
    try:
        return str(uuid.UUID(str(point_id)))
    except ValueError:
        raise ValueError(f"vector point ids must be UUID strings, got {point_id!r}") from None


def check_dimension(
    collection: Collection, expected: int, vector: Sequence[float], what: str
) -> None:
    if len(vector) != expected:
        raise ValueError(
            f"{what} has dimension {len(vector)} but collection {collection.value!r} "
            f"has dimension {expected}"
        )


def stored_payload(point: VectorPoint) -> dict[str, PayloadValue]:
    """The payload written to Qdrant: the point's payload plus its ``group_id``."""
    own = point.payload.get(GROUP_KEY, point.group_id)
    if own != point.group_id:
        raise ValueError(
            f"point {point.id}: payload group_id {own!r} differs from group_id {point.group_id!r}"
        )
    payload = dict(point.payload)
    payload[GROUP_KEY] = point.group_id
    return payload


def returned_payload(payload: Mapping[str, object] | None) -> dict[str, PayloadValue]:
    """Inverse of :func:`stored_payload` (drops ``group_id``)."""
    if not payload:
        return {}
    return cast(dict[str, PayloadValue], {k: v for k, v in payload.items() if k != GROUP_KEY})


def dense_vector(vector: object) -> list[float]:
    """A stored point's vector as floats (the unnamed one of a named set); empty for none."""
    if isinstance(vector, dict):
        vector = vector.get("")
    return [float(x) for x in vector] if isinstance(vector, list) else []


def clamp_score(score: float) -> float:
    """Cosine scores come back as e.g. 1.0000002 from float32 maths: clamp to [-1, 1]."""
    return max(-1.0, min(1.0, float(score)))


def check_new_dimension(dimension: int) -> None:
    if dimension <= 0:
        raise ValueError(f"vector dimension must be positive, got {dimension}")
