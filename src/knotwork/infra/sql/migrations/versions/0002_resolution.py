"""Entity resolution: blocking keys, the review queue and merge lineage.

Revision ID: 0002_resolution
Revises: 0001_initial
Create Date: 2026-11-22 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002_resolution"
down_revision: str | None = "0001_initial"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copies of the model types (migrations must not follow later model edits).
_ID = 36
_GROUP = 128
_ENTITY_ID = 255


def _ts() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def _json() -> sa.JSON:
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "entity_block_keys",
        sa.Column("group_id", sa.String(_GROUP), nullable=False),
        sa.Column("key", sa.String(255), nullable=False),
        sa.Column("entity_id", sa.String(_ENTITY_ID), nullable=False),
        sa.PrimaryKeyConstraint("group_id", "key", "entity_id", name="pk_entity_block_keys"),
    )
    op.create_index("idx_block_key_entity", "entity_block_keys", ["group_id", "entity_id"])

    op.create_table(
        "resolution_reviews",
        sa.Column("id", sa.String(_ID), nullable=False),
        sa.Column("group_id", sa.String(_GROUP), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("mention", sa.Text(), nullable=False),
        sa.Column("entity_type", sa.String(32), nullable=False),
        sa.Column("entity_id", sa.String(_ENTITY_ID), nullable=True),
        sa.Column("decision", sa.String(32), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("candidates", _json(), nullable=False),
        sa.Column("episode_ids", _json(), nullable=False),
        sa.Column("alias_added", sa.Text(), nullable=True),
        sa.Column("created_at", _ts(), nullable=False),
        sa.Column("decided_at", _ts(), nullable=True),
        sa.Column("decided_by", sa.String(128), nullable=True),
        sa.Column("outcome", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_resolution_reviews"),
    )
    op.create_index("idx_review_group_status", "resolution_reviews",
                    ["group_id", "status", "created_at"])

    op.create_table(
        "entity_merges",
        sa.Column("id", sa.String(_ID), nullable=False),
        sa.Column("group_id", sa.String(_GROUP), nullable=False),
        sa.Column("target_id", sa.String(_ENTITY_ID), nullable=False),
        sa.Column("source_ids", _json(), nullable=False),
        sa.Column("snapshot", _json(), nullable=False),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("created_at", _ts(), nullable=False),
        sa.Column("undone_at", _ts(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_entity_merges"),
    )
    op.create_index("idx_merge_group_target", "entity_merges", ["group_id", "target_id"])


def downgrade() -> None:
    op.drop_index("idx_merge_group_target", table_name="entity_merges")
    op.drop_table("entity_merges")
    op.drop_index("idx_review_group_status", table_name="resolution_reviews")
    op.drop_table("resolution_reviews")
    op.drop_index("idx_block_key_entity", table_name="entity_block_keys")
    op.drop_table("entity_block_keys")
