"""LLM-written answers on real stores: the SSE endpoint streams the LLM's text as it is
generated (real llama.cpp server with SmolLM2; a gated fake over a real uvicorn server proves
each delta leaves before the next is written), the JSON endpoint returns the whole LLM
answer, and counts / abstentions stay extractive."""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient

from knotwork.core import Knotwork
from knotwork.domain.models import RawDocument, SourceSystem
from knotwork.domain.ports import ChatMessage
from knotwork.infra.llm.fake import FakeLLMClient, FakeStream
from knotwork.infra.llm.local_server import free_port
from knotwork.infra.llm.openai_compat import OpenAICompatClient
from knotwork.retrieval.local import NO_ANSWER
from knotwork.services.api.app import create_app
from knotwork.settings import EmbedderBackend, Settings

pytestmark = [pytest.mark.integration, pytest.mark.models]

PAGE = (
    "# Architecture decision log\n\n"
    "ADR-014 (2024-02-02): Lighthouse moves from Redshift to Snowflake. Decided by Hannah "
    "Bjork and approved by Marguerite Okafor. Redshift costs had doubled in a year.\n\n"
    "ADR-021 (2024-10-01): the Warehouse team adopts Dagster instead of Airflow for "
    "orchestration. Luis Ortega leads the migration."
)
QUESTION = "Who leads the Dagster migration?"


@pytest.fixture(scope="module")
def kw(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> Iterator[Knotwork]:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("llm_answers"),
        group=f"ans_{secrets.token_hex(4)}",
        falkordb_url=falkordb_url,
        embedder=EmbedderBackend.HASHING,
        llm_answer_max_tokens=48,
    )
    when = datetime(2024, 11, 1, tzinfo=UTC)
    with Knotwork(settings) as instance:
        instance.ingest_documents(
            [
                RawDocument(  # no LLM while ingesting
                    source_system=SourceSystem.FILE,
                    source_id="adr.md",
                    title="Architecture decision log",
                    content=PAGE,
                    created_at=when,
                    modified_at=when,
                )
            ]
        )
        try:
            yield instance
        finally:
            instance.runtime._llm, instance.runtime._llm_built = None, False
            instance.runtime.graph.delete_group(settings.group)


def _use(kw: Knotwork, llm: object) -> None:
    kw.runtime._llm, kw.runtime._llm_built = llm, True  # as if KNOTWORK_LLM_BASE_URL were set


def _events(text: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def test_sse_streams_the_real_llm_answer(kw: Knotwork, llama_base_url: str) -> None:
    _use(kw, None)
    extractive = kw.query(QUESTION, mode="local")
    assert "Luis Ortega" in extractive.answer and extractive.citations
    llm = OpenAICompatClient(llama_base_url, model="smollm2", timeout_s=180.0, max_retries=1)
    _use(kw, llm)
    try:
        with TestClient(create_app(kw.settings, knotwork=kw)) as client:
            body = {"query": QUESTION, "mode": "LOCAL", "group_id": kw.settings.group}
            response = client.post("/v1/graphrag/query/stream", json=body)
            plain = client.post("/v1/graphrag/query", json=body).json()
    finally:
        _use(kw, None)
        llm.close()
    assert response.status_code == 200, response.text
    events = _events(response.text)
    names = [e for e, _ in events]
    deltas = [d["delta"] for e, d in events if e == "answer"]
    assert names[0] == "start" and names[-1] == "done" and "answer_reset" not in names
    assert len(deltas) > 1  # token deltas, not one finished answer
    done = events[-1][1]
    assert "".join(deltas) == done["answer"] and done["answer"] != extractive.answer
    assert "answer written by the LLM" in done["reasoning_trace"][-1]
    assert [d["step"] for e, d in events if e == "trace"] == done["reasoning_trace"]
    assert names.index("citation") > max(i for i, n in enumerate(names) if n == "answer")
    assert len(done["citations"]) == len(extractive.citations)
    assert "answer written by the LLM" in plain["reasoning_trace"][-1]
    assert plain["answer"] == done["answer"]  # greedy decoding: the same text, in one piece
    assert llm.stats.calls == 2 and llm.stats.failures == 0 and llm.stats.completion_tokens > 0


class GatedLLM(FakeLLMClient):
    """Holds the second delta until the test's HTTP client has received the first."""

    def __init__(self, deltas: Sequence[str]) -> None:
        super().__init__([FakeStream(tuple(deltas))])
        self.gate = threading.Event()
        self.opened_in_time: bool | None = None

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        name: str = "",
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Iterator[str]:
        for i, delta in enumerate(
            super().stream(messages, name=name, max_tokens=max_tokens, temperature=temperature)
        ):
            if i == 1:
                self.opened_in_time = self.gate.wait(timeout=20)
            yield delta


def test_python_client_receives_each_delta_before_the_next_is_written(kw: Knotwork) -> None:
    import uvicorn

    from knotwork.client import KnotworkClient

    llm = GatedLLM(["Luis Ortega ", "leads the Dagster migration [1]", " [8]."])
    _use(kw, llm)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(kw.settings, knotwork=kw), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.started
        received: list[tuple[str, dict[str, Any]]] = []
        with KnotworkClient(f"http://127.0.0.1:{port}", group_id=kw.settings.group) as client:
            for event in client.query_stream(QUESTION, mode="LOCAL"):
                received.append((event.event, event.data))
                if event.event == "answer":
                    llm.gate.set()
    finally:
        _use(kw, None)
        server.should_exit = True
        thread.join(timeout=30)
    assert llm.opened_in_time is True  # the first delta reached the client mid-answer
    deltas = [d["delta"] for e, d in received if e == "answer"]
    assert deltas == ["Luis Ortega", " leads the Dagster migration [1]", "."]  # [8] invented
    done = received[-1]
    assert done[0] == "done" and done[1]["answer"] == "Luis Ortega leads the Dagster migration [1]."


def test_json_endpoint_answers_with_the_llm_and_abstentions_skip_it(kw: Knotwork) -> None:
    llm = FakeLLMClient(["Luis Ortega leads it [1]."])
    _use(kw, llm)
    try:
        with TestClient(create_app(kw.settings, knotwork=kw)) as client:
            body = {"query": QUESTION, "mode": "LOCAL", "group_id": kw.settings.group}
            answer = client.post("/v1/graphrag/query", json=body).json()
            unknown = client.post(
                "/v1/graphrag/query",
                json={**body, "query": "What is the budget of the Quantum Llama programme?"},
            ).json()
    finally:
        _use(kw, None)
    assert answer["answer"] == "Luis Ortega leads it [1]." and answer["citations"]
    assert unknown["answer"] != answer["answer"] and not unknown["citations"]
    assert unknown["answer"].startswith(("I found nothing", NO_ANSWER[:20]))
    assert len(llm.calls) == 1  # the abstention never reached the LLM


# --------------------------------------------------------------------------- every route
# Each way of asking (REST query / local / global / drift through the typed client, the
# Python API, the MCP tool) answers through Knotwork.query: with an LLM configured the LLM
# writes the answer; when it fails the extractive answer is kept.
WRITTEN = "Luis Ortega leads the Dagster migration [1]."
DECISIONS = "What did the architecture decisions change in orchestration and warehousing?"
TWO_PARTS = "Who leads the Dagster migration and who approved the Snowflake move?"


def _ask_query(client: Any, mcp: Any, kw: Knotwork) -> tuple[str, list[str]]:
    answer = client.query(QUESTION, mode="LOCAL")
    return answer.answer, answer.reasoning_trace


def _ask_local(client: Any, mcp: Any, kw: Knotwork) -> tuple[str, list[str]]:
    answer = client.local(QUESTION, max_hops=1)
    assert answer.entities and answer.relationships  # the local shape is kept
    return answer.answer, answer.reasoning_trace


def _ask_seeded_local(client: Any, mcp: Any, kw: Knotwork) -> tuple[str, list[str]]:
    [luis] = [e for e in kw.runtime.graph.list_entities(kw.settings.group)
              if e.name.startswith("Luis Ortega")]
    answer = client.local("Which migration does he lead?", seed_entity_ids=[luis.id])
    return answer.answer, answer.reasoning_trace


def _ask_global(client: Any, mcp: Any, kw: Knotwork) -> tuple[str, list[str]]:
    answer = client.global_search(DECISIONS, community_level=0)
    assert answer.mode_used == "GLOBAL" and answer.key_points is not None
    return answer.answer, answer.reasoning_trace


def _ask_drift(client: Any, mcp: Any, kw: Knotwork) -> tuple[str, list[str]]:
    answer = client.drift(TWO_PARTS, max_iterations=1)
    assert answer.mode_used == "DRIFT" and answer.iterations
    return answer.answer, answer.reasoning_trace


def _ask_python(client: Any, mcp: Any, kw: Knotwork) -> tuple[str, list[str]]:
    result = kw.query(QUESTION, mode="local")
    return result.answer, result.reasoning_trace


def _ask_mcp(client: Any, mcp: Any, kw: Knotwork) -> tuple[str, list[str]]:
    import anyio
    from mcp import Client

    async def call() -> dict[str, Any]:  # the SDK's client, connected in-process
        async with Client(mcp.server) as session:
            result = await session.call_tool("query", {"query": QUESTION, "mode": "local"})
        assert result.is_error is False, result.content
        data: dict[str, Any] = result.structured_content
        return data

    out = anyio.run(call)
    return out["answer"], out["reasoning_trace"]


ROUTES = {"rest-query": _ask_query, "rest-local": _ask_local, "rest-local-seeded": _ask_seeded_local,
          "rest-global": _ask_global, "rest-drift": _ask_drift, "python": _ask_python, "mcp": _ask_mcp}


@pytest.fixture(scope="module")
def with_communities(kw: Knotwork) -> Knotwork:
    _use(kw, None)  # summaries stay extractive: the LLM below only ever writes answers
    if not kw.communities().status().built:
        kw.build_communities()
    return kw


@pytest.mark.parametrize("route", list(ROUTES))
def test_every_query_route_has_the_llm_write_the_answer_and_falls_back(
        with_communities: Knotwork, route: str) -> None:
    from knotwork.client import KnotworkClient
    from knotwork.domain.ports import LLMError
    from knotwork.services.mcp_server import KnotworkMcp

    kw, ask = with_communities, ROUTES[route]

    def run(llm: object) -> tuple[str, list[str]]:
        _use(kw, llm)
        try:
            with TestClient(create_app(kw.settings, knotwork=kw)) as http:
                client = KnotworkClient(http=http, group_id=kw.settings.group)
                return ask(client, KnotworkMcp(kw), kw)
        finally:
            _use(kw, None)

    extractive, trace = run(None)
    assert extractive != WRITTEN and not any("LLM" in step for step in trace)
    assert NO_ANSWER not in extractive  # supported: an answer the LLM may write
    writer = FakeLLMClient(responder=lambda call: WRITTEN)
    written, trace = run(writer)
    assert written == WRITTEN, (route, trace)
    assert "answer written by the LLM" in trace[-1]
    assert [c.name.split("/")[0] for c in writer.calls] == ["answer_question"]
    failing = FakeLLMClient(responder=lambda call: FakeStream(("Luis ",), error=LLMError("HTTP 503")))
    kept, trace = run(failing)
    assert kept == extractive and "LLM answer failed (LLMError: HTTP 503)" in trace[-1]
    assert failing.stats.failures == 1
