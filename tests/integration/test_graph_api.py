"""/v1/graph/traverse, /subgraph and /paths over the embedded stack (session FalkorDB,
qdrant-edge, SQLite). The graph is written through the GraphStore port, so no models load."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient

from knotwork.domain.models import Entity, EntityType, Fact, RelationType
from knotwork.services.api.app import create_app
from knotwork.settings import Settings

pytestmark = [pytest.mark.integration]

NOW = datetime(2025, 3, 1, tzinfo=UTC)
PEOPLE = ["ana", "ben", "cho", "dev"]  # ana -> ben -> cho -> dev (REPORTS_TO)


def _entity(group: str, eid: str, kind: EntityType = EntityType.PERSON) -> Entity:
    return Entity(id=eid, group_id=group, name=eid.title(), canonical_name=eid, type=kind,
                  name_keys=[eid], created_at=NOW, updated_at=NOW)


def _fact(group: str, fid: str, src: str, dst: str, rel: RelationType, *, conf: float = 0.9,
          valid: datetime | None = None, invalid: datetime | None = None) -> Fact:
    return Fact(id=fid, group_id=group, source_id=src, target_id=dst, type=rel,
                fact=f"{src} {rel.value} {dst}", confidence=conf, episodes=["ep1"],
                valid_at=valid, invalid_at=invalid, created_at=NOW)


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> Iterator[tuple[TestClient, str]]:
    group = f"graph_{secrets.token_hex(4)}"
    settings = Settings(data_dir=tmp_path_factory.mktemp("graphapi") / "data", group=group,
                        falkordb_url=falkordb_url, embedder="hashing")  # type: ignore[arg-type]
    with TestClient(create_app(settings)) as client:
        graph = client.app.state.knotwork.runtime.graph  # type: ignore[attr-defined]
        graph.ensure_schema(group)
        graph.upsert_entities([*(_entity(group, p) for p in PEOPLE),
                               _entity(group, "core", EntityType.ORGANIZATION),
                               _entity(group, "old", EntityType.ORGANIZATION),
                               _entity(group, "island")])
        graph.upsert_facts([
            _fact(group, "f1", "ana", "ben", RelationType.REPORTS_TO),
            _fact(group, "f2", "ben", "cho", RelationType.REPORTS_TO),
            _fact(group, "f3", "cho", "dev", RelationType.REPORTS_TO),
            _fact(group, "f4", "ana", "core", RelationType.MEMBER_OF, valid=datetime(2025, 1, 1, tzinfo=UTC)),
            _fact(group, "f5", "ana", "old", RelationType.MEMBER_OF, valid=datetime(2024, 1, 1, tzinfo=UTC),
                  invalid=datetime(2025, 1, 1, tzinfo=UTC)),
            _fact(group, "f6", "dev", "core", RelationType.MEMBER_OF, conf=0.3),
        ])
        yield client, group
        graph.delete_group(group)


def _problem(response: Any, status: int) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["status"] == status and response.json()["detail"]


def test_traverse_hops_direction_and_filters(api: tuple[TestClient, str]) -> None:
    client, group = api
    out = client.post("/v1/graph/traverse", json={"entity_ids": ["ana"], "max_hops": 2,
                                                  "direction": "OUTGOING", "group_id": group})
    assert out.status_code == 200, out.text
    body = out.json()
    assert [e["id"] for e in body["entities"]] == ["ana", "ben", "core", "cho"]
    assert {r["id"] for r in body["relationships"]} == {"f1", "f2", "f4"}
    by_target = {p["entity_ids"][-1]: p for p in body["paths"]}
    assert by_target["cho"] == {"entity_ids": ["ana", "ben", "cho"], "relationship_ids": ["f1", "f2"], "length": 2}

    typed = client.post("/v1/graph/traverse", json={
        "entity_ids": ["dev"], "max_hops": 3, "direction": "INCOMING",
        "relationship_types": ["REPORTS_TO"], "group_id": group}).json()
    assert [e["id"] for e in typed["entities"]] == ["dev", "cho", "ben", "ana"]

    confident = client.post("/v1/graph/traverse", json={
        "entity_ids": ["core"], "max_hops": 1, "min_confidence": 0.5, "group_id": group}).json()
    assert [e["id"] for e in confident["entities"]] == ["core", "ana"]  # f6 (0.3) not walked

    capped = client.post("/v1/graph/traverse", json={"entity_ids": ["ana"], "max_hops": 4,
                                                     "max_entities": 3, "group_id": group}).json()
    assert len(capped["entities"]) == 3 and capped["truncated"] is True


def test_traverse_temporal_filters(api: tuple[TestClient, str]) -> None:
    client, group = api
    def orgs(**extra: Any) -> set[str]:
        body = client.post("/v1/graph/traverse", json={"entity_ids": ["ana"], "max_hops": 1,
                                                       "relationship_types": ["MEMBER_OF"],
                                                       "group_id": group, **extra}).json()
        return {e["id"] for e in body["entities"]} - {"ana"}
    assert orgs() == {"core"}
    assert orgs(include_invalid=True) == {"core", "old"}
    assert orgs(as_of="2024-06-01T00:00:00Z") == {"old"}


def test_subgraph_and_paths(api: tuple[TestClient, str]) -> None:
    client, group = api
    sub = client.post("/v1/graph/subgraph", json={"entity_ids": ["ben", "cho"], "group_id": group}).json()
    assert {e["id"] for e in sub["entities"]} == {"ben", "cho"}
    assert [r["id"] for r in sub["relationships"]] == ["f2"] and sub["communities"] == []
    wider = client.post("/v1/graph/subgraph", json={"entity_ids": ["ben"], "include_hops": 1,
                                                    "group_id": group}).json()
    assert {e["id"] for e in wider["entities"]} == {"ana", "ben", "cho"}
    assert {r["id"] for r in wider["relationships"]} == {"f1", "f2"}

    paths = client.post("/v1/graph/paths", json={"source_entity_id": "ana", "target_entity_id": "dev",
                                                 "group_id": group}).json()
    assert paths["shortest_path_length"] == 2  # ana -> core <- dev beats the 3-hop chain
    assert paths["paths"] == [{"entity_ids": ["ana", "core", "dev"], "relationship_ids": ["f4", "f6"], "length": 2}]
    chain = client.post("/v1/graph/paths", json={"source_entity_id": "ana", "target_entity_id": "dev",
                                                 "relationship_types": ["REPORTS_TO"], "group_id": group}).json()
    assert chain["shortest_path_length"] == 3 and chain["paths"][0]["relationship_ids"] == ["f1", "f2", "f3"]
    short = client.post("/v1/graph/paths", json={"source_entity_id": "ana", "target_entity_id": "dev",
                                                 "relationship_types": ["REPORTS_TO"], "max_length": 2,
                                                 "group_id": group}).json()
    assert short == {"paths": [], "shortest_path_length": None}
    none = client.post("/v1/graph/paths", json={"source_entity_id": "ana", "target_entity_id": "island",
                                                "group_id": group}).json()
    assert none["paths"] == []


def test_graph_errors_are_problems(api: tuple[TestClient, str]) -> None:
    client, group = api
    _problem(client.post("/v1/graph/traverse", json={"entity_ids": ["nobody"], "group_id": group}), 404)
    _problem(client.post("/v1/graph/paths", json={"source_entity_id": "ana", "target_entity_id": "zed",
                                                  "group_id": group}), 404)
    _problem(client.post("/v1/graph/traverse", json={"entity_ids": [], "group_id": group}), 422)
    _problem(client.post("/v1/graph/traverse", json={"entity_ids": ["ana"], "max_hops": 9}), 422)
    _problem(client.post("/v1/graph/traverse", json={"entity_ids": ["ana"],
                                                     "relationship_types": ["LIKES"]}), 422)
    _problem(client.post("/v1/graph/subgraph", json={"entity_ids": ["ana"], "bogus": 1}), 422)
    spec = client.get("/openapi.json").json()
    for path in ("/v1/graph/traverse", "/v1/graph/subgraph", "/v1/graph/paths"):
        op = spec["paths"][path]["post"]
        assert {"200", "404", "422"} <= set(op["responses"]), path


def _events(text: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def test_query_stream_sends_answer_events(api: tuple[TestClient, str]) -> None:
    client, group = api
    response = client.post("/v1/graphrag/query/stream",
                           json={"query": "Who does Ana report to?", "mode": "LOCAL", "group_id": group})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    events = _events(response.text)
    names = [e for e, _ in events]
    assert names[0] == "start" and names[-1] == "done" and "answer" in names and "trace" in names
    done = events[-1][1]
    assert "".join(d["delta"] for e, d in events if e == "answer") == done["answer"]
    assert "ben" in done["answer"].lower() and done["mode_used"] == "LOCAL"
    assert [d["step"] for e, d in events if e == "trace"] == done["reasoning_trace"]
    _problem(client.post("/v1/graphrag/query/stream", json={"query": "   ", "group_id": group}), 422)
    _problem(client.post("/v1/graphrag/query/stream", json={"query": "x", "mode": "FAST"}), 422)
    spec = client.get("/openapi.json").json()
    assert "text/event-stream" in spec["paths"]["/v1/graphrag/query/stream"]["post"]["responses"]["200"]["content"]


def test_python_client_same_operations(api: tuple[TestClient, str]) -> None:
    from knotwork.client import KnotworkAPIError, KnotworkClient

    client, group = api
    with KnotworkClient(group_id=group, http=client) as kw:
        walk = kw.traverse(["ana"], max_hops=1, direction="OUTGOING")
        assert {e.id for e in walk.entities} == {"ana", "ben", "core"}
        assert kw.paths("ana", "cho", relationship_types=["REPORTS_TO"]).shortest_path_length == 2
        assert [r.id for r in kw.subgraph(["ben", "cho"]).relationships] == ["f2"]
        answer = kw.query("Who does Ana report to?", mode="LOCAL")
        assert "ben" in answer.answer.lower() and answer.mode_used == "LOCAL"
        events = list(kw.query_stream("Who does Ana report to?", mode="LOCAL"))
        assert events[0].event == "start" and events[-1].event == "done"
        assert events[-1].data["answer"] == answer.answer
        with pytest.raises(KnotworkAPIError) as err:
            kw.traverse(["nobody"])
        assert err.value.status == 404 and "nobody" in err.value.detail
        with pytest.raises(KnotworkAPIError) as err:
            list(kw.query_stream("   "))
        assert err.value.status == 422
