"""The stores of a worker process, and the gate that serialises their writes.

Why a gate: qdrant-edge (the embedded vector store) locks its directory per process, so on
the embedded stack several worker processes cannot all keep the vector store open; and two
processes merging the same fact's evidence at once would lose an episode id. So every
worker does the CPU-heavy part of a batch — chunking, extraction (spaCy + rules) and
chunk-passage embedding — in parallel, then takes the **store-writer lock** (a Redis lease,
``{prefix}lock:writer``) for the short write phase: resolution against the graph, graph,
vector and SQL writes, lineage sweeps and community upkeep. On the embedded stack the
vector store is opened only while the lock is held and closed before it is released
(:class:`LeasedVectors`); with a Qdrant server it stays open. A worker killed holding the
lock loses it when its lease (``queue_lock_ttl_s``) runs out; what it half wrote is redone
idempotently by whoever takes its job over.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Self

import structlog

from knotwork.domain.errors import StoreBusy
from knotwork.domain.ports import Collection, VectorHit, VectorPoint, VectorStore
from knotwork.settings import Settings, VectorBackend

if TYPE_CHECKING:
    import redis

    from knotwork.infra.queue.lock import LeaseLock
    from knotwork.runtime import Runtime

log = structlog.get_logger(__name__)

OPEN_WAIT_S = 60.0  # how long to wait for another process (e.g. ``serve``) to free the shards


class VectorStoreClosedError(RuntimeError):
    """A vector-store call outside the writer lock."""


class LeasedVectors:
    """A VectorStore opened by :meth:`acquire` and closed by :meth:`release` (qdrant-edge),
    or kept open throughout (``persistent``: a Qdrant server)."""

    def __init__(self, settings: Settings, dimension: int) -> None:
        self._settings = settings
        self._dimension = dimension
        self.persistent = settings.vector_backend is not VectorBackend.QDRANT_EDGE
        self._store: VectorStore | None = None
        self.opens = 0

    def acquire(self) -> None:
        if self._store is not None:
            return
        from knotwork.infra.vector_factory import create_vector_store

        deadline = time.monotonic() + OPEN_WAIT_S
        pause = 0.05
        while True:
            store = create_vector_store(self._settings)
            try:
                for collection in Collection:
                    store.ensure_collection(collection, self._dimension)
                for collection in Collection:  # load every shard now: fail here, not mid-write
                    store.count(collection, "")
            except RuntimeError as exc:
                store.close()
                if not isinstance(exc, StoreBusy) or time.monotonic() >= deadline:
                    raise
                log.info("worker.vectors_busy", wait=pause)
                time.sleep(pause)
                pause = min(pause * 2, 2.0)
                continue
            self._store = store
            self.opens += 1
            return

    def release(self) -> None:
        if self._store is not None and not self.persistent:
            store, self._store = self._store, None
            store.close()

    def _open(self) -> VectorStore:
        if self._store is None:
            raise VectorStoreClosedError("the vector store is only open under the writer lock")
        return self._store

    # ------------------------------------------------------------------ VectorStore
    def ensure_collection(self, collection: Collection, dimension: int) -> None:
        self._open().ensure_collection(collection, dimension)

    def upsert(self, collection: Collection, points: Sequence[VectorPoint]) -> None:
        self._open().upsert(collection, points)

    def search(self, collection: Collection, vector: Sequence[float], *, group_id: str,
               limit: int = 10, filters: dict[str, str] | None = None,
               min_score: float | None = None) -> list[VectorHit]:
        return self._open().search(collection, vector, group_id=group_id, limit=limit,
                                   filters=filters, min_score=min_score)

    def delete(self, collection: Collection, ids: Sequence[str]) -> None:
        self._open().delete(collection, ids)

    def delete_group(self, collection: Collection, group_id: str) -> None:
        self._open().delete_group(collection, group_id)

    def count(self, collection: Collection, group_id: str) -> int:
        return self._open().count(collection, group_id)

    def vectors_of(self, collection: Collection, group_id: str, ids: Sequence[str]
                   ) -> dict[str, list[float]]:
        """The stored vectors of these ids (both Qdrant backends have it; ingestion's
        resolution scores mentions against them, so a worker must resolve as inline does)."""
        return self._open().vectors_of(collection, group_id, ids)

    def scan(self, collection: Collection, group_id: str, batch: int = 256, *,
             with_vectors: bool = True) -> Iterator[VectorPoint]:
        return self._open().scan(collection, group_id, batch, with_vectors=with_vectors)

    def close(self) -> None:
        if self._store is not None:
            store, self._store = self._store, None
            store.close()


class CommitGate:
    """The ``commit_guard`` of a worker's pipelines: writer lock + vector lease.

    Sticky: after a commit the worker keeps the lock (and the open vector store) as long as
    no other worker waits for it (``{prefix}lock:writer:waiting``), so a lone worker does not
    reopen qdrant-edge for every batch; it hands over after its current commit, before its
    next extraction (:meth:`yield_if_wanted`) or when idle (:meth:`release`).

    Counts commits in Redis (``{prefix}jobs:commits``) so a worker can tell that another one
    wrote since its own last commit (its cache of known names is then stale).
    """

    def __init__(self, lock: LeaseLock, vectors: LeasedVectors, client: redis.Redis,
                 prefix: str) -> None:
        self._lock = lock
        self._vectors = vectors
        self._client = client
        self._counter = f"{prefix}jobs:commits"
        self._waiting = f"{lock.key}:waiting"
        self._mine: str | None = None
        self.commits = 0
        self.handovers = 0
        self.waited_s = 0.0

    def others_committed(self) -> bool:
        current = self._client.get(self._counter)
        return current is not None and current != self._mine

    def _wanted(self) -> bool:
        return int(self._client.get(self._waiting) or 0) > 0

    def yield_if_wanted(self) -> None:
        """Hand the lock over if another worker waits for it."""
        if self._lock.held and (self._lock.lost or self._wanted()):
            self.release()

    def release(self) -> None:
        """Close the vector lease and free the lock (idle, exiting, or handing over)."""
        if not self._lock.held:
            return
        try:
            self._vectors.release()
        finally:
            self._lock.release()
            self.handovers += 1

    def __call__(self) -> CommitGate:
        return self

    def __enter__(self) -> Self:
        if self._lock.held and self._lock.lost:  # the lease ran out: start over
            self.release()
        if not self._lock.held:
            started = time.monotonic()
            self._client.incr(self._waiting)
            try:
                self._lock.acquire()
            finally:
                self._client.decr(self._waiting)
            self.waited_s += time.monotonic() - started
        try:
            self._vectors.acquire()
        except BaseException:
            self.release()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is not None:
            self.release()
            return
        self._mine = str(self._client.incr(self._counter))
        self.commits += 1
        if self._wanted() or self._lock.lost:
            self.release()


def open_worker_runtime(settings: Settings) -> tuple[Runtime, LeasedVectors]:
    """Graph, SQL and embedder open; vectors leased (see :class:`LeasedVectors`). With the
    query cache on, the graph applies its invalidation triggers as in ``open_runtime``: a
    worker's writes must not leave a server answering from stale cached values."""
    from knotwork.infra.cache.factory import create_cache
    from knotwork.infra.embeddings.factory import create_embedder
    from knotwork.infra.graph_factory import create_graph_store
    from knotwork.infra.sql.store import SqlDocumentStore
    from knotwork.runtime import Runtime

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    embedder = create_embedder(settings)
    documents = SqlDocumentStore(settings.resolved_database_url())
    try:
        documents.migrate()
        graph = create_graph_store(settings)
    except BaseException:
        documents.close()
        raise
    try:
        cache = create_cache(settings, graph)
    except BaseException:
        graph.close()
        documents.close()
        raise
    if cache is not None:
        from knotwork.infra.cache.invalidating import InvalidatingGraphStore

        graph = InvalidatingGraphStore(graph, cache)
    vectors = LeasedVectors(settings, embedder.dimension)
    return Runtime(settings, graph, vectors, documents, embedder, cache=cache), vectors
