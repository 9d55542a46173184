"""Entity, review-queue and merge endpoints through the real app (embedded stack, SQLite).

The review scenario: two existing people, Robert Smith and Robert Smyth (seeded straight into
the stores, as an import would), then an episode says "Bob Smith": ingestion attaches it to
Robert Smith and flags it, Smyth being a close runner-up.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient

from knotwork.domain.ids import stable_id
from knotwork.domain.models import Entity, EntityType
from knotwork.resolution.exact import entity_keys
from knotwork.resolution.normalize import normalize_name
from knotwork.resolution.workflow import EntityWorkflow
from knotwork.services.api.app import create_app
from knotwork.settings import Settings

pytestmark = [pytest.mark.integration]
KEY = "admin-" + secrets.token_hex(8)
ADMIN = {"X-Api-Key": KEY}


def _problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == status and body["detail"]
    return body


def seed_people(kw: Any, group: str, names: list[str]) -> dict[str, str]:
    """Write people straight into graph + blocking keys + vectors (no resolution)."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    people = []
    for name in names:
        key = normalize_name(name)
        eid = stable_id(group, "entity", key)
        people.append(Entity(id=eid, group_id=group, name=name, canonical_name=key,
                             type=EntityType.PERSON, name_keys=entity_keys(key, [], EntityType.PERSON),
                             created_at=now, updated_at=now))
    kw.runtime.graph.ensure_schema(group)
    EntityWorkflow(kw.runtime, group)._write(people)
    return {p.name: p.id for p in people}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> Iterator[TestClient]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("entity_api") / "data",
                        group=f"ent_{secrets.token_hex(4)}", falkordb_url=falkordb_url,
                        embedder="hashing", admin_api_key=KEY)  # type: ignore[arg-type]
    with TestClient(create_app(settings)) as client:
        kw = client.app.state.knotwork  # type: ignore[attr-defined]
        client.people = seed_people(kw, settings.group, ["Robert Smith", "Robert Smyth"])  # type: ignore[attr-defined]
        response = client.post("/v1/episodes", json={
            "content": "Bob Smith approved the Atlas budget on Monday.",
            "reference_time": "2026-02-03T12:00:00Z", "source": "text"})
        assert response.status_code == 200, response.text
        yield client


def test_create_resolves_to_the_existing_entity_and_get_shows_it(api: TestClient) -> None:
    first = api.post("/v1/entities", json={"display_name": "Margaret O'Neill",
                                           "entity_type": "person",
                                           "properties": {"email": "moneill@example.com"}})
    assert first.status_code == 200, first.text
    created = first.json()
    assert created["created"] is True and created["canonical_entity_id"] == created["entity_id"]

    again = api.post("/v1/entities", json={"display_name": "Maggie O'Neill", "entity_type": "PERSON",
                                           "properties": {"department": "Finance"},
                                           "source_chunk_id": "chunk-7"}).json()
    assert again["created"] is False
    assert again["canonical_entity_id"] == created["entity_id"]

    view = api.get(f"/v1/entities/{created['entity_id']}").json()
    entity = view["entity"]
    assert "Maggie O'Neill" in entity["aliases"]
    assert entity["properties"]["email"][0]["value"] == "moneill@example.com"
    assert entity["properties"]["department"][0]["source"] == "chunk-7"

    found = api.post("/v1/entities/search", json={"query": "maggie oneill"}).json()
    assert found["entities"][0]["id"] == created["entity_id"]
    assert found["total_count"] >= 1

    resolved = api.post("/v1/entities/resolve", json={"mention_text": "M. O'Neill",
                                                      "entity_type_hint": "PERSON"}).json()
    assert resolved["resolved_entity_id"] == created["entity_id"]

    # with context, the embedding cosine is a component of every candidate's score
    people = api.people  # type: ignore[attr-defined]
    ctx = api.post("/v1/entities/resolve", json={
        "mention_text": "Robert Smith", "entity_type_hint": "PERSON",
        "context": "Robert Smith approved the Atlas budget"}).json()
    assert ctx["resolved_entity_id"] == people["Robert Smith"]
    assert ctx["decision"] in {"auto_merge", "merge", "merge_flagged"}
    smyth = next(a for a in ctx["alternatives"] if a["entity_id"] == people["Robert Smyth"])
    assert smyth["embedding_score"] is not None and smyth["name_score"] < 1.0


def test_bad_input_is_a_problem(api: TestClient) -> None:
    _problem(api.get("/v1/entities/no-such-id"), 404)
    _problem(api.post("/v1/entities", json={"display_name": "X", "entity_type": "ALIEN"}), 422)
    blank = _problem(api.post("/v1/entities", json={"display_name": "   ", "entity_type": "PERSON"}), 422)
    assert "letter or digit" in blank["detail"]
    _problem(api.post("/v1/entities/search", json={"query": "x", "limit": 1000}), 422)


def test_admin_endpoints_need_the_admin_key(api: TestClient) -> None:
    _problem(api.get("/v1/review"), 401)
    _problem(api.get("/v1/review", headers={"X-Api-Key": "wrong"}), 401)
    assert api.get("/admin").status_code == 401  # the sign-in page
    assert api.get("/v1/review", headers=ADMIN).status_code == 200


def test_flagged_mention_is_queued_and_can_move_to_the_runner_up(api: TestClient) -> None:
    people = api.people  # type: ignore[attr-defined]
    items = api.get("/v1/review", headers=ADMIN).json()["items"]
    [item] = [i for i in items if i["mention"] == "Bob Smith"]
    assert item["decision"] == "merge_flagged"
    assert item["entity_id"] == people["Robert Smith"]
    assert {c["entity_id"] for c in item["candidates"]} == set(people.values())
    assert all(c["name_score"] > 0 for c in item["candidates"])

    smith = api.get(f"/v1/entities/{people['Robert Smith']}").json()
    assert "Bob Smith" in smith["entity"]["aliases"] and smith["mentions_count"] == 1

    moved = api.post(f"/v1/review/{item['id']}/merge", headers=ADMIN,
                     json={"target_id": people["Robert Smyth"]})
    assert moved.status_code == 200, moved.text
    assert moved.json()["status"] == "merged"
    smith = api.get(f"/v1/entities/{people['Robert Smith']}").json()
    smyth = api.get(f"/v1/entities/{people['Robert Smyth']}").json()
    assert "Bob Smith" not in smith["entity"]["aliases"] and smith["mentions_count"] == 0
    assert smyth["mentions_count"] == 1 and "Bob Smith" in smyth["examples"][0]["snippet"]
    _problem(api.post(f"/v1/review/{item['id']}/approve", headers=ADMIN, json={}), 409)

    trail = api.get(f"/v1/entities/{people['Robert Smith']}/audit", headers=ADMIN).json()
    assert [e["action"] for e in trail["entries"]][:2] == ["entity.merge_into",
                                                           "resolution.merge_flagged"]
    trail = api.get(f"/v1/entities/{people['Robert Smyth']}/audit", headers=ADMIN).json()
    assert trail["entries"][0]["action"] == "entity.merge_into"  # both sides record it


def test_merge_and_unmerge_endpoints(api: TestClient) -> None:
    group = f"m_{secrets.token_hex(3)}"
    kw = api.app.state.knotwork  # type: ignore[attr-defined]
    people = seed_people(kw, group, ["Priya Raman", "Priya Ramanathan"])
    a, b = people["Priya Raman"], people["Priya Ramanathan"]
    merged = api.post("/v1/entities/merge", headers=ADMIN,
                      json={"target_id": a, "source_ids": [b], "group_id": group})
    assert merged.status_code == 200, merged.text
    # the merged-away id still answers, with the canonical entity
    assert api.get(f"/v1/entities/{b}", params={"group_id": group}).json()["entity"]["id"] == a
    undone = api.post(f"/v1/merges/{merged.json()['id']}/unmerge", headers=ADMIN,
                      json={"group_id": group})
    assert undone.status_code == 200 and undone.json()["restored"] == [b]
    assert api.get(f"/v1/entities/{b}", params={"group_id": group}).json()["entity"]["id"] == b
    _problem(api.post(f"/v1/merges/{merged.json()['id']}/unmerge", headers=ADMIN,
                      json={"group_id": group}), 409)
    _problem(api.post("/v1/entities/merge", headers=ADMIN,
                      json={"target_id": a, "source_ids": ["nope"], "group_id": group}), 404)
