"""SQL adapter of :class:`knotwork.domain.ports.DocumentStore` (SQLite and PostgreSQL).

Rows are converted to and from the pydantic domain models here; no ORM object
leaves this module. All SQL is built with the ORM/Core (bound parameters only).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, Table, create_engine, delete, event, func, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import CursorResult, make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from knotwork.domain.models import (
    AuditEvent,
    Chunk,
    Document,
    DocumentCounts,
    EntityMention,
    ProcessingStatus,
)
from knotwork.domain.timeutil import utcnow
from knotwork.infra.sql.models import (
    AuditRow,
    Base,
    ChunkRow,
    DocumentRow,
    EntityMentionRow,
    SyncStateRow,
)

if TYPE_CHECKING:
    from knotwork.domain.backup import TableDump
    from knotwork.infra.sql.api_keys import SqlApiKeyStore

_UpsertInsert = postgresql.Insert | sqlite.Insert

MIGRATIONS_LOCATION = "knotwork.infra.sql:migrations"
_DOCUMENTS = cast(Table, DocumentRow.__table__)
_MIGRATION_LOCK_KEY = 0x6B6E6F74_776F726B  # "knotwork"
_IN_BATCH = 500  # ids per IN (...) list: well under every backend's bind-parameter limit
_FINISHED = frozenset({ProcessingStatus.COMPLETED, ProcessingStatus.FAILED})


# --------------------------------------------------------------------------- engine


def _is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def _is_sqlite_memory(url: str) -> bool:
    database = make_url(url).database
    return database in (None, "", ":memory:") or (database or "").startswith("file::memory:")


def ensure_sqlite_parent_dir(url: str) -> None:
    """Create the directory of a SQLite database file (SQLite won't)."""
    if not _is_sqlite(url) or _is_sqlite_memory(url):
        return
    database = make_url(url).database
    if database and not database.startswith("file:"):
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)


def configure_engine(engine: Engine) -> Engine:
    """SQLite: enforce foreign keys (ON DELETE CASCADE) and real transactions.

    pysqlite neither enables foreign keys nor emits BEGIN before DDL by itself;
    this is the recipe from the SQLAlchemy SQLite dialect documentation.
    """
    if engine.dialect.name != "sqlite":
        return engine

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # let the "begin" hook below emit BEGIN
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=30000")
            # WAL: readers (the API) never block the writer; synchronous=NORMAL syncs at
            # checkpoints, not at every commit (a crash of the process loses nothing)
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN")

    return engine


def make_engine(url: str) -> Engine:
    if _is_sqlite(url):
        ensure_sqlite_parent_dir(url)
        connect_args = {"check_same_thread": False}
        if _is_sqlite_memory(url):
            engine = create_engine(url, connect_args=connect_args, poolclass=StaticPool)
        else:
            engine = create_engine(url, connect_args=connect_args)
        return configure_engine(engine)
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=10)


def alembic_config(url: str) -> Config:
    """An Alembic config that needs no ini file and no particular working directory."""
    cfg = Config()
    cfg.set_main_option("script_location", MIGRATIONS_LOCATION)
    # ConfigParser interpolation: a literal '%' (URL-encoded passwords) must be doubled.
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def _batches(ids: Sequence[str]) -> Iterator[list[str]]:
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), _IN_BATCH):
        yield unique[start : start + _IN_BATCH]


# --------------------------------------------------------------------------- mapping


def _document_values(document: Document) -> dict[str, Any]:
    """Keyed by column name (``metadata`` is ``metadata_`` on the ORM class)."""
    return {
        "id": document.id,
        "group_id": document.group_id,
        "source_system": document.source_system.value,
        "source_id": document.source_id,
        "title": document.title,
        "url": document.url,
        "author": document.author,
        "created_at": document.created_at,
        "modified_at": document.modified_at,
        "mime_type": document.mime_type,
        "content_hash": document.content_hash,
        "processing_status": document.processing_status.value,
        "chunk_count": document.chunk_count,
        "entity_count": document.entity_count,
        "last_processed_at": document.last_processed_at,
        "metadata": dict(document.metadata),
        "acl": sorted(set(document.acl)),
    }


def _to_document(row: DocumentRow) -> Document:
    return Document(
        id=row.id,
        group_id=row.group_id,
        source_system=row.source_system,  # type: ignore[arg-type]  # validated by pydantic
        source_id=row.source_id,
        title=row.title,
        url=row.url,
        author=row.author,
        created_at=row.created_at,
        modified_at=row.modified_at,
        mime_type=row.mime_type,
        content_hash=row.content_hash,
        processing_status=ProcessingStatus(row.processing_status),
        chunk_count=row.chunk_count,
        entity_count=row.entity_count,
        last_processed_at=row.last_processed_at,
        metadata={str(k): str(v) for k, v in (row.metadata_ or {}).items()},
        acl=[str(p) for p in (row.acl or [])],
    )


def _to_chunk(row: ChunkRow) -> Chunk:
    return Chunk(
        id=row.id,
        document_id=row.document_id,
        group_id=row.group_id,
        index=row.chunk_index,
        content=row.content,
        start_offset=row.start_offset,
        end_offset=row.end_offset,
        token_count=row.token_count,
    )


def _mention_values(mention: EntityMention) -> dict[str, Any]:
    return mention.model_dump()


# --------------------------------------------------------------------------- store


class SqlDocumentStore:
    """Documents, chunks, entity mentions, audit log and sync state in one SQL database."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._engine = make_engine(url)
        self._sessions = sessionmaker(self._engine, expire_on_commit=False)
        self._migrate_lock = threading.Lock()

    @property
    def url(self) -> str:
        return self._url

    @property
    def dialect(self) -> str:
        return self._engine.dialect.name

    @contextmanager
    def _session(self) -> Iterator[Session]:
        with self._sessions.begin() as session:
            yield session

    def transaction(self) -> contextlib.AbstractContextManager[Session]:
        """One transaction on this store's database (for sibling SQL modules: resolution)."""
        return self._session()

    # ------------------------------------------------------------------ schema

    def migrate(self) -> None:
        """``alembic upgrade head`` on this store's database (idempotent)."""
        with self._migrate_lock, self._engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                # serialise concurrent migrators (several API workers starting at once)
                connection.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK_KEY}
                )
            cfg = alembic_config(self._url)
            cfg.attributes["connection"] = connection
            command.upgrade(cfg, "head")

    # ------------------------------------------------------------------ documents

    def get_document_by_source(
        self, group_id: str, source_system: str, source_id: str
    ) -> Document | None:
        stmt = select(DocumentRow).where(
            DocumentRow.group_id == group_id,
            DocumentRow.source_system == str(source_system),
            DocumentRow.source_id == source_id,
        )
        with self._session() as session:
            row = session.scalars(stmt).one_or_none()
            return _to_document(row) if row is not None else None

    def save_document(self, document: Document, chunks: Sequence[Chunk]) -> None:
        for chunk in chunks:
            if chunk.document_id != document.id or chunk.group_id != document.group_id:
                raise ValueError(
                    f"chunk {chunk.id} belongs to document {chunk.document_id} "
                    f"(group {chunk.group_id}), not {document.id} ({document.group_id})"
                )
        values = _document_values(document)
        now = utcnow()
        with self._session() as session:
            insert = self._insert()
            stmt = insert(_DOCUMENTS).values(values)
            changed = {key: stmt.excluded[key] for key in values if key != "id"}
            upsert = stmt.on_conflict_do_update(
                index_elements=["id"],
                set_=changed,
                # a document id never moves to another tenant: no row is written or returned
                where=_DOCUMENTS.c.group_id == stmt.excluded["group_id"],
            ).returning(_DOCUMENTS.c.id)
            if session.execute(upsert).scalar_one_or_none() is None:
                raise ValueError(f"document {document.id} belongs to another group")
            # DB-level ON DELETE CASCADE removes the old chunks' mentions.
            session.execute(delete(ChunkRow).where(ChunkRow.document_id == document.id))
            session.add_all(
                ChunkRow(
                    id=chunk.id,
                    document_id=chunk.document_id,
                    group_id=chunk.group_id,
                    chunk_index=chunk.index,
                    content=chunk.content,
                    start_offset=chunk.start_offset,
                    end_offset=chunk.end_offset,
                    token_count=chunk.token_count,
                    created_at=now,
                )
                for chunk in chunks
            )

    def set_status(
        self,
        document_id: str,
        status: ProcessingStatus,
        *,
        entity_count: int | None = None,
    ) -> None:
        values: dict[str, Any] = {"processing_status": ProcessingStatus(status).value}
        if entity_count is not None:
            values["entity_count"] = entity_count
        if status in _FINISHED:
            values["last_processed_at"] = utcnow()
        stmt = (
            update(DocumentRow)
            .where(DocumentRow.id == document_id)
            .values(**values)
            .execution_options(synchronize_session=False)
        )
        with self._session() as session:
            result = cast(CursorResult[Any], session.execute(stmt))
            if result.rowcount == 0:
                raise KeyError(f"no document {document_id!r}")

    def complete_documents(self, entity_counts: Mapping[str, int]) -> None:
        now = utcnow()
        with self._session() as session:
            for document_id, count in entity_counts.items():
                stmt = (update(DocumentRow).where(DocumentRow.id == document_id)
                        .values(processing_status=ProcessingStatus.COMPLETED.value,
                                entity_count=count, last_processed_at=now)
                        .execution_options(synchronize_session=False))
                if cast(CursorResult[Any], session.execute(stmt)).rowcount == 0:
                    raise KeyError(f"no document {document_id!r}")

    def get_documents(self, ids: Sequence[str]) -> list[Document]:
        found: dict[str, Document] = {}
        with self._session() as session:
            for batch in _batches(ids):
                for row in session.scalars(select(DocumentRow).where(DocumentRow.id.in_(batch))):
                    found[row.id] = _to_document(row)
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def list_documents(self, group_id: str) -> list[Document]:
        stmt = select(DocumentRow).where(DocumentRow.group_id == group_id).order_by(DocumentRow.id)
        with self._session() as session:
            return [_to_document(row) for row in session.scalars(stmt)]

    def delete_documents(self, group_id: str, ids: Sequence[str]) -> int:
        """Delete documents of the group; ON DELETE CASCADE takes their chunks and mentions."""
        deleted = 0
        with self._session() as session:
            for batch in _batches(ids):
                stmt = (
                    delete(DocumentRow)
                    .where(DocumentRow.group_id == group_id, DocumentRow.id.in_(batch))
                    .execution_options(synchronize_session=False)
                )
                deleted += cast(CursorResult[Any], session.execute(stmt)).rowcount or 0
        return deleted

    # ------------------------------------------------------------------ sync state

    def get_sync_cursor(self, group_id: str, source: str) -> str | None:
        stmt = select(SyncStateRow.cursor).where(
            SyncStateRow.group_id == group_id, SyncStateRow.source == source
        )
        with self._session() as session:
            return session.scalars(stmt).one_or_none()

    def set_sync_cursor(self, group_id: str, source: str, cursor: str) -> None:
        values = {"group_id": group_id, "source": source, "cursor": cursor, "updated_at": utcnow()}
        stmt = self._insert()(SyncStateRow).values(values)
        upsert = stmt.on_conflict_do_update(
            index_elements=["group_id", "source"],
            set_={"cursor": stmt.excluded.cursor, "updated_at": stmt.excluded.updated_at},
        )
        with self._session() as session:
            session.execute(upsert)

    # ------------------------------------------------------------------ chunks, mentions

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        found: dict[str, Chunk] = {}
        with self._session() as session:
            for batch in _batches(ids):
                for row in session.scalars(select(ChunkRow).where(ChunkRow.id.in_(batch))):
                    found[row.id] = _to_chunk(row)
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def chunks_mentioning(
        self, group_id: str, entity_ids: Sequence[str], limit: int = 50
    ) -> list[str]:
        """Chunk ids that mention any of the entities, most mentions first."""
        if not entity_ids or limit < 1:
            return []
        hits = func.count(EntityMentionRow.id)
        stmt = (
            select(EntityMentionRow.chunk_id, hits)
            .where(
                # coalesce keeps planners (SQLite without statistics) off the group index,
                # which scans every mention of the tenant; the entity index is selective
                func.coalesce(EntityMentionRow.group_id, "") == group_id,
                EntityMentionRow.entity_id.in_(list(dict.fromkeys(entity_ids))[:_IN_BATCH]),
            )
            .group_by(EntityMentionRow.chunk_id)
            .order_by(hits.desc(), EntityMentionRow.chunk_id)
            .limit(limit)
        )
        with self._session() as session:
            return [row[0] for row in session.execute(stmt)]

    def add_mentions(self, mentions: Sequence[EntityMention]) -> None:
        rows = list({m.id: _mention_values(m) for m in mentions}.values())
        if not rows:
            return
        insert = self._insert()
        with self._session() as session:
            for start in range(0, len(rows), _IN_BATCH):
                stmt = insert(EntityMentionRow).on_conflict_do_nothing(index_elements=["id"])
                session.execute(stmt, rows[start : start + _IN_BATCH])

    # ------------------------------------------------------------------ audit, counts

    def record_audit(self, event: AuditEvent) -> None:
        with self._session() as session:
            session.add(
                AuditRow(
                    group_id=event.group_id,
                    action=event.action,
                    entity_id=event.entity_id,
                    detail=event.detail,
                    created_at=utcnow(),
                )
            )

    def list_audit(self, group_id: str, *, limit: int = 100) -> list[AuditEvent]:
        """Newest first (not part of the port; used by tests and the API)."""
        stmt = (
            select(AuditRow)
            .where(AuditRow.group_id == group_id)
            .order_by(AuditRow.created_at.desc(), AuditRow.id.desc())
            .limit(limit)
        )
        with self._session() as session:
            return [
                AuditEvent(
                    group_id=row.group_id,
                    action=row.action,
                    entity_id=row.entity_id,
                    detail=row.detail,
                )
                for row in session.scalars(stmt)
            ]

    def counts(self, group_id: str) -> DocumentCounts:
        def count(model: type[DocumentRow | ChunkRow | EntityMentionRow]) -> Any:
            return select(func.count()).select_from(model).where(model.group_id == group_id)

        with self._session() as session:
            return DocumentCounts(
                documents=session.scalar(count(DocumentRow)) or 0,
                chunks=session.scalar(count(ChunkRow)) or 0,
                mentions=session.scalar(count(EntityMentionRow)) or 0,
            )

    # ------------------------------------------------------------------ tenants, lifecycle

    def delete_group(self, group_id: str) -> None:
        from knotwork.infra.sql.backup import delete_tenant

        delete_tenant(self._engine, group_id)  # every table with a group_id, children first

    def api_keys(self) -> SqlApiKeyStore:
        """The API-key table, on this store's engine."""
        from knotwork.infra.sql.api_keys import SqlApiKeyStore

        return SqlApiKeyStore(self._engine)

    def dump(self, group_id: str) -> Iterator[TableDump]:
        """The tenant's rows of every table (see ``infra.sql.backup``)."""
        from knotwork.infra.sql.backup import dump_tenant

        return dump_tenant(self._engine, group_id)

    def restore(self, dumps: Iterable[TableDump]) -> dict[str, int]:
        from knotwork.infra.sql.backup import restore_tenant

        return restore_tenant(self._engine, dumps)

    def close(self) -> None:
        self._engine.dispose()

    def _insert(self) -> Callable[[type[Base] | Table], _UpsertInsert]:
        """The dialect's INSERT with ON CONFLICT support (PostgreSQL and SQLite)."""
        if self.dialect == "postgresql":
            return postgresql.insert
        if self.dialect == "sqlite":
            return sqlite.insert
        raise NotImplementedError(f"unsupported SQL dialect: {self.dialect}")
