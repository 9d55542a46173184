"""VectorStore over the in-process Qdrant engine ``qdrant_edge`` (qdrant-edge-py).

Layout: one ``EdgeShard`` per collection in ``<path>/<collection>`` with one unnamed dense
vector (cosine). Every point's payload is its own payload plus ``group_id`` (keyword tenant
index); ``VectorHit.payload`` is returned without ``group_id`` (see ``vector_factory``).

Durability: the engine writes a WAL on every update, and the adapter flushes segments after
each write call and on :meth:`close`, so another process that loads the same path sees the
data. A shard is locked by the process that has it open (its WAL), so only one process may
use a given ``path`` at a time.

The engine runs no background optimiser: new points live in plain (exact-search) segments
until :meth:`QdrantEdgeVectorStore.optimize` builds HNSW indexes. The store counts the points
written to each collection since its last build (at open: the shard's unindexed vectors);
once ``index_threshold`` are waiting, the collection's build is due and
:meth:`QdrantEdgeVectorStore.build_due_indexes` runs it (the ingestion pipeline calls it after
each ingest call). The build blocks, holding the interpreter (the engine keeps the GIL), so it
runs at the end of a write call, never in a background thread of a serving process.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import qdrant_edge as qe
import structlog

from knotwork.domain.errors import StoreBusy
from knotwork.domain.ports import Collection, VectorHit, VectorPoint
from knotwork.infra.vector_factory import (
    COLLECTION_SPECS,
    FULL_SCAN_THRESHOLD,
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

log = structlog.get_logger(__name__)

_CONFIG_FILE = "edge_config.json"  # written by qdrant_edge itself at create time
_UPSERT_BATCH = 1024
_FLUSH_EVERY_S = 5.0  # see _Shard.settle
INDEX_THRESHOLD = 20_000  # unindexed points in a collection that make its HNSW build due


@dataclass(slots=True)
class _Shard:
    shard: qe.EdgeShard
    dimension: int
    flushed_at: float = 0.0
    unindexed: int = 0  # points written since the last HNSW build (an upper bound)

    def settle(self) -> None:
        """Flush segments at most every ``_FLUSH_EVERY_S``: updates are durable in the shard's
        WAL as soon as they return (replayed after a crash, tested), so a flush per write
        only costs time (~0.15 s each)."""
        now = time.monotonic()
        if now - self.flushed_at >= _FLUSH_EVERY_S:
            self.shard.flush()
            self.flushed_at = now


def _index_schema(kind: PayloadKind | None) -> qe.PayloadSchemaType | qe.KeywordIndexParams:
    if kind is None:  # the tenant key
        return qe.KeywordIndexParams(is_tenant=True)
    if kind == "keyword":
        return qe.PayloadSchemaType.Keyword
    if kind == "integer":
        return qe.PayloadSchemaType.Integer
    return qe.PayloadSchemaType.Float


def _match(key: str, value: str) -> qe.FieldCondition:
    return qe.FieldCondition(key, match=qe.MatchValue(value))


def _group_filter(group_id: str, filters: dict[str, str] | None = None) -> qe.Filter:
    must: list[qe.ConditionType] = [_match(GROUP_KEY, group_id)]
    must.extend(_match(key, value) for key, value in (filters or {}).items())
    return qe.Filter(must=must)


def _read_dimension(directory: Path) -> int:
    """Dimension of an existing shard, from the config the engine persisted."""
    try:
        config = json.loads((directory / _CONFIG_FILE).read_text(encoding="utf-8"))
        return int(config["vectors"][""]["size"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RuntimeError(f"cannot read the vector dimension of shard {directory}: {exc}") from exc


class QdrantEdgeVectorStore:
    """Embedded Qdrant: ``path`` holds one shard directory per collection.

    ``index_threshold``: unindexed points that make a collection's HNSW build due (0: never;
    see :meth:`build_due_indexes`).
    """

    def __init__(self, path: Path, *, index_threshold: int = INDEX_THRESHOLD) -> None:
        if index_threshold < 0:
            raise ValueError("index_threshold must be >= 0")
        self._path = Path(path)
        self._index_threshold = index_threshold
        self._shards: dict[Collection, _Shard] = {}
        self._lock = threading.RLock()
        self._closed = False

    @property
    def path(self) -> Path:
        return self._path

    # ----------------------------------------------------------------------- lifecycle

    def _directory(self, collection: Collection) -> Path:
        return self._path / Collection(collection).value

    def _open(self, collection: Collection) -> _Shard | None:
        """The open shard of ``collection``, loading it from disk if it exists."""
        collection = Collection(collection)
        with self._lock:
            if self._closed:
                raise RuntimeError("QdrantEdgeVectorStore is closed")
            opened = self._shards.get(collection)
            if opened is not None:
                return opened
            directory = self._directory(collection)
            if not (directory / _CONFIG_FILE).is_file():
                return None
            dimension = _read_dimension(directory)
            try:
                shard = qe.EdgeShard.load(str(directory))
            except Exception as exc:  # the engine raises bare Exception
                raise StoreBusy(
                    f"cannot open qdrant-edge shard {directory} (is another process using it?): "
                    f"{exc}"
                ) from exc
            info = shard.info()
            opened = _Shard(shard, dimension,
                            unindexed=max(0, info.points_count - info.indexed_vectors_count))
            self._ensure_indexes(collection, shard)
            self._shards[collection] = opened
            return opened

    def _require(self, collection: Collection) -> _Shard:
        opened = self._open(collection)
        if opened is None:
            raise ValueError(
                f"collection {Collection(collection).value!r} does not exist; "
                "call ensure_collection first"
            )
        return opened

    @staticmethod
    def _ensure_indexes(collection: Collection, shard: qe.EdgeShard) -> None:
        existing = set(shard.info().payload_schema)
        wanted: list[tuple[str, PayloadKind | None]] = [(GROUP_KEY, None)]
        wanted.extend(COLLECTION_SPECS[collection].payload_indexes)
        for field, kind in wanted:
            if field not in existing:
                shard.update(qe.UpdateOperation.create_field_index(field, _index_schema(kind)))

    def ensure_collection(self, collection: Collection, dimension: int) -> None:
        collection = Collection(collection)
        check_new_dimension(dimension)
        with self._lock:
            opened = self._open(collection)
            if opened is not None:
                if opened.dimension != dimension:
                    raise ValueError(
                        f"collection {collection.value!r} exists with dimension "
                        f"{opened.dimension}, not {dimension}"
                    )
                return
            spec = COLLECTION_SPECS[collection]
            config = qe.EdgeConfig(
                vectors=qe.EdgeVectorParams(size=dimension, distance=qe.Distance.Cosine),
                hnsw_config=qe.HnswIndexConfig(
                    m=spec.hnsw_m,
                    ef_construct=spec.hnsw_ef_construct,
                    full_scan_threshold=FULL_SCAN_THRESHOLD,
                ),
            )
            directory = self._directory(collection)
            directory.mkdir(parents=True, exist_ok=True)
            shard = qe.EdgeShard.create(str(directory), config)
            self._ensure_indexes(collection, shard)
            shard.flush()
            self._shards[collection] = _Shard(shard, dimension)

    def optimize(self, collection: Collection | None = None) -> bool:
        """Build HNSW / merge segments (blocking; minutes for 100k+ points). True if work done."""
        targets = [Collection(collection)] if collection is not None else list(Collection)
        changed = False
        for target in targets:
            opened = self._open(target)
            if opened is not None:
                opened.unindexed = 0  # points written meanwhile count towards the next build
                changed = opened.shard.optimize() or changed
                opened.shard.flush()
        return changed

    def index_due(self) -> list[Collection]:
        """Collections with at least ``index_threshold`` points written since their last HNSW
        build (none when the threshold is 0)."""
        if self._index_threshold <= 0:
            return []
        due = []
        for collection in Collection:
            opened = self._open(collection)
            if opened is not None and opened.unindexed >= self._index_threshold:
                due.append(collection)
        return due

    def build_due_indexes(self) -> list[Collection]:
        """Build the HNSW indexes of the collections :meth:`index_due` names (blocking);
        returns them. Segments below the engine's indexing threshold stay exact-search."""
        due = self.index_due()
        for collection in due:
            started = time.monotonic()
            self.optimize(collection)
            log.info("vectors.index_built", collection=collection.value,
                     seconds=round(time.monotonic() - started, 1))
        return due

    def close(self) -> None:
        """Flush and close every open shard. Idempotent; the store is unusable afterwards."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            shards, self._shards = list(self._shards.values()), {}
        errors: list[Exception] = []
        for opened in shards:
            try:
                opened.shard.flush()
            except Exception as exc:  # noqa: BLE001 - the engine raises bare Exception
                errors.append(exc)
            finally:
                opened.shard.close()
        if errors:
            raise RuntimeError(f"flush failed on close: {errors[0]}") from errors[0]

    # ----------------------------------------------------------------------- writes

    def upsert(self, collection: Collection, points: Sequence[VectorPoint]) -> None:
        if not points:
            return
        opened = self._require(collection)
        batch: list[qe.Point] = []
        for point in points:  # validate everything before writing anything
            point_id = normalize_point_id(point.id)
            check_dimension(
                Collection(collection), opened.dimension, point.vector, f"point {point_id}"
            )
            batch.append(qe.Point(point_id, list(point.vector), stored_payload(point)))
        for start in range(0, len(batch), _UPSERT_BATCH):
            chunk = batch[start : start + _UPSERT_BATCH]
            opened.shard.update(qe.UpdateOperation.upsert_points(chunk))
        opened.unindexed += len(batch)
        opened.settle()

    def delete(self, collection: Collection, ids: Sequence[str]) -> None:
        if not ids:
            return
        opened = self._open(collection)
        if opened is None:
            return
        point_ids: list[qe.PointId] = [normalize_point_id(i) for i in ids]
        opened.shard.update(qe.UpdateOperation.delete_points(point_ids))
        opened.settle()

    def delete_group(self, collection: Collection, group_id: str) -> None:
        opened = self._open(collection)
        if opened is None:
            return
        opened.shard.update(qe.UpdateOperation.delete_points_by_filter(_group_filter(group_id)))
        opened.settle()

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
        opened = self._open(collection)
        if opened is None or limit <= 0:
            return []
        check_dimension(Collection(collection), opened.dimension, vector, "query vector")
        request = qe.QueryRequest(
            limit=limit,
            query=qe.Query.Nearest([float(x) for x in vector]),
            filter=_group_filter(group_id, filters),
            with_payload=True,
            with_vector=False,
            score_threshold=min_score,
        )
        return [
            VectorHit(
                id=str(hit.id),
                score=clamp_score(hit.score),
                payload=returned_payload(hit.payload),
            )
            for hit in opened.shard.query(request)
        ]

    def scan(self, collection: Collection, group_id: str, batch: int = 256, *,
             with_vectors: bool = True) -> Iterator[VectorPoint]:
        opened = self._open(collection)
        if opened is None:
            return
        offset: qe.PointId | None = None
        while True:
            records, offset = opened.shard.scroll(qe.ScrollRequest(
                offset=offset, limit=batch, filter=_group_filter(group_id),
                with_payload=True, with_vector=with_vectors))
            for record in records:
                yield VectorPoint(id=str(record.id), vector=dense_vector(record.vector),
                                  group_id=group_id, payload=returned_payload(record.payload))
            if offset is None or not records:
                return

    def vectors_of(self, collection: Collection, group_id: str, ids: Sequence[str]
                   ) -> dict[str, list[float]]:
        """The stored vectors of these point ids within one tenant (missing ids left out)."""
        opened = self._open(collection)
        if opened is None or not ids:
            return {}
        wanted = {normalize_point_id(i): i for i in ids}
        point_ids: list[qe.PointId] = list(wanted)
        out: dict[str, list[float]] = {}
        for record in opened.shard.retrieve(point_ids, True, True):
            if (record.payload or {}).get(GROUP_KEY) != group_id or not record.vector:
                continue
            out[wanted.get(str(record.id), str(record.id))] = dense_vector(record.vector)
        return out

    def count(self, collection: Collection, group_id: str) -> int:
        opened = self._open(collection)
        if opened is None:
            return 0
        return int(opened.shard.count(qe.CountRequest(exact=True, filter=_group_filter(group_id))))
