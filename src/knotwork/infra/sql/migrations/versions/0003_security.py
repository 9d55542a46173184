"""API keys (hashed at rest, scoped, optionally bound to one tenant); documents' source ACLs.

Revision ID: 0003_security
Revises: 0002_resolution
Create Date: 2026-11-22 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003_security"
down_revision: str | None = "0002_resolution"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = 36
_GROUP = 128


def _ts() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def _json() -> sa.JSON:
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(_ID), nullable=False),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("scopes", _json(), nullable=False),
        sa.Column("tenant", sa.String(_GROUP), nullable=True),
        sa.Column("principals", _json(), nullable=False),
        sa.Column("rate_limit_per_minute", sa.Integer(), nullable=True),
        sa.Column("created_at", _ts(), nullable=False),
        sa.Column("revoked_at", _ts(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_api_keys"),
        sa.UniqueConstraint("prefix", name="uq_api_keys_prefix"),
    )
    with op.batch_alter_table("documents") as batch:  # SQLite needs the batch form
        batch.add_column(sa.Column("acl", _json(), nullable=False, server_default="[]"))


def downgrade() -> None:
    with op.batch_alter_table("documents") as batch:
        batch.drop_column("acl")
    op.drop_table("api_keys")
