"""API keys: 401 without, 403 outside scope or tenant, 429 over budget; hashed at rest."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from typer.testing import CliRunner

from knotwork.domain.auth import Scope
from knotwork.services.api.app import create_app
from knotwork.services.cli import app as cli_app
from knotwork.settings import AuthMode, EmbedderBackend, Settings

pytestmark = [pytest.mark.integration]
QUERY = {"query": "Who leads Project Atlas?", "mode": "LOCAL"}
EPISODE = {"content": "Ana Ruiz leads Project Kestrel.", "reference_time": "2026-01-05T00:00:00Z"}


def _settings(tmp_path: Path, falkordb_url: str, **overrides: object) -> Settings:
    values: dict[str, object] = {"data_dir": tmp_path / "data", "group": f"auth_{secrets.token_hex(4)}",
                                 "falkordb_url": falkordb_url, "embedder": EmbedderBackend.HASHING}
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture
def client(tmp_path: Path, falkordb_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(_settings(tmp_path, falkordb_url)),
                    raise_server_exceptions=False) as test_client:
        yield test_client


def _issue(client: TestClient, *scopes: Scope, **options: object) -> str:
    keys = client.app.state.knotwork.runtime.documents.api_keys()  # type: ignore[attr-defined]
    issued = keys.create(f"test-{secrets.token_hex(2)}", list(scopes), **options)
    client.app.state.auth.forget()  # type: ignore[attr-defined]
    return issued.secret


def _bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def _problem(response: object, status: int) -> dict[str, object]:
    assert response.status_code == status, response.text  # type: ignore[attr-defined]
    assert response.headers["content-type"].startswith("application/problem+json")  # type: ignore[attr-defined]
    body: dict[str, object] = response.json()  # type: ignore[attr-defined]
    assert body["status"] == status and body["detail"]
    return body


def test_open_until_the_first_key_then_enforced(client: TestClient) -> None:
    assert client.post("/v1/graphrag/query", json=QUERY).status_code == 200
    _issue(client, Scope.QUERY)
    response = client.post("/v1/graphrag/query", json=QUERY)
    _problem(response, 401)
    assert response.headers["www-authenticate"].startswith("Bearer")
    _problem(client.post("/v1/graphrag/query", json=QUERY, headers=_bearer("kw_000000000000_x")), 401)
    _problem(client.post("/v1/graphrag/query", json=QUERY, headers=_bearer("garbage")), 401)
    # health and metrics stay open for probes
    assert client.get("/healthz").status_code == 200
    assert client.get("/metrics").status_code == 200


def test_scopes(client: TestClient) -> None:
    query_key = _issue(client, Scope.QUERY)
    ingest_key = _issue(client, Scope.INGEST)
    admin_key = _issue(client, Scope.ADMIN)
    assert client.post("/v1/graphrag/query", json=QUERY, headers=_bearer(query_key)).status_code == 200
    body = _problem(client.post("/v1/episodes", json=EPISODE, headers=_bearer(query_key)), 403)
    assert "ingest" in str(body["detail"])
    _problem(client.post("/v1/graphrag/query", json=QUERY, headers=_bearer(ingest_key)), 403)
    assert client.post("/v1/episodes", json=EPISODE, headers={"X-API-Key": ingest_key}).status_code == 200
    assert client.post("/v1/graphrag/query", json=QUERY, headers=_bearer(admin_key)).status_code == 200


def test_a_tenant_bound_key_stays_in_its_tenant(client: TestClient) -> None:
    tenant = f"bound_{secrets.token_hex(3)}"
    key = _issue(client, Scope.QUERY, Scope.INGEST, tenant=tenant)
    other = {**EPISODE, "group_id": "someone_else"}
    body = _problem(client.post("/v1/episodes", json=other, headers=_bearer(key)), 403)
    assert tenant in str(body["detail"])
    assert client.post("/v1/episodes", json=EPISODE, headers=_bearer(key)).status_code == 200
    documents = client.app.state.knotwork.runtime.documents  # type: ignore[attr-defined]
    default_group = client.app.state.knotwork.settings.group  # type: ignore[attr-defined]
    assert documents.counts(tenant).documents == 1  # written to the key's tenant …
    assert documents.counts(default_group).documents == 0  # … not the server's default
    answer = client.post("/v1/graphrag/query", json={"query": "Who leads Project Kestrel?"},
                         headers=_bearer(key)).json()
    assert "Ana Ruiz" in answer["answer"]


def test_revoked_keys_are_refused(client: TestClient) -> None:
    key = _issue(client, Scope.QUERY)
    assert client.post("/v1/graphrag/query", json=QUERY, headers=_bearer(key)).status_code == 200
    keys = client.app.state.knotwork.runtime.documents.api_keys()  # type: ignore[attr-defined]
    assert keys.revoke(key.split("_")[1])
    client.app.state.auth.forget()  # type: ignore[attr-defined]
    _problem(client.post("/v1/graphrag/query", json=QUERY, headers=_bearer(key)), 401)


def test_rate_limit_per_key(client: TestClient) -> None:
    limited = _issue(client, Scope.QUERY, rate_limit_per_minute=3)
    other = _issue(client, Scope.QUERY)
    codes = [client.get("/v1/communities", headers=_bearer(limited)).status_code for _ in range(3)]
    assert 429 not in codes
    response = client.get("/v1/communities", headers=_bearer(limited))
    _problem(response, 429)
    assert 1 <= int(response.headers["retry-after"]) <= 61
    assert client.get("/v1/communities", headers=_bearer(other)).status_code != 429


def test_auth_on_without_keys_refuses_everything(tmp_path: Path, falkordb_url: str) -> None:
    settings = _settings(tmp_path, falkordb_url, auth_mode=AuthMode.ON)
    with TestClient(create_app(settings), raise_server_exceptions=False) as test_client:
        _problem(test_client.post("/v1/graphrag/query", json=QUERY), 401)


def test_cli_keys_are_hashed_at_rest(tmp_path: Path) -> None:
    runner = CliRunner()
    base = ["--data-dir", str(tmp_path / "d"), "keys"]
    created = runner.invoke(cli_app, [*base, "create", "ci-bot", "--scope", "query", "--scope",
                                      "ingest", "--tenant", "acme", "--rate", "60"])
    assert created.exit_code == 0, created.output
    secret = created.stdout.strip()
    assert secret.startswith("kw_")
    listed = runner.invoke(cli_app, [*base, "list"])
    assert "ci-bot" in listed.stdout and "tenant=acme" in listed.stdout and secret not in listed.stdout
    engine = create_engine(f"sqlite:///{tmp_path / 'd' / 'knotwork.db'}")
    with engine.connect() as conn:
        rows = [tuple(str(v) for v in row) for row in conn.execute(text("select * from api_keys"))]
    engine.dispose()
    assert rows and not any(secret in value for row in rows for value in row)
    bad = runner.invoke(cli_app, [*base, "create", "x", "--scope", "root"])
    assert bad.exit_code == 2 and "unknown scope" in bad.stderr
    prefix = secret.split("_")[1]
    assert runner.invoke(cli_app, [*base, "revoke", prefix]).exit_code == 0
    again = runner.invoke(cli_app, [*base, "revoke", prefix])
    assert again.exit_code == 2 and "no active key" in again.stderr


def test_admin_api_key_guards_admin_routes_only(tmp_path: Path, falkordb_url: str) -> None:
    settings = _settings(tmp_path, falkordb_url, admin_api_key="s3cret-admin")
    with TestClient(create_app(settings), raise_server_exceptions=False) as test_client:
        # no key issued yet: query routes stay open, admin routes need the admin key
        assert test_client.post("/v1/graphrag/query", json=QUERY).status_code == 200
        page = test_client.get("/admin")  # the sign-in page
        assert page.status_code == 401 and "Sign in" in page.text
        assert test_client.get("/admin", headers=_bearer("s3cret-admin")).status_code == 200
        _problem(test_client.get("/v1/review", headers=_bearer("wrong")), 401)
        query_key = _issue(test_client, Scope.QUERY)
        _problem(test_client.get("/admin", headers=_bearer(query_key)), 403)
        admin_key = _issue(test_client, Scope.ADMIN)  # an issued admin key opens the pages too
        assert test_client.get("/admin", headers=_bearer(admin_key)).status_code == 200
