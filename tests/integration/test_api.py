"""The REST API through FastAPI's TestClient, lifespan included, on the embedded stack.

One app per module (SQLite + qdrant-edge in a temp dir, the session FalkorDB, real spaCy and
MiniLM) with a few episodes posted once; tests that write use a tenant of their own via
``group_id``, so no test sees another's data.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from knotwork.services.api.app import create_app
from knotwork.settings import Settings
from tests.conftest import SettingsFactory

pytestmark = [pytest.mark.integration, pytest.mark.models]

TURNS = [
    ("Alice Chen(user): Hi, I'm Alice Chen. I work at TechCorp as a senior software engineer.",
     "2026-02-03T12:00:00Z"),
    ("Alice Chen(user): I'm currently leading Project Phoenix, a major cloud migration initiative.",
     "2026-02-03T12:01:00Z"),
    ("Alice Chen(user): The project deadline is February 15th, and we have 3 team members.",
     "2026-02-03T12:02:00Z"),
]
CITATION_KEYS = {"document_id", "source_system", "source_id", "title", "url", "created_at",
                 "chunk_id", "text"}
PROBLEM_KEYS = {"type", "title", "status", "detail"}
DEADLINE = "When is the Project Phoenix deadline?"


def _group() -> str:
    return f"api_{secrets.token_hex(4)}"


def _problem(response: Any, status: int | None = None) -> dict[str, Any]:
    assert 400 <= response.status_code < 500, (response.status_code, response.text)
    if status is not None:
        assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert PROBLEM_KEYS <= set(body), body
    assert body["status"] == response.status_code
    assert isinstance(body["title"], str) and body["title"]
    assert isinstance(body["detail"], str) and body["detail"]
    return body


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> Iterator[TestClient]:
    # What ``make_settings`` builds, at module scope: one app (and one model load) per module.
    settings = Settings(data_dir=tmp_path_factory.mktemp("api") / "data", group=_group(),
                        falkordb_url=falkordb_url)  # type: ignore[arg-type]
    with TestClient(create_app(settings)) as client:
        episodes = []
        for content, when in TURNS:
            response = client.post("/v1/episodes", json={"content": content,
                                                          "reference_time": when})
            assert response.status_code == 200, response.text
            episodes.append(response.json()["episode_ids"])
        client.episodes = episodes  # type: ignore[attr-defined]
        yield client


def _ask(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/v1/graphrag/query", json={"query": DEADLINE, **body})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


# --------------------------------------------------------------------------- health / lifespan


def test_healthz(api: TestClient) -> None:
    response = api.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_the_lifespan_releases_the_stores(make_settings: SettingsFactory) -> None:
    settings = make_settings()
    for _ in range(2):  # the second app only opens if the first one closed every store
        with TestClient(create_app(settings)) as client:
            assert client.get("/healthz").json() == {"status": "ok"}


# --------------------------------------------------------------------------- query


def test_query_with_context_cites_the_episode(api: TestClient) -> None:
    body = _ask(api, include_context=True)
    assert {"answer", "citations", "confidence", "mode_used", "reasoning_trace",
            "context"} <= set(body)
    assert "February 15th" in body["answer"]
    assert "February 15th" in body["context"]
    assert body["mode_used"] == "LOCAL"
    assert 0.3 < body["confidence"] <= 1.0
    assert isinstance(body["reasoning_trace"], list) and body["reasoning_trace"]
    first = body["citations"][0]
    assert CITATION_KEYS <= set(first), first  # a null url is present, not dropped
    assert first["chunk_id"] == api.episodes[2][0]  # type: ignore[attr-defined]
    assert first["source_system"] == "episode"
    assert first["url"] is None
    assert first["created_at"] == "2026-02-03T12:02:00Z"


def test_query_without_context_has_no_context_key(api: TestClient) -> None:
    assert "context" not in _ask(api, include_context=False)
    assert "context" not in _ask(api)  # the default


def test_include_citations_false_returns_no_citations(api: TestClient) -> None:
    body = _ask(api, include_citations=False)
    assert body["citations"] == []
    assert "February 15th" in body["answer"]


@pytest.mark.parametrize(("mode", "used"), [("AUTO", "LOCAL"), ("auto", "LOCAL"),
                                            ("local", "LOCAL"), ("Local", "LOCAL"),
                                            ("GLOBAL", "GLOBAL"), ("drift", "DRIFT")])
def test_mode_is_accepted_in_any_case_and_mode_used_is_reported(api: TestClient, mode: str,
                                                                used: str) -> None:
    body = _ask(api, mode=mode)
    assert body["mode_used"] == used
    assert "February 15th" in body["answer"]
    if used == "GLOBAL":  # communities are built on demand, then mapped
        assert body["key_points"]
    if used == "DRIFT":
        assert body["iterations"] and body["final_coverage"] >= 0.9


def test_as_of_before_any_episode_abstains(api: TestClient) -> None:
    body = _ask(api, as_of="2026-01-01T00:00:00Z")
    assert body["citations"] == []
    assert body["confidence"] < 0.3


def test_group_id_selects_the_tenant(api: TestClient) -> None:
    body = _ask(api, group_id=_group())  # an empty tenant knows nothing
    assert body["citations"] == []
    assert "February 15th" not in body["answer"]


# --------------------------------------------------------------------------- episodes / resolve


def test_post_episode_into_its_own_tenant(api: TestClient) -> None:
    group = _group()
    body = {"content": "Bob Stone works at Globex.", "source": "TEXT",
            "reference_time": "2026-03-01T09:00:00+01:00", "group_id": group}
    first = api.post("/v1/episodes", json=body)
    assert first.status_code == 200, first.text
    added = first.json()
    assert set(added) == {"episode_ids", "entities", "facts", "unchanged"}
    assert len(added["episode_ids"]) == 1 and added["unchanged"] is False

    again = api.post("/v1/episodes", json=body).json()
    assert again["unchanged"] is True and again["episode_ids"] == added["episode_ids"]

    answer = _ask(api, query="Where does Bob Stone work?", group_id=group)
    assert "Globex" in answer["answer"]
    assert answer["citations"][0]["created_at"] == "2026-03-01T08:00:00Z"


def test_resolve_a_mention(api: TestClient) -> None:
    full = api.post("/v1/entities/resolve", json={"mention_text": "Alice Chen"})
    assert full.status_code == 200, full.text
    body = full.json()
    assert {"resolved_entity_id", "name", "confidence", "alternatives"} <= set(body)
    assert body["resolved_entity_id"] and body["name"] == "Alice Chen"
    assert 0.0 < body["confidence"] <= 1.0
    assert isinstance(body["alternatives"], list)

    given = api.post("/v1/entities/resolve",
                     json={"mention_text": "Alice", "entity_type_hint": "person"}).json()
    assert given["resolved_entity_id"] == body["resolved_entity_id"]

    unknown = api.post("/v1/entities/resolve", json={"mention_text": "Zebulon Quarterhorse"})
    assert unknown.status_code == 200
    assert unknown.json()["resolved_entity_id"] is None

    elsewhere = api.post("/v1/entities/resolve",
                         json={"mention_text": "Alice Chen", "group_id": _group()}).json()
    assert elsewhere["resolved_entity_id"] is None


# --------------------------------------------------------------------------- invalid input

INVALID = {
    "unknown mode": ("/v1/graphrag/query", {"query": "x", "mode": "SIDEWAYS"}, 422, "mode"),
    "empty query": ("/v1/graphrag/query", {"query": ""}, 422, "query"),
    "blank query": ("/v1/graphrag/query", {"query": "   "}, 422, "blank"),
    "missing query": ("/v1/graphrag/query", {}, 422, "query"),
    "unknown field": ("/v1/graphrag/query", {"query": "x", "bogus": 1}, 422, "bogus"),
    "bad group_id": ("/v1/graphrag/query", {"query": "x", "group_id": "no spaces!"}, 422,
                     "group_id"),
    "bad as_of": ("/v1/graphrag/query", {"query": "x", "as_of": "last tuesday"}, 422, "as_of"),
    "tiny budget": ("/v1/graphrag/query", {"query": "x", "max_context_tokens": 5}, 422,
                    "max_context_tokens"),
    "episode source": ("/v1/episodes", {"content": "x", "source": "fax"}, 422, "source"),
    "episode time": ("/v1/episodes", {"content": "x", "reference_time": "soon"}, 422,
                     "reference_time"),
    "episode json": ("/v1/episodes", {"content": "{not json", "source": "json"}, 400, "JSON"),
    "episode group": ("/v1/episodes", {"content": "x", "group_id": "../etc"}, 422, "group_id"),
    "resolve empty": ("/v1/entities/resolve", {"mention_text": ""}, 422, "mention_text"),
    "resolve type": ("/v1/entities/resolve", {"mention_text": "x", "entity_type_hint": "ALIEN"},
                     422, "entity_type_hint"),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_invalid_input_is_a_problem_json_and_stores_nothing(api: TestClient, case: str) -> None:
    path, body, status, mentions = INVALID[case]
    kw = api.app.state.knotwork  # type: ignore[attr-defined]
    before = kw.export_graph()
    problem = _problem(api.post(path, json=body), status)
    assert mentions.lower() in problem["detail"].lower(), problem
    assert kw.export_graph() == before


def test_a_body_that_is_not_json_is_a_problem(api: TestClient) -> None:
    response = api.post("/v1/graphrag/query", content=b"{not json",
                        headers={"content-type": "application/json"})
    _problem(response, 422)


def test_unknown_route_and_wrong_method_are_problems(api: TestClient) -> None:
    _problem(api.get("/v1/nope"), 404)
    _problem(api.get("/v1/graphrag/query"), 405)
