"""SQLAlchemy 2 declarative schema of the document store (SQLite and PostgreSQL).

The Alembic migrations in ``knotwork.infra.sql.migrations`` create exactly this
schema; ``tests/integration/test_migrations.py`` checks that they agree.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION: dict[str, str] = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# Column types shared with the migrations (keep them in step).
ID_LENGTH = 36
GROUP_LENGTH = 128
SOURCE_ID_LENGTH = 1024
ENTITY_ID_LENGTH = 255


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend.

    PostgreSQL stores ``timestamptz``; SQLite has no time zone, so values are
    normalised to UTC before binding and UTC is re-attached when reading.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        # a str: the driver returned one (pragma: no cover)
        stamp = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
        if stamp.tzinfo is None:
            return stamp.replace(tzinfo=UTC)
        return stamp.astimezone(UTC)


def json_type() -> JSON:
    """JSON everywhere, JSONB on PostgreSQL."""
    return JSON().with_variant(JSONB(), "postgresql")


def audit_id_type() -> BigInteger:
    """BIGSERIAL on PostgreSQL; INTEGER PRIMARY KEY (rowid alias) on SQLite."""
    return BigInteger().with_variant(Integer(), "sqlite")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class DocumentRow(Base):
    __tablename__ = "documents"
    __table_args__ = (
        UniqueConstraint(
            "group_id", "source_system", "source_id", name="uq_documents_group_source"
        ),
        Index("idx_document_source", "source_system", "source_id"),
        Index("idx_document_status", "processing_status"),
    )

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    group_id: Mapped[str] = mapped_column(String(GROUP_LENGTH))
    source_system: Mapped[str] = mapped_column(String(32))
    source_id: Mapped[str] = mapped_column(String(SOURCE_ID_LENGTH))
    title: Mapped[str] = mapped_column(Text)
    url: Mapped[str | None] = mapped_column(Text)
    author: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    modified_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    mime_type: Mapped[str] = mapped_column(String(255))
    content_hash: Mapped[str] = mapped_column(String(128))
    processing_status: Mapped[str] = mapped_column(String(16))
    chunk_count: Mapped[int] = mapped_column(Integer)
    entity_count: Mapped[int] = mapped_column(Integer)
    last_processed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", json_type())
    # source ACL (0003): principals allowed to read; [] = everyone in the tenant
    acl: Mapped[list[str]] = mapped_column(json_type(), default=list)


Index("idx_document_modified", DocumentRow.modified_at.desc())


class ChunkRow(Base):
    __tablename__ = "chunks"
    __table_args__ = (
        Index("idx_chunk_document", "document_id"),
        Index("idx_chunk_document_order", "document_id", "chunk_index"),
        Index("idx_chunk_group", "group_id"),
    )

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    document_id: Mapped[str] = mapped_column(
        String(ID_LENGTH), ForeignKey("documents.id", ondelete="CASCADE")
    )
    group_id: Mapped[str] = mapped_column(String(GROUP_LENGTH))
    chunk_index: Mapped[int] = mapped_column(Integer)
    content: Mapped[str] = mapped_column(Text)
    start_offset: Mapped[int] = mapped_column(Integer)
    end_offset: Mapped[int] = mapped_column(Integer)
    token_count: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class EntityMentionRow(Base):
    __tablename__ = "entity_mentions"
    __table_args__ = (
        Index("idx_mention_chunk", "chunk_id"),
        Index("idx_mention_entity", "entity_id"),
        Index("idx_mention_group", "group_id"),
    )

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    group_id: Mapped[str] = mapped_column(String(GROUP_LENGTH))
    chunk_id: Mapped[str] = mapped_column(
        String(ID_LENGTH), ForeignKey("chunks.id", ondelete="CASCADE")
    )
    entity_id: Mapped[str] = mapped_column(String(ENTITY_ID_LENGTH))
    span_start: Mapped[int] = mapped_column(Integer)
    span_end: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    extractor: Mapped[str] = mapped_column(String(64))
    confidence: Mapped[float] = mapped_column(Float)


class AuditRow(Base):
    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(audit_id_type(), primary_key=True, autoincrement=True)
    group_id: Mapped[str] = mapped_column(String(GROUP_LENGTH))
    action: Mapped[str] = mapped_column(String(128))
    entity_id: Mapped[str | None] = mapped_column(String(ENTITY_ID_LENGTH))
    detail: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


Index("idx_audit_entity", AuditRow.entity_id, AuditRow.created_at.desc())
Index("idx_audit_time", AuditRow.created_at.desc())
Index("idx_audit_group", AuditRow.group_id, AuditRow.created_at.desc())


class SyncStateRow(Base):
    """Per-tenant, per-source cursor for incremental sync (e.g. a Confluence CQL date)."""

    __tablename__ = "sync_state"

    group_id: Mapped[str] = mapped_column(String(GROUP_LENGTH), primary_key=True)
    source: Mapped[str] = mapped_column(String(255), primary_key=True)
    cursor: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


# --------------------------------------------------------------------------- resolution (0002)


class EntityBlockKeyRow(Base):
    """A blocking key of an entity (``knotwork.resolution.blocking``): candidate lookup."""

    __tablename__ = "entity_block_keys"
    __table_args__ = (Index("idx_block_key_entity", "group_id", "entity_id"),)

    group_id: Mapped[str] = mapped_column(String(GROUP_LENGTH), primary_key=True)
    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    entity_id: Mapped[str] = mapped_column(String(ENTITY_ID_LENGTH), primary_key=True)


class ResolutionReviewRow(Base):
    """A flagged resolution decision waiting for (or given) a human verdict."""

    __tablename__ = "resolution_reviews"
    __table_args__ = (Index("idx_review_group_status", "group_id", "status", "created_at"),)

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    group_id: Mapped[str] = mapped_column(String(GROUP_LENGTH))
    status: Mapped[str] = mapped_column(String(16))
    mention: Mapped[str] = mapped_column(Text)
    entity_type: Mapped[str] = mapped_column(String(32))
    entity_id: Mapped[str | None] = mapped_column(String(ENTITY_ID_LENGTH))
    decision: Mapped[str] = mapped_column(String(32))
    score: Mapped[float] = mapped_column(Float)
    candidates: Mapped[Any] = mapped_column(json_type())
    episode_ids: Mapped[Any] = mapped_column(json_type())
    alias_added: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    decided_by: Mapped[str | None] = mapped_column(String(128))
    outcome: Mapped[str | None] = mapped_column(Text)


class EntityMergeRow(Base):
    """Lineage of an entity merge: the exact prior state, so it can be undone."""

    __tablename__ = "entity_merges"
    __table_args__ = (Index("idx_merge_group_target", "group_id", "target_id"),)

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    group_id: Mapped[str] = mapped_column(String(GROUP_LENGTH))
    target_id: Mapped[str] = mapped_column(String(ENTITY_ID_LENGTH))
    source_ids: Mapped[Any] = mapped_column(json_type())
    snapshot: Mapped[Any] = mapped_column(json_type())
    actor: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    undone_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class EntityActionRow(Base):
    """A review action that moved mentions between entities (split, move, a review decision),
    with the exact prior state it replaced, so it can be undone (migration 0004)."""

    __tablename__ = "entity_actions"
    __table_args__ = (Index("idx_action_group_time", "group_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    group_id: Mapped[str] = mapped_column(String(GROUP_LENGTH))
    kind: Mapped[str] = mapped_column(String(32))
    review_id: Mapped[str | None] = mapped_column(String(ID_LENGTH))
    entity_ids: Mapped[Any] = mapped_column(json_type())
    snapshot: Mapped[Any] = mapped_column(json_type())
    actor: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    undone_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class EntityCannotLinkRow(Base):
    """A name that must never again resolve to an entity: left by a split (migration 0004)."""

    __tablename__ = "entity_cannot_links"

    group_id: Mapped[str] = mapped_column(String(GROUP_LENGTH), primary_key=True)
    entity_id: Mapped[str] = mapped_column(String(ENTITY_ID_LENGTH), primary_key=True)
    name_key: Mapped[str] = mapped_column(String(255), primary_key=True)
    action_id: Mapped[str] = mapped_column(String(ID_LENGTH))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


ALL_TABLES: tuple[str, ...] = ("documents", "chunks", "entity_mentions", "audit_log", "sync_state",
                               "entity_block_keys", "resolution_reviews", "entity_merges",
                               "api_keys", "entity_actions", "entity_cannot_links")
ALL_INDEXES: tuple[str, ...] = (
    "idx_document_source",
    "idx_document_modified",
    "idx_document_status",
    "idx_chunk_document",
    "idx_chunk_document_order",
    "idx_chunk_group",
    "idx_mention_chunk",
    "idx_mention_entity",
    "idx_mention_group",
    "idx_audit_entity",
    "idx_audit_time",
    "idx_audit_group",
    "idx_block_key_entity",
    "idx_review_group_status",
    "idx_merge_group_target",
    "idx_action_group_time",
)


# --------------------------------------------------------------------------- security (0003)


class ApiKeyRow(Base):
    """An API key: only its SHA-256 is stored; ``prefix`` finds the row, the hash proves it.

    ``tenant`` (not ``group_id``: keys are not tenant data) binds the key to one tenant;
    NULL means every tenant. ``principals`` are the caller's identities for source ACLs.
    """

    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    prefix: Mapped[str] = mapped_column(String(16), unique=True)
    key_hash: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(255))
    scopes: Mapped[list[str]] = mapped_column(json_type())
    tenant: Mapped[str | None] = mapped_column(String(GROUP_LENGTH))
    principals: Mapped[list[str]] = mapped_column(json_type())
    rate_limit_per_minute: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
