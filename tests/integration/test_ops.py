"""Operations: request ids, body limits, /metrics, 503 when a store is down, doctor, db commands."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from knotwork.services.api.app import create_app
from knotwork.services.cli import app as cli_app
from knotwork.settings import EmbedderBackend, Settings
from tests.support.postgres import create_pg_database, drop_pg_database

pytestmark = [pytest.mark.integration]


def _settings(tmp_path: Path, falkordb_url: str, **overrides: object) -> Settings:
    values: dict[str, object] = {"data_dir": tmp_path / "data", "group": f"ops_{secrets.token_hex(4)}",
                                 "falkordb_url": falkordb_url, "embedder": EmbedderBackend.HASHING}
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture
def client(tmp_path: Path, falkordb_url: str) -> Iterator[TestClient]:
    settings = _settings(tmp_path, falkordb_url, max_request_bytes=4096)
    with TestClient(create_app(settings), raise_server_exceptions=False) as test_client:
        yield test_client


def test_request_id_is_echoed_or_minted(client: TestClient) -> None:
    given = client.get("/healthz", headers={"X-Request-ID": "req-abc-123"})
    assert given.status_code == 200
    assert given.headers["x-request-id"] == "req-abc-123"
    minted = client.get("/healthz")
    assert len(minted.headers["x-request-id"]) == 32
    assert minted.headers["x-request-id"] != client.get("/healthz").headers["x-request-id"]


def test_oversized_body_is_413_problem_and_stores_nothing(client: TestClient) -> None:
    before = client.app.state.knotwork.runtime.documents.counts(  # type: ignore[attr-defined]
        client.app.state.knotwork.settings.group)  # type: ignore[attr-defined]
    huge = {"content": "Ada Lovelace works at Acme. " * 400, "name": "big",
            "reference_time": "2026-01-01T00:00:00Z"}
    response = client.post("/v1/episodes", json=huge)
    assert response.status_code == 413
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == 413 and "4096" in body["detail"]
    after = client.app.state.knotwork.runtime.documents.counts(  # type: ignore[attr-defined]
        client.app.state.knotwork.settings.group)  # type: ignore[attr-defined]
    assert after == before


def test_metrics_report_http_and_store_latency(client: TestClient) -> None:
    client.get("/healthz")
    client.post("/v1/graphrag/query", json={})  # a 422, counted under its route
    text = client.get("/metrics").text
    assert 'knotwork_http_request_seconds_count{method="GET",route="/healthz",status="200"}' in text
    assert 'route="/v1/graphrag/query",status="422"' in text
    assert 'knotwork_store_call_seconds_count{operation="counts",store="graph"}' in text
    assert 'knotwork_store_call_seconds_count{operation="count",store="vectors"}' in text
    assert "knotwork_cache_hit_ratio" in text
    assert 'knotwork_queue_depth{stream="dead"} 0.0' in text  # the embedded server's streams


def test_queue_depth_follows_enqueued_tasks(client: TestClient) -> None:
    from knotwork.domain.models import RawDocument, SourceSystem
    from knotwork.infra.queue.factory import create_job_queue
    from knotwork.services.worker.enqueue import enqueue_documents

    kw = client.app.state.knotwork  # type: ignore[attr-defined]
    queue = create_job_queue(kw.settings, kw.runtime.graph)
    try:
        docs = [RawDocument(source_system=SourceSystem.FILE, source_id=f"q{i}.txt",
                            title=f"q{i}", content=f"Note {i}: Ana Ruiz leads Project Q{i}.")
                for i in range(3)]
        enqueue_documents(docs, kw.runtime.documents, queue, kw.settings.group)
        text = client.get("/metrics").text
        depth = sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                    if line.startswith("knotwork_queue_depth{") and "dead" not in line
                    and "retrying" not in line)
        assert depth >= 1
    finally:
        queue.purge()
        queue.close()


def test_store_down_gives_503_with_retry_after(tmp_path: Path, falkordb_url: str) -> None:
    url = create_pg_database()
    try:
        settings = _settings(tmp_path, falkordb_url, database_url=url)
        with TestClient(create_app(settings), raise_server_exceptions=False) as test_client:
            assert test_client.get("/healthz").status_code == 200
            drop_pg_database(url)  # the database disappears under the running app
            response = test_client.get("/healthz")
            assert response.status_code == 503, response.text
            assert response.headers["retry-after"] == str(settings.retry_after_s)
            assert response.headers["content-type"].startswith("application/problem+json")
            assert "unavailable" in response.json()["detail"]
    finally:
        drop_pg_database(url)


def test_doctor_passes_on_the_embedded_stack(tmp_path: Path, falkordb_url: str) -> None:
    result = CliRunner().invoke(cli_app, ["--data-dir", str(tmp_path / "d"), "doctor", "--json",
                                          "--skip-models"])
    assert result.exit_code == 0, result.output
    checks = {c["component"]: c for c in json.loads(result.stdout)}
    assert checks["documents"]["status"] == "ok" and "SQLite" in checks["documents"]["version"]
    assert checks["graph"]["status"] == "ok" and "graph" in checks["graph"]["detail"]
    assert checks["vectors"]["status"] == "ok"
    assert checks["llm"]["status"] == "skipped"


def test_doctor_fails_with_one_line_when_a_store_is_unreachable(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KNOTWORK_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:1/none")
    monkeypatch.setenv("KNOTWORK_REDIS_URL", "redis://127.0.0.1:1/0")
    result = CliRunner().invoke(cli_app, ["--data-dir", str(tmp_path / "d"), "doctor",
                                          "--skip-models"])
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("knotwork: error: 2 check(s) failed")
    assert "documents" in lines[0] and "queue" in lines[0]


def test_db_upgrade_downgrade_current_on_postgres(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    url = create_pg_database()
    monkeypatch.setenv("KNOTWORK_DATABASE_URL", url)
    runner = CliRunner()
    args = ["--data-dir", str(tmp_path / "d"), "db"]
    try:
        assert runner.invoke(cli_app, [*args, "current"]).stdout.strip() == "base"
        up = runner.invoke(cli_app, [*args, "upgrade"])
        assert up.exit_code == 0, up.output
        head = runner.invoke(cli_app, [*args, "current"]).stdout.strip()
        assert head != "base"
        down = runner.invoke(cli_app, [*args, "downgrade", "base"])
        assert down.exit_code == 0 and runner.invoke(cli_app, [*args, "current"]).stdout.strip() == "base"
        bad = runner.invoke(cli_app, [*args, "downgrade", "no_such_revision"])
        assert bad.exit_code == 2 and "no_such_revision" in bad.stderr
    finally:
        drop_pg_database(url)
