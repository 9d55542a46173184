"""Initial document-store schema: documents, chunks, mentions, audit log, sync state.

Revision ID: 0001_initial
Revises:
Create Date: 2025-01-01 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001_initial"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copies of the model types (migrations must not follow later model edits).
_ID = 36
_GROUP = 128
_SOURCE_ID = 1024
_ENTITY_ID = 255


def _ts() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "documents",
        sa.Column("id", sa.String(_ID), nullable=False),
        sa.Column("group_id", sa.String(_GROUP), nullable=False),
        sa.Column("source_system", sa.String(32), nullable=False),
        sa.Column("source_id", sa.String(_SOURCE_ID), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("author", sa.Text(), nullable=True),
        sa.Column("created_at", _ts(), nullable=True),
        sa.Column("modified_at", _ts(), nullable=True),
        sa.Column("mime_type", sa.String(255), nullable=False),
        sa.Column("content_hash", sa.String(128), nullable=False),
        sa.Column("processing_status", sa.String(16), nullable=False),
        sa.Column("chunk_count", sa.Integer(), nullable=False),
        sa.Column("entity_count", sa.Integer(), nullable=False),
        sa.Column("last_processed_at", _ts(), nullable=True),
        sa.Column(
            "metadata",
            sa.JSON().with_variant(postgresql.JSONB(), "postgresql"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name="pk_documents"),
        sa.UniqueConstraint(
            "group_id", "source_system", "source_id", name="uq_documents_group_source"
        ),
    )
    op.create_index("idx_document_source", "documents", ["source_system", "source_id"])
    op.create_index("idx_document_modified", "documents", [sa.text("modified_at DESC")])
    op.create_index("idx_document_status", "documents", ["processing_status"])

    op.create_table(
        "chunks",
        sa.Column("id", sa.String(_ID), nullable=False),
        sa.Column("document_id", sa.String(_ID), nullable=False),
        sa.Column("group_id", sa.String(_GROUP), nullable=False),
        sa.Column("chunk_index", sa.Integer(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("start_offset", sa.Integer(), nullable=False),
        sa.Column("end_offset", sa.Integer(), nullable=False),
        sa.Column("token_count", sa.Integer(), nullable=False),
        sa.Column("created_at", _ts(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_chunks"),
        sa.ForeignKeyConstraint(
            ["document_id"],
            ["documents.id"],
            name="fk_chunks_document_id_documents",
            ondelete="CASCADE",
        ),
    )
    op.create_index("idx_chunk_document", "chunks", ["document_id"])
    op.create_index("idx_chunk_document_order", "chunks", ["document_id", "chunk_index"])
    op.create_index("idx_chunk_group", "chunks", ["group_id"])

    op.create_table(
        "entity_mentions",
        sa.Column("id", sa.String(_ID), nullable=False),
        sa.Column("group_id", sa.String(_GROUP), nullable=False),
        sa.Column("chunk_id", sa.String(_ID), nullable=False),
        sa.Column("entity_id", sa.String(_ENTITY_ID), nullable=False),
        sa.Column("span_start", sa.Integer(), nullable=False),
        sa.Column("span_end", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("extractor", sa.String(64), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_entity_mentions"),
        sa.ForeignKeyConstraint(
            ["chunk_id"],
            ["chunks.id"],
            name="fk_entity_mentions_chunk_id_chunks",
            ondelete="CASCADE",
        ),
    )
    op.create_index("idx_mention_chunk", "entity_mentions", ["chunk_id"])
    op.create_index("idx_mention_entity", "entity_mentions", ["entity_id"])
    op.create_index("idx_mention_group", "entity_mentions", ["group_id"])

    op.create_table(
        "audit_log",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("group_id", sa.String(_GROUP), nullable=False),
        sa.Column("action", sa.String(128), nullable=False),
        sa.Column("entity_id", sa.String(_ENTITY_ID), nullable=True),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("created_at", _ts(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_audit_log"),
    )
    op.create_index("idx_audit_entity", "audit_log", ["entity_id", sa.text("created_at DESC")])
    op.create_index("idx_audit_time", "audit_log", [sa.text("created_at DESC")])
    op.create_index("idx_audit_group", "audit_log", ["group_id", sa.text("created_at DESC")])

    op.create_table(
        "sync_state",
        sa.Column("group_id", sa.String(_GROUP), nullable=False),
        sa.Column("source", sa.String(255), nullable=False),
        sa.Column("cursor", sa.Text(), nullable=False),
        sa.Column("updated_at", _ts(), nullable=False),
        sa.PrimaryKeyConstraint("group_id", "source", name="pk_sync_state"),
    )


def downgrade() -> None:
    op.drop_table("sync_state")
    op.drop_index("idx_audit_group", table_name="audit_log")
    op.drop_index("idx_audit_time", table_name="audit_log")
    op.drop_index("idx_audit_entity", table_name="audit_log")
    op.drop_table("audit_log")
    op.drop_index("idx_mention_group", table_name="entity_mentions")
    op.drop_index("idx_mention_entity", table_name="entity_mentions")
    op.drop_index("idx_mention_chunk", table_name="entity_mentions")
    op.drop_table("entity_mentions")
    op.drop_index("idx_chunk_group", table_name="chunks")
    op.drop_index("idx_chunk_document_order", table_name="chunks")
    op.drop_index("idx_chunk_document", table_name="chunks")
    op.drop_table("chunks")
    op.drop_index("idx_document_status", table_name="documents")
    op.drop_index("idx_document_modified", table_name="documents")
    op.drop_index("idx_document_source", table_name="documents")
    op.drop_table("documents")
