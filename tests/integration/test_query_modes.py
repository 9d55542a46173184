"""GLOBAL, DRIFT and AUTO over the bundled sample data, through ``Knotwork`` and the REST API.

One app per module (what ``make_settings`` builds, at module scope: SQLite + qdrant-edge in a
temp dir, the session FalkorDB, real spaCy and MiniLM); the sample data is ingested once and
communities are *not* built up front: the first global query builds them on demand.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import knotwork
from knotwork.core import Knotwork
from knotwork.domain.models import QueryMode, QueryResult
from knotwork.retrieval.config import GlobalSearchConfig
from knotwork.services.api.app import create_app
from knotwork.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.models]

SAMPLE_DATA = Path(knotwork.__file__).parent / "sample_data"
RISKS = "What are the main risks across the engineering organization?"
TWO_PARTS = "Who leads Project Atlas and when is the Atlas launch?"
PROBLEM_KEYS = {"type", "title", "status", "detail"}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> Iterator[TestClient]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("modes") / "data",
                        group=f"modes_{secrets.token_hex(4)}",
                        falkordb_url=falkordb_url)  # type: ignore[arg-type]
    with TestClient(create_app(settings)) as client:
        kw = client.app.state.knotwork  # type: ignore[attr-defined]
        kw.ingest_path(SAMPLE_DATA)
        try:
            yield client
        finally:
            kw.runtime.graph.delete_group(settings.group)


@pytest.fixture(scope="module")
def kw(api: TestClient) -> Knotwork:
    instance = api.app.state.knotwork  # type: ignore[attr-defined]
    assert isinstance(instance, Knotwork)
    return instance


@pytest.fixture(scope="module")
def risks(kw: Knotwork) -> QueryResult:
    return kw.query(RISKS, mode="global")


def _sample_source_ids(kw: Knotwork) -> set[str]:
    return {d.source_id for d in kw.runtime.documents.list_documents(kw.settings.group)}


def _assert_real_citations(kw: Knotwork, result: QueryResult) -> None:
    assert result.citations
    sources = _sample_source_ids(kw)
    chunks = {c.id: c for c in kw.runtime.documents.get_chunks([c.chunk_id for c in result.citations])}
    for citation in result.citations:
        assert citation.source_id in sources, citation
        assert citation.chunk_id in chunks, citation
        assert citation.text in chunks[citation.chunk_id].content or citation.text


# --------------------------------------------------------------------------- global


def test_global_builds_communities_on_demand_and_answers_with_cited_key_points(
        kw: Knotwork, risks: QueryResult) -> None:
    assert risks.mode_used is QueryMode.GLOBAL
    assert any("on demand" in line for line in risks.reasoning_trace), risks.reasoning_trace
    assert kw.communities().status().built
    assert risks.communities and risks.community_level == 0
    # the answer's points first, then the rest of the ranked pool
    assert 2 <= len(risks.key_points) <= 8 + GlobalSearchConfig().pool_points
    assert any(line.startswith("key points from") for line in risks.reasoning_trace)
    assert risks.key_points[0].text.rstrip(".") in risks.answer
    assert all(p.chunk_ids for p in risks.key_points)
    assert 0.2 <= risks.confidence <= 1.0
    _assert_real_citations(kw, risks)
    # risk evidence of the corpus: the outage postmortem or the Jenkins decision context
    assert {"393221", "393220"} & {c.source_id for c in risks.citations}
    assert "Communities:" in risks.context and "Key points:" in risks.context


def test_global_level_is_validated_and_an_unrelated_question_abstains(kw: Knotwork,
                                                                      risks: QueryResult) -> None:
    with pytest.raises(ValueError, match="community_level"):
        kw.query(RISKS, mode="global", community_level=7)
    unrelated = kw.query("What is the best recipe for banana bread?", mode="global")
    assert unrelated.mode_used is QueryMode.GLOBAL
    assert unrelated.citations == [] and unrelated.key_points == []
    assert unrelated.confidence < 0.3
    assert any("abstained" in line for line in unrelated.reasoning_trace)


def test_global_without_any_facts_falls_back_to_local_and_says_so(kw: Knotwork) -> None:
    result = kw.query(RISKS, group_id=f"empty_{secrets.token_hex(4)}", mode="global")
    assert result.mode_used is QueryMode.LOCAL
    assert "global search unavailable" in result.reasoning_trace[0]
    assert result.citations == []


# --------------------------------------------------------------------------- DRIFT


def test_drift_answers_every_part_with_iterations_and_coverage(kw: Knotwork,
                                                               risks: QueryResult) -> None:
    result = kw.query(TWO_PARTS, mode="drift")
    assert result.mode_used is QueryMode.DRIFT
    primer, *follow = result.iterations
    assert primer.mode is QueryMode.GLOBAL and primer.query == TWO_PARTS
    assert [step.query for step in follow[:2]] == [
        "Who leads Project Atlas?", "When is the Atlas launch (Project Atlas)?"]
    assert all(step.mode is QueryMode.LOCAL for step in follow)
    assert all(0.0 <= step.coverage <= 1.0 for step in result.iterations)
    assert result.final_coverage == result.iterations[-1].coverage >= 0.9
    assert "Priya Raman" in result.answer and "June 10" in result.answer
    _assert_real_citations(kw, result)


def test_drift_with_no_follow_ups_is_the_primer_alone(kw: Knotwork, risks: QueryResult) -> None:
    result = kw.query(RISKS, mode="drift", max_iterations=0)
    assert [step.mode for step in result.iterations] == [QueryMode.GLOBAL]
    assert result.final_coverage == result.iterations[0].coverage


# --------------------------------------------------------------------------- AUTO


@pytest.mark.parametrize(("question", "mode", "expected"), [
    ("Who leads Project Atlas?", QueryMode.LOCAL, "Priya Raman"),
    (RISKS, QueryMode.GLOBAL, "exceed 30 minutes"),  # a risk the corpus states
])
def test_auto_routes_by_the_question(kw: Knotwork, risks: QueryResult, question: str,
                                     mode: QueryMode, expected: str) -> None:
    result = kw.query(question)
    assert result.mode_used is mode, result.reasoning_trace
    assert result.reasoning_trace[0].startswith(f"auto: {mode.value}")
    assert expected in result.answer


@pytest.mark.parametrize(("question", "mode"), [
    ("Who is the manager of the person who leads Project Atlas?", QueryMode.LOCAL),  # multi-hop
    ("When will Jenkins be shut down?", QueryMode.LOCAL),
    ("What is the capital of Peru?", QueryMode.LOCAL),  # unknown: local search abstains
    ("What decisions were made?", QueryMode.GLOBAL),
    ("Summarize the Billing Service outage", QueryMode.GLOBAL),  # an account of a named thing
    (TWO_PARTS, QueryMode.DRIFT),  # answered end to end in the DRIFT test above
    ("Who leads Project Atlas and the Platform Team?", QueryMode.DRIFT),
])
def test_auto_routing_with_the_graphs_names(kw: Knotwork, question: str, mode: QueryMode) -> None:
    assert kw.engine().route(question).mode is mode


# --------------------------------------------------------------------------- REST


def _post(api: TestClient, path: str, **body: Any) -> dict[str, Any]:
    response = api.post(path, json=body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


def _problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert PROBLEM_KEYS <= set(body) and body["status"] == status
    return body


def test_rest_global_shape(api: TestClient, risks: QueryResult) -> None:
    body = _post(api, "/v1/graphrag/global", query=RISKS, top_k_communities=3, community_level=0)
    assert {"answer", "context", "communities", "key_entities", "key_points", "citations",
            "confidence", "mode_used", "community_level", "reasoning_trace"} <= set(body)
    assert body["mode_used"] == "GLOBAL" and body["community_level"] == 0
    assert 1 <= len(body["communities"]) <= 3
    assert {"id", "name", "level", "summary", "entity_count"} <= set(body["communities"][0])
    assert "entity_ids" not in body["communities"][0]
    assert body["key_entities"] and {"id", "name", "type"} <= set(body["key_entities"][0])
    assert body["key_points"] and {"text", "score", "community_id", "chunk_ids"} <= set(
        body["key_points"][0])


def test_rest_drift_shape(api: TestClient, risks: QueryResult) -> None:
    body = _post(api, "/v1/graphrag/drift", query=TWO_PARTS, max_iterations=2,
                 convergence_threshold=0.5)
    assert {"answer", "iterations", "final_coverage", "citations", "confidence",
            "mode_used"} <= set(body)
    assert body["mode_used"] == "DRIFT"
    assert 1 < len(body["iterations"]) <= 3
    assert {"query", "results", "coverage"} <= set(body["iterations"][0])
    assert body["final_coverage"] == body["iterations"][-1]["coverage"]


def test_rest_local_shape_and_seeds(api: TestClient, kw: Knotwork) -> None:
    body = _post(api, "/v1/graphrag/local", query="Who leads Project Atlas?", max_hops=1)
    assert {"context", "entities", "relationships", "chunks", "answer", "citations"} <= set(body)
    assert "Priya Raman" in body["answer"] and body["mode_used"] == "LOCAL"
    assert body["relationships"] and {"source_id", "target_id", "type", "fact"} <= set(
        body["relationships"][0])
    assert body["chunks"] and {"id", "document_id", "content"} <= set(body["chunks"][0])
    [priya] = [e for e in kw.runtime.graph.list_entities(kw.settings.group)
               if e.name == "Priya Raman"]
    seeded = _post(api, "/v1/graphrag/local", query="Who does she report to?",
                   seed_entity_ids=[priya.id])
    assert priya.id in {e["id"] for e in seeded["entities"]}
    assert "Marcus Webb" in seeded["answer"]
    missing = _problem(api.post("/v1/graphrag/local", json={"query": "x",
                                                            "seed_entity_ids": ["nope"]}), 404)
    assert "nope" in missing["detail"]


def test_rest_query_reports_key_points_and_iterations_of_the_mode_used(api: TestClient,
                                                                       risks: QueryResult) -> None:
    global_ = _post(api, "/v1/graphrag/query", query=RISKS, mode="GLOBAL")
    assert global_["mode_used"] == "GLOBAL" and global_["key_points"]
    assert "iterations" not in global_
    local = _post(api, "/v1/graphrag/query", query="Who leads Project Atlas?")
    assert local["mode_used"] == "LOCAL"
    assert not {"key_points", "iterations", "final_coverage"} & set(local)


@pytest.mark.parametrize(("path", "body", "status", "mentions"), [
    ("/v1/graphrag/global", {"query": "   "}, 422, "blank"),
    ("/v1/graphrag/global", {"query": RISKS, "community_level": 9}, 404, "community_level"),
    ("/v1/graphrag/global", {"query": RISKS, "top_k_communities": 0}, 422, "top_k_communities"),
    ("/v1/graphrag/drift", {"query": RISKS, "max_iterations": 11}, 422, "max_iterations"),
    ("/v1/graphrag/drift", {"query": RISKS, "convergence_threshold": 2}, 422,
     "convergence_threshold"),
    ("/v1/graphrag/local", {"query": "x", "max_hops": 9}, 422, "max_hops"),
    ("/v1/graphrag/local", {"query": "x", "bogus": 1}, 422, "bogus"),
])
def test_rest_bad_input_is_problem_json(api: TestClient, risks: QueryResult, path: str,
                                        body: dict[str, Any], status: int, mentions: str) -> None:
    problem = _problem(api.post(path, json=body), status)
    assert mentions in problem["detail"], problem
