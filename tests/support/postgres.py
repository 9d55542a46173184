"""Per-test PostgreSQL databases: created on the local server, dropped afterwards."""

from __future__ import annotations

import os
import secrets
from functools import cache

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

PG_ADMIN_URL = os.environ.get(
    "KNOTWORK_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)

@cache
def postgres_available() -> bool:
    try:
        engine = create_engine(PG_ADMIN_URL, connect_args={"connect_timeout": 3})
        try:
            with engine.connect() as conn:
                conn.execute(text("SELECT 1"))
        finally:
            engine.dispose()
    except (SQLAlchemyError, OSError):
        return False
    return True


def create_pg_database() -> str:
    """Create ``knotwork_test_<random>``; return its URL."""
    if not postgres_available():
        pytest.skip(f"PostgreSQL not reachable at {PG_ADMIN_URL}")
    name = f"knotwork_test_{secrets.token_hex(6)}"
    engine = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            quoted = conn.dialect.identifier_preparer.quote(name)
            conn.execute(text(f"CREATE DATABASE {quoted}"))
    finally:
        engine.dispose()
    return make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)


def drop_pg_database(url: str) -> None:
    name = make_url(url).database
    assert name is not None and name.startswith("knotwork_test_")
    engine = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = :name AND pid <> pg_backend_pid()"
                ),
                {"name": name},
            )
            quoted = conn.dialect.identifier_preparer.quote(name)
            conn.execute(text(f"DROP DATABASE IF EXISTS {quoted}"))
    finally:
        engine.dispose()


