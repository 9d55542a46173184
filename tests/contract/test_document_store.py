"""Contract suite of the DocumentStore port, run against SQLite and PostgreSQL.

PostgreSQL: each test gets its own database ``knotwork_test_<random>`` created
through ``KNOTWORK_TEST_POSTGRES_URL`` (default: local ``test`` database, trust
auth) and dropped afterwards. Skipped when the server is unreachable.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from knotwork.domain.models import (
    AuditEvent,
    Chunk,
    Document,
    DocumentCounts,
    EntityMention,
    ProcessingStatus,
    SourceSystem,
)
from knotwork.domain.ports import DocumentStore
from knotwork.infra.sql.store import SqlDocumentStore
from tests.support.postgres import create_pg_database, drop_pg_database


@pytest.fixture(
    params=["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)],
)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database of each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store' / 'knotwork.db'}"
        return
    url = create_pg_database()
    try:
        yield url
    finally:
        drop_pg_database(url)


@pytest.fixture
def store(database_url: str) -> Iterator[SqlDocumentStore]:
    s = SqlDocumentStore(database_url)
    s.migrate()
    try:
        yield s
    finally:
        s.close()


# --------------------------------------------------------------------------- builders


def _id() -> str:
    return str(uuid.uuid4())


def make_document(group: str = "g1", **overrides: object) -> Document:
    values: dict[str, object] = {
        "id": _id(),
        "group_id": group,
        "source_system": SourceSystem.CONFLUENCE,
        "source_id": f"page-{secrets.token_hex(4)}",
        "title": "Quarterly plan — Zürich ✓",
        "url": "https://wiki.example.com/pages/1",
        "author": "Ada Lovelace",
        "created_at": datetime(2024, 3, 1, 9, 30, 15, 123456, tzinfo=UTC),
        # +02:00 on purpose: must come back as the same instant, in UTC
        "modified_at": datetime(2024, 3, 2, 12, 0, 0, tzinfo=timezone(timedelta(hours=2))),
        "mime_type": "text/html",
        "content_hash": "a" * 64,
        "processing_status": ProcessingStatus.PENDING,
        "chunk_count": 2,
        "entity_count": 0,
        "last_processed_at": None,
        "metadata": {"space": "ENG", "labels": "plan,q3", "ünïcode": "✓"},
    }
    values.update(overrides)
    return Document.model_validate(values)


def make_chunks(document: Document, n: int = 2) -> list[Chunk]:
    return [
        Chunk(
            id=_id(),
            document_id=document.id,
            group_id=document.group_id,
            index=i,
            content=f"chunk {i} of {document.title}",
            start_offset=i * 100,
            end_offset=i * 100 + 99,
            token_count=20 + i,
        )
        for i in range(n)
    ]


def make_mention(chunk: Chunk, entity_id: str = "ent-1", **overrides: object) -> EntityMention:
    values: dict[str, object] = {
        "id": _id(),
        "group_id": chunk.group_id,
        "chunk_id": chunk.id,
        "entity_id": entity_id,
        "span_start": 3,
        "span_end": 8,
        "text": "Alice",
        "extractor": "spacy",
        "confidence": 0.875,
    }
    values.update(overrides)
    return EntityMention.model_validate(values)


def _is_utc(value: datetime | None) -> bool:
    return value is not None and value.tzinfo is not None and value.utcoffset() == timedelta(0)


def _raw_count(store: SqlDocumentStore, sql: str, **params: object) -> int:
    engine = create_engine(store.url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text(sql), params).scalar_one())
    finally:
        engine.dispose()


# --------------------------------------------------------------------------- tests


def test_implements_port(store: SqlDocumentStore) -> None:
    assert isinstance(store, DocumentStore)


def test_migrate_is_idempotent(store: SqlDocumentStore) -> None:
    store.migrate()
    store.migrate()
    assert _raw_count(store, "SELECT COUNT(*) FROM alembic_version") == 1
    assert store.counts("g1") == DocumentCounts(documents=0, chunks=0, mentions=0)


def test_save_get_round_trip_of_all_fields(store: SqlDocumentStore) -> None:
    doc = make_document(
        processing_status=ProcessingStatus.COMPLETED,
        entity_count=7,
        last_processed_at=datetime(2024, 3, 3, 1, 2, 3, tzinfo=UTC),
    )
    chunks = make_chunks(doc, 3)
    store.save_document(doc, chunks)

    [got] = store.get_documents([doc.id])
    assert got == doc  # pydantic equality: every field, datetimes as instants
    for value in (got.created_at, got.modified_at, got.last_processed_at):
        assert _is_utc(value)
    assert got.modified_at == datetime(2024, 3, 2, 10, 0, 0, tzinfo=UTC)
    assert got.created_at is not None and got.created_at.microsecond == 123456
    assert got.metadata == {"space": "ENG", "labels": "plan,q3", "ünïcode": "✓"}
    assert got.source_system is SourceSystem.CONFLUENCE
    assert got.processing_status is ProcessingStatus.COMPLETED

    by_id = {c.id: c for c in store.get_chunks([c.id for c in chunks])}
    assert by_id == {c.id: c for c in chunks}


def test_optional_fields_may_be_empty(store: SqlDocumentStore) -> None:
    doc = make_document(
        url=None, author=None, created_at=None, modified_at=None, metadata={}, chunk_count=0
    )
    store.save_document(doc, [])
    assert store.get_documents([doc.id]) == [doc]
    assert store.counts("g1").chunks == 0


def test_get_returns_only_existing_ids(store: SqlDocumentStore) -> None:
    doc = make_document()
    chunks = make_chunks(doc)
    store.save_document(doc, chunks)
    assert store.get_documents([]) == []
    assert [d.id for d in store.get_documents(["missing", doc.id, doc.id])] == [doc.id]
    assert store.get_chunks(["missing"]) == []
    assert {c.id for c in store.get_chunks([chunks[1].id, "nope"])} == {chunks[1].id}


def test_many_ids_are_fetched(store: SqlDocumentStore) -> None:
    doc = make_document(chunk_count=1200)
    chunks = make_chunks(doc, 1200)
    store.save_document(doc, chunks)
    got = store.get_chunks([c.id for c in chunks])
    assert {c.id for c in got} == {c.id for c in chunks}


def test_save_updates_document_in_place(store: SqlDocumentStore) -> None:
    doc = make_document()
    store.save_document(doc, make_chunks(doc))
    changed = doc.model_copy(
        update={"title": "v2", "content_hash": "b" * 64, "metadata": {"v": "2"}, "url": None}
    )
    store.save_document(changed, make_chunks(changed, 1))
    assert store.get_documents([doc.id]) == [changed]
    assert [d.id for d in store.list_documents("g1")] == [doc.id]
    assert store.counts("g1") == DocumentCounts(documents=1, chunks=1, mentions=0)


def test_replacing_chunks_removes_old_ones_and_their_mentions(store: SqlDocumentStore) -> None:
    doc = make_document()
    old = make_chunks(doc, 3)
    store.save_document(doc, old)
    store.add_mentions([make_mention(c) for c in old] + [make_mention(old[0], "ent-2")])
    assert store.counts("g1") == DocumentCounts(documents=1, chunks=3, mentions=4)

    new = make_chunks(doc, 2)
    store.save_document(doc, new)

    assert store.get_chunks([c.id for c in old]) == []
    assert {c.id for c in store.get_chunks([c.id for c in new])} == {c.id for c in new}
    assert store.counts("g1") == DocumentCounts(documents=1, chunks=2, mentions=0)
    assert _raw_count(store, "SELECT COUNT(*) FROM entity_mentions") == 0


def test_resaving_same_chunk_ids_is_allowed(store: SqlDocumentStore) -> None:
    doc = make_document()
    chunks = make_chunks(doc)
    store.save_document(doc, chunks)
    store.save_document(doc, chunks)  # deterministic ids: re-ingest must not collide
    assert store.counts("g1").chunks == 2


def test_chunks_must_belong_to_the_document(store: SqlDocumentStore) -> None:
    doc, other = make_document(), make_document()
    with pytest.raises(ValueError):
        store.save_document(doc, make_chunks(other))
    assert store.get_documents([doc.id]) == []


def test_document_id_cannot_move_to_another_group(store: SqlDocumentStore) -> None:
    doc = make_document("owner")
    store.save_document(doc, make_chunks(doc))
    thief = doc.model_copy(update={"group_id": "thief", "title": "stolen"})
    with pytest.raises(ValueError):
        store.save_document(thief, [])
    assert store.get_documents([doc.id]) == [doc]
    assert store.counts("owner").chunks == 2
    assert store.list_documents("thief") == []


def test_get_document_by_source(store: SqlDocumentStore) -> None:
    doc = make_document(source_system=SourceSystem.SLACK, source_id="C123/1700000000.0001")
    store.save_document(doc, [])
    assert store.get_document_by_source("g1", "slack", "C123/1700000000.0001") == doc
    assert store.get_document_by_source("g1", SourceSystem.SLACK, doc.source_id) == doc
    assert store.get_document_by_source("g1", "confluence", doc.source_id) is None
    assert store.get_document_by_source("g2", "slack", doc.source_id) is None
    assert store.get_document_by_source("g1", "slack", "other") is None


def test_source_is_unique_within_a_group(store: SqlDocumentStore) -> None:
    doc = make_document(source_id="same")
    store.save_document(doc, [])
    with pytest.raises(Exception):  # noqa: B017 - backend-specific integrity error
        store.save_document(make_document(source_id="same"), [])
    assert [d.id for d in store.list_documents("g1")] == [doc.id]


def test_a_batch_is_completed_whole_or_not_at_all(store: SqlDocumentStore) -> None:
    first, second = make_document(source_id="a"), make_document(source_id="b")
    for doc in (first, second):
        store.save_document(doc.model_copy(update={
            "processing_status": ProcessingStatus.PROCESSING}), [])
    with pytest.raises(KeyError):  # one unknown id: no document of the batch is COMPLETED
        store.complete_documents({first.id: 3, "missing": 1, second.id: 4})
    assert {d.processing_status for d in store.list_documents("g1")} == {ProcessingStatus.PROCESSING}
    store.complete_documents({first.id: 3, second.id: 4})
    got = {d.id: d for d in store.list_documents("g1")}
    assert [(got[d.id].processing_status, got[d.id].entity_count) for d in (first, second)] == [
        (ProcessingStatus.COMPLETED, 3), (ProcessingStatus.COMPLETED, 4)]
    assert got[first.id].last_processed_at is not None


def test_set_status_and_entity_count(store: SqlDocumentStore) -> None:
    doc = make_document()
    store.save_document(doc, [])
    before = datetime.now(UTC) - timedelta(seconds=2)

    store.set_status(doc.id, ProcessingStatus.PROCESSING)
    [got] = store.get_documents([doc.id])
    assert got.processing_status is ProcessingStatus.PROCESSING
    assert got.entity_count == 0

    store.set_status(doc.id, ProcessingStatus.COMPLETED, entity_count=42)
    [got] = store.get_documents([doc.id])
    assert got.processing_status is ProcessingStatus.COMPLETED
    assert got.entity_count == 42
    assert _is_utc(got.last_processed_at)
    assert got.last_processed_at is not None and got.last_processed_at >= before

    store.set_status(doc.id, ProcessingStatus.FAILED)
    [got] = store.get_documents([doc.id])
    assert got.processing_status is ProcessingStatus.FAILED
    assert got.entity_count == 42  # unchanged without entity_count
    assert got.title == doc.title and got.metadata == doc.metadata


def test_set_status_of_unknown_document_raises(store: SqlDocumentStore) -> None:
    with pytest.raises(KeyError):
        store.set_status("missing", ProcessingStatus.COMPLETED)


def test_add_mentions_is_idempotent(store: SqlDocumentStore) -> None:
    doc = make_document()
    chunks = make_chunks(doc)
    store.save_document(doc, chunks)
    mentions = [make_mention(chunks[0]), make_mention(chunks[1], "ent-2")]
    store.add_mentions(mentions)
    store.add_mentions(mentions)
    store.add_mentions([mentions[0], mentions[0]])
    store.add_mentions([])
    assert store.counts("g1").mentions == 2
    row = _raw_count(
        store,
        "SELECT COUNT(*) FROM entity_mentions WHERE id = :id AND entity_id = :e "
        "AND span_start = 3 AND span_end = 8 AND text = 'Alice' AND extractor = 'spacy'",
        id=mentions[1].id,
        e="ent-2",
    )
    assert row == 1


def test_counts_per_group(store: SqlDocumentStore) -> None:
    for group, n_docs in (("g1", 2), ("g2", 1)):
        for _ in range(n_docs):
            doc = make_document(group)
            chunks = make_chunks(doc, 3)
            store.save_document(doc, chunks)
            store.add_mentions([make_mention(chunks[0])])
    assert store.counts("g1") == DocumentCounts(documents=2, chunks=6, mentions=2)
    assert store.counts("g2") == DocumentCounts(documents=1, chunks=3, mentions=1)
    assert store.counts("nobody") == DocumentCounts(documents=0, chunks=0, mentions=0)


def test_tenant_isolation(store: SqlDocumentStore) -> None:
    a = make_document("tenant-a", source_id="shared-page")
    b = make_document("tenant-b", source_id="shared-page")
    store.save_document(a, make_chunks(a))
    store.save_document(b, make_chunks(b))
    assert [d.id for d in store.list_documents("tenant-a")] == [a.id]
    assert [d.id for d in store.list_documents("tenant-b")] == [b.id]
    assert store.get_document_by_source("tenant-a", "confluence", "shared-page") == a
    assert store.get_document_by_source("tenant-b", "confluence", "shared-page") == b
    assert store.list_documents("tenant-c") == []


def test_delete_group_removes_every_row_of_that_group_only(store: SqlDocumentStore) -> None:
    kept = make_document("keep")
    kept_chunks = make_chunks(kept)
    store.save_document(kept, kept_chunks)
    store.add_mentions([make_mention(kept_chunks[0])])
    store.record_audit(AuditEvent(group_id="keep", action="ingest", entity_id=kept.id))

    gone = make_document("gone")
    gone_chunks = make_chunks(gone)
    store.save_document(gone, gone_chunks)
    store.add_mentions([make_mention(c) for c in gone_chunks])
    store.record_audit(AuditEvent(group_id="gone", action="ingest", entity_id=gone.id))
    engine = create_engine(store.url)
    try:
        with engine.begin() as conn:
            for group in ("gone", "keep"):
                conn.execute(
                    text(
                        "INSERT INTO sync_state (group_id, source, cursor, updated_at) "
                        "VALUES (:g, :s, :c, :t)"
                    ),
                    {"g": group, "s": "confluence:ENG", "c": "2024-01-01", "t": datetime.now(UTC)},
                )
    finally:
        engine.dispose()

    store.delete_group("gone")

    assert store.counts("gone") == DocumentCounts(documents=0, chunks=0, mentions=0)
    assert store.list_documents("gone") == []
    assert store.get_chunks([c.id for c in gone_chunks]) == []
    for table in ("documents", "chunks", "entity_mentions", "audit_log", "sync_state"):
        sql = f"SELECT COUNT(*) FROM {table} WHERE group_id = :g"
        assert _raw_count(store, sql, g="gone") == 0, table
        assert _raw_count(store, sql, g="keep") >= 1, table
    assert store.counts("keep") == DocumentCounts(documents=1, chunks=2, mentions=1)
    store.delete_group("gone")  # deleting an empty group is fine


def test_audit_is_recorded(store: SqlDocumentStore) -> None:
    store.record_audit(AuditEvent(group_id="g1", action="document.ingested", entity_id="d-1"))
    store.record_audit(AuditEvent(group_id="g1", action="group.reset", detail="by admin ✓"))
    store.record_audit(AuditEvent(group_id="g2", action="other"))

    events = store.list_audit("g1")
    assert {(e.action, e.entity_id, e.detail) for e in events} == {
        ("document.ingested", "d-1", ""),
        ("group.reset", None, "by admin ✓"),
    }
    assert events[0].action == "group.reset"  # newest first
    assert _raw_count(store, "SELECT COUNT(*) FROM audit_log") == 3
    assert (
        _raw_count(
            store,
            "SELECT COUNT(*) FROM audit_log WHERE group_id = :g AND created_at IS NOT NULL",
            g="g1",
        )
        == 2
    )


def test_usable_from_worker_threads(store: SqlDocumentStore) -> None:
    docs = [make_document() for _ in range(8)]

    def work(doc: Document) -> str:
        store.save_document(doc, make_chunks(doc))
        [got] = store.get_documents([doc.id])
        return got.id

    with ThreadPoolExecutor(max_workers=4) as pool:
        ids = list(pool.map(work, docs))
    assert ids == [d.id for d in docs]
    assert store.counts("g1") == DocumentCounts(documents=8, chunks=16, mentions=0)


def test_chunks_mentioning_ranks_by_mention_count_within_the_group(store: SqlDocumentStore) -> None:
    doc = make_document()
    first, second = make_chunks(doc)
    store.save_document(doc, [first, second])
    other = make_document(group="g2")
    (foreign, *_) = make_chunks(other)
    store.save_document(other, [foreign])
    store.add_mentions([
        make_mention(first, "ent-a"),
        make_mention(second, "ent-a"),
        make_mention(second, "ent-b"),
        make_mention(foreign, "ent-a"),
    ])
    assert store.chunks_mentioning("g1", ["ent-a", "ent-b"]) == [second.id, first.id]
    assert store.chunks_mentioning("g1", ["ent-b"]) == [second.id]
    assert store.chunks_mentioning("g1", ["ent-a"], limit=1) in ([first.id], [second.id])
    assert store.chunks_mentioning("g1", []) == []
    assert store.chunks_mentioning("g2", ["ent-a"]) == [foreign.id]


def test_delete_documents_cascades_to_chunks_and_mentions(store: SqlDocumentStore) -> None:
    gone, kept = make_document(), make_document()
    gone_chunks, kept_chunks = make_chunks(gone, 3), make_chunks(kept, 2)
    store.save_document(gone, gone_chunks)
    store.save_document(kept, kept_chunks)
    store.add_mentions([make_mention(c) for c in gone_chunks + kept_chunks])
    foreign = make_document("g2")
    store.save_document(foreign, make_chunks(foreign))

    assert store.delete_documents("g1", [gone.id, "missing", gone.id]) == 1
    assert store.delete_documents("g1", [foreign.id]) == 0  # another tenant's id: untouched
    assert store.delete_documents("g1", []) == 0

    assert store.get_documents([gone.id]) == []
    assert store.get_chunks([c.id for c in gone_chunks]) == []
    assert store.counts("g1") == DocumentCounts(documents=1, chunks=2, mentions=2)
    assert store.counts("g2").documents == 1
    assert _raw_count(store, "SELECT COUNT(*) FROM entity_mentions") == 2


def test_sync_cursor_round_trip_per_group_and_source(store: SqlDocumentStore) -> None:
    assert store.get_sync_cursor("g1", "confluence:ENG") is None
    store.set_sync_cursor("g1", "confluence:ENG", '{"space_id": "1"}')
    store.set_sync_cursor("g1", "slack:T1", "1700000000.000100")
    store.set_sync_cursor("g2", "confluence:ENG", "other tenant ✓")
    assert store.get_sync_cursor("g1", "confluence:ENG") == '{"space_id": "1"}'

    store.set_sync_cursor("g1", "confluence:ENG", "x" * 10_000)  # replaces, long values fit
    assert store.get_sync_cursor("g1", "confluence:ENG") == "x" * 10_000
    assert store.get_sync_cursor("g1", "slack:T1") == "1700000000.000100"
    assert store.get_sync_cursor("g2", "confluence:ENG") == "other tenant ✓"
    assert _raw_count(store, "SELECT COUNT(*) FROM sync_state") == 3

    store.delete_group("g1")
    assert store.get_sync_cursor("g1", "slack:T1") is None
    assert store.get_sync_cursor("g2", "confluence:ENG") == "other tenant ✓"
