"""Undoable review actions (split, move, review decisions) and the cannot-link names a split
leaves behind.

Revision ID: 0004_entity_actions
Revises: 0003_security
Create Date: 2026-11-26 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004_entity_actions"
down_revision: str | None = "0003_security"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = 36
_GROUP = 128
_ENTITY_ID = 255


def _ts() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def _json() -> sa.JSON:
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "entity_actions",
        sa.Column("id", sa.String(_ID), nullable=False),
        sa.Column("group_id", sa.String(_GROUP), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("review_id", sa.String(_ID), nullable=True),
        sa.Column("entity_ids", _json(), nullable=False),
        sa.Column("snapshot", _json(), nullable=False),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("created_at", _ts(), nullable=False),
        sa.Column("undone_at", _ts(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_entity_actions"),
    )
    op.create_index("idx_action_group_time", "entity_actions", ["group_id", "created_at"])
    op.create_table(
        "entity_cannot_links",
        sa.Column("group_id", sa.String(_GROUP), nullable=False),
        sa.Column("entity_id", sa.String(_ENTITY_ID), nullable=False),
        sa.Column("name_key", sa.String(255), nullable=False),
        sa.Column("action_id", sa.String(_ID), nullable=False),
        sa.Column("created_at", _ts(), nullable=False),
        sa.PrimaryKeyConstraint("group_id", "entity_id", "name_key",
                                name="pk_entity_cannot_links"),
    )


def downgrade() -> None:
    op.drop_table("entity_cannot_links")
    op.drop_index("idx_action_group_time", table_name="entity_actions")
    op.drop_table("entity_actions")
