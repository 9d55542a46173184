"""PATCH /v1/entities/{id}: optimistic locking (version, 409 on conflict), keys kept in step."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from knotwork.services.api.app import create_app
from knotwork.settings import EmbedderBackend, Settings

pytestmark = [pytest.mark.integration]


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> Iterator[TestClient]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("entity_update") / "data",  # type: ignore[arg-type]
                        group=f"upd_{secrets.token_hex(4)}", falkordb_url=falkordb_url,
                        embedder=EmbedderBackend.HASHING)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        yield client


def _create(api: TestClient, name: str) -> dict[str, Any]:
    created = api.post("/v1/entities", json={"display_name": name, "entity_type": "PERSON"})
    assert created.status_code == 200, created.text
    entity: dict[str, Any] = api.get(f"/v1/entities/{created.json()['entity_id']}").json()["entity"]
    return entity


def _problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    return body


def test_update_with_the_read_version_then_a_stale_one(api: TestClient) -> None:
    entity = _create(api, "Maria Gonzales")
    assert entity["version"] == 1
    ok = api.patch(f"/v1/entities/{entity['id']}",
                   json={"version": 1, "name": "Maria González", "summary": "Head of Data."})
    assert ok.status_code == 200, ok.text
    updated = ok.json()["entity"]
    assert updated["version"] == 2 and ok.headers["etag"] == '"2"'
    assert updated["name"] == "Maria González" and "Maria Gonzales" in updated["aliases"]
    stale = _problem(api.patch(f"/v1/entities/{entity['id']}",
                               json={"version": 1, "summary": "overwrites the edit"}), 409)
    assert "version 2" in stale["detail"]
    again = api.get(f"/v1/entities/{entity['id']}").json()["entity"]
    assert again["summary"] == "Head of Data." and again["version"] == 2
    # both names resolve to the entity: keys and blocking index follow the edit
    for mention in ("Maria González", "Maria Gonzales"):
        resolved = api.post("/v1/entities/resolve", json={"mention_text": mention}).json()
        assert resolved["resolved_entity_id"] == entity["id"], (mention, resolved)


def test_concurrent_writers_one_wins(api: TestClient) -> None:
    entity = _create(api, "Tomasz Wierzbicki")
    codes: list[int] = []

    def write(summary: str) -> None:
        response = api.patch(f"/v1/entities/{entity['id']}",
                             json={"version": entity["version"], "summary": summary})
        codes.append(response.status_code)

    threads = [threading.Thread(target=write, args=(f"writer {i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [200, 409, 409, 409]
    assert api.get(f"/v1/entities/{entity['id']}").json()["entity"]["version"] == 2


def test_bad_updates(api: TestClient) -> None:
    entity = _create(api, "Noor Haddad")
    _problem(api.patch(f"/v1/entities/{entity['id']}", json={"version": 1, "name": "  "}), 422)
    _problem(api.patch(f"/v1/entities/{entity['id']}", json={"version": "1", "summary": "x"}), 422)
    _problem(api.patch("/v1/entities/no-such-id", json={"version": 1, "summary": "x"}), 404)
    _problem(api.patch(f"/v1/entities/{entity['id']}", json={"version": 0, "summary": "x"}), 422)
    _problem(api.patch(f"/v1/entities/{entity['id']}",
                       json={"version": 1, "entity_type": "SPACESHIP"}), 422)
    assert api.get(f"/v1/entities/{entity['id']}").json()["entity"]["version"] == 1


def test_a_patch_with_only_the_version_changes_nothing(api: TestClient) -> None:
    entity = _create(api, "Ilse Brandt")
    same = api.patch(f"/v1/entities/{entity['id']}", json={"version": 1})
    assert same.status_code == 200, same.text
    assert same.json()["entity"]["version"] == 1 and same.headers["etag"] == '"1"'
    assert api.get(f"/v1/entities/{entity['id']}").json()["entity"] == entity
    api.patch(f"/v1/entities/{entity['id']}", json={"version": 1, "summary": "Designer."})
    _problem(api.patch(f"/v1/entities/{entity['id']}", json={"version": 1}), 409)  # still checked
