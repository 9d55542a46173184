"""Alembic migrations of the document store on fresh SQLite and PostgreSQL databases."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, inspect, text

from knotwork.infra.sql.models import ALL_INDEXES, ALL_TABLES, Base
from knotwork.infra.sql.store import SqlDocumentStore, alembic_config, configure_engine
from tests.support.postgres import create_pg_database, drop_pg_database

REPO_ROOT = Path(__file__).resolve().parents[2]
HEAD = "0004_entity_actions"


@pytest.fixture(
    params=["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)],
)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'migrations.db'}"
        return
    url = create_pg_database()
    try:
        yield url
    finally:
        drop_pg_database(url)


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    eng = configure_engine(create_engine(database_url))
    try:
        yield eng
    finally:
        eng.dispose()


def _tables(engine: Engine) -> set[str]:
    return set(inspect(engine).get_table_names())


def _indexes(engine: Engine) -> set[str]:
    insp = inspect(engine)
    return {
        str(ix["name"])
        for table in insp.get_table_names()
        for ix in insp.get_indexes(table)
        if ix["name"] is not None
    }


def _version(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def test_upgrade_downgrade_upgrade(database_url: str, engine: Engine) -> None:
    cfg = alembic_config(database_url)
    assert _tables(engine) == set()

    command.upgrade(cfg, "head")
    assert _tables(engine) == {*ALL_TABLES, "alembic_version"}
    assert set(ALL_INDEXES) <= _indexes(engine)
    assert _version(engine) == HEAD

    insp = inspect(engine)
    [chunk_fk] = insp.get_foreign_keys("chunks")
    assert chunk_fk["referred_table"] == "documents"
    assert chunk_fk["options"].get("ondelete") == "CASCADE"
    [mention_fk] = insp.get_foreign_keys("entity_mentions")
    assert mention_fk["referred_table"] == "chunks"
    assert mention_fk["options"].get("ondelete") == "CASCADE"
    uniques = insp.get_unique_constraints("documents")
    assert [u["column_names"] for u in uniques] == [["group_id", "source_system", "source_id"]]
    assert insp.get_pk_constraint("sync_state")["constrained_columns"] == ["group_id", "source"]
    columns = {c["name"] for c in insp.get_columns("documents")}
    assert {"metadata", "content_hash", "processing_status", "last_processed_at"} <= columns

    command.downgrade(cfg, "base")
    assert _tables(engine) <= {"alembic_version"}
    assert not set(ALL_INDEXES) & _indexes(engine)
    assert _version(engine) is None

    command.upgrade(cfg, "head")
    assert _tables(engine) == {*ALL_TABLES, "alembic_version"}
    assert _version(engine) == HEAD


def test_migration_matches_models(database_url: str, engine: Engine) -> None:
    command.upgrade(alembic_config(database_url), "head")
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        diff = compare_metadata(ctx, Base.metadata)
    assert diff == []


def test_store_migrate_from_any_working_directory(
    database_url: str, engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    store = SqlDocumentStore(database_url)
    try:
        store.migrate()
        store.migrate()
    finally:
        store.close()
    assert _version(engine) == HEAD
    assert list(elsewhere.iterdir()) == []


def test_sqlite_cascade_is_enforced(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fk.db'}"
    command.upgrade(alembic_config(url), "head")
    eng = configure_engine(create_engine(url))
    try:
        with eng.connect() as conn:
            assert conn.execute(text("PRAGMA foreign_keys")).scalar_one() == 1
    finally:
        eng.dispose()


def test_repo_alembic_ini_resolves_the_packaged_scripts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = Config(str(REPO_ROOT / "alembic.ini"))
    script = ScriptDirectory.from_config(cfg)
    assert script.get_current_head() == HEAD
    assert Path(script.dir).name == "migrations"


def test_url_falls_back_to_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "from-settings" / "k.db"
    monkeypatch.setenv("KNOTWORK_DATABASE_URL", f"sqlite:///{db}")
    cfg = Config()
    cfg.set_main_option("script_location", "knotwork.infra.sql:migrations")
    command.upgrade(cfg, "head")
    eng = create_engine(f"sqlite:///{db}")
    try:
        assert _tables(eng) == {*ALL_TABLES, "alembic_version"}
    finally:
        eng.dispose()


def test_offline_sql_for_postgres() -> None:
    buf = io.StringIO()
    cfg = Config(output_buffer=buf)
    cfg.set_main_option("script_location", "knotwork.infra.sql:migrations")
    cfg.set_main_option("sqlalchemy.url", "postgresql+psycopg://u@localhost/db")
    command.upgrade(cfg, "head", sql=True)
    sql = buf.getvalue()
    assert "CREATE TABLE documents" in sql
    assert "metadata JSONB NOT NULL" in sql
    assert "TIMESTAMP WITH TIME ZONE" in sql
    assert "ON DELETE CASCADE" in sql
    assert "CREATE INDEX idx_document_modified ON documents (modified_at DESC)" in sql
    assert "BIGSERIAL" in sql
