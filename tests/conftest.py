"""Shared fixtures: one embedded FalkorDB per session, real Postgres databases per test."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from knotwork.settings import Settings, VectorBackend
from tests.support.postgres import create_pg_database, drop_pg_database


@pytest.fixture(scope="session")
def falkordb_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from knotwork.infra.falkordb.server import EmbeddedFalkorDB

    server = EmbeddedFalkorDB(tmp_path_factory.mktemp("falkordb")).start()
    try:
        yield f"redis://{server.host}:{server.port}"
    finally:
        server.close()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    url = create_pg_database()
    try:
        yield url
    finally:
        drop_pg_database(url)


@pytest.fixture(scope="session")
def llama_base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real llama.cpp server with SmolLM2-135M (skips when it cannot run): its /v1 URL."""
    from knotwork.infra.llm.local_server import llama_server, llama_server_available, smollm2_path

    reason = llama_server_available()
    if reason:
        pytest.skip(reason)
    model = smollm2_path()
    assert model is not None
    log = Path(tmp_path_factory.mktemp("llama")) / "server.log"
    with llama_server(model, log_path=log) as base:
        yield base


SettingsFactory = Callable[..., Settings]


@pytest.fixture
def make_settings(tmp_path: Path, falkordb_url: str) -> SettingsFactory:
    """Embedded-stack settings in a temp dir, a fresh tenant per call."""

    def build(database_url: str | None = None, vectors: str = "edge", **overrides: object) -> Settings:
        values: dict[str, object] = {
            "data_dir": tmp_path / "data",
            "group": f"t_{secrets.token_hex(4)}",
            "falkordb_url": falkordb_url,
            "database_url": database_url,
        }
        if vectors == "memory":
            values["vector_backend"] = VectorBackend.QDRANT
            values["qdrant_url"] = ":memory:"
        values.update(overrides)
        return Settings(**values)  # type: ignore[arg-type]

    return build


@pytest.fixture(autouse=True)
def _structlog_defaults() -> Iterator[None]:
    """CLI invocations configure structlog (level WARNING); later tests start from defaults."""
    yield
    import structlog

    structlog.reset_defaults()
