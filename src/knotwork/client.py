"""A Python client of the Knotwork REST API (``knotwork serve``), same operations as the API.

    from knotwork.client import KnotworkClient
    with KnotworkClient("http://127.0.0.1:8000") as kw:
        answer = kw.query("Who leads Project Atlas?")
        print(answer.answer, answer.citations[0].source_id)
        for event in kw.query_stream("What are the main risks?"):
            print(event.event, event.data)
        kw.traverse(["<entity id>"], max_hops=2, direction="OUTGOING")

Responses are typed (pydantic models); a 4xx/5xx problem+json raises :class:`KnotworkAPIError`
with its status, title and detail. ``http`` sends through an existing httpx client (FastAPI's
TestClient in the tests).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any, Literal, Self

import httpx
from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.models import Citation, DriftIteration, KeyPoint


class KnotworkAPIError(RuntimeError):
    def __init__(self, status: int, title: str, detail: str) -> None:
        super().__init__(f"{status} {title}: {detail}")
        self.status = status
        self.title = title
        self.detail = detail


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Answer(_Loose):
    answer: str
    citations: list[Citation] = Field(default_factory=list)
    confidence: float
    mode_used: str
    reasoning_trace: list[str] = Field(default_factory=list)
    context: str | None = None
    key_points: list[KeyPoint] | None = None
    iterations: list[DriftIteration] | None = None
    final_coverage: float | None = None


class ApiEntity(_Loose):
    id: str
    name: str
    type: str
    subtype: str | None = None
    aliases: list[str] = Field(default_factory=list)
    summary: str = ""
    confidence: float = 1.0


class ApiRelationship(_Loose):
    id: str
    source_id: str
    target_id: str
    type: str
    fact: str
    confidence: float
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    episodes: list[str] = Field(default_factory=list)


class ApiPath(_Loose):
    entity_ids: list[str]
    relationship_ids: list[str]
    length: int


class ApiCommunity(_Loose):
    id: str
    level: int
    title: str = ""
    summary: str = ""
    entity_count: int = 0
    parent_id: str | None = None


class LocalAnswer(Answer):
    entities: list[ApiEntity] = Field(default_factory=list)
    relationships: list[ApiRelationship] = Field(default_factory=list)


class Traversal(_Loose):
    entities: list[ApiEntity]
    relationships: list[ApiRelationship]
    paths: list[ApiPath]
    truncated: bool = False


class Subgraph(_Loose):
    entities: list[ApiEntity]
    relationships: list[ApiRelationship]
    communities: list[ApiCommunity] = Field(default_factory=list)


class Paths(_Loose):
    paths: list[ApiPath]
    shortest_path_length: int | None = None


class StreamEvent(_Loose):
    event: str
    data: dict[str, Any]


Mode = Literal["AUTO", "LOCAL", "GLOBAL", "DRIFT"]
Direction = Literal["OUTGOING", "INCOMING", "BOTH"]


def _drop_none(body: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in body.items() if v is not None}


class KnotworkClient:
    def __init__(self, base_url: str = "http://127.0.0.1:8000", *, group_id: str | None = None,
                 timeout: float = 60.0, transport: httpx.BaseTransport | None = None,
                 headers: dict[str, str] | None = None, http: httpx.Client | None = None) -> None:
        """``http``: an existing httpx client to send through (e.g. FastAPI's TestClient);
        it is not closed by :meth:`close`."""
        self._owned = http is None
        self._http = http or httpx.Client(base_url=base_url, timeout=timeout, transport=transport,
                                          headers=headers)
        self._group = group_id

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self._owned:
            self._http.close()

    # ------------------------------------------------------------------ plumbing
    def _post(self, path: str, body: dict[str, Any]) -> Any:
        if self._group and "group_id" not in body:
            body["group_id"] = self._group
        response = self._http.post(path, json=_drop_none(body))
        _raise_for_problem(response)
        return response.json()

    # ------------------------------------------------------------------ GraphRAG
    def query(self, query: str, mode: Mode = "AUTO", *, as_of: datetime | None = None,
              max_context_tokens: int | None = None, include_context: bool = False,
              community_level: int | None = None, top_k_communities: int | None = None,
              max_iterations: int | None = None, convergence_threshold: float | None = None) -> Answer:
        return Answer.model_validate(self._post("/v1/graphrag/query", {
            "query": query, "mode": mode, "as_of": as_of, "max_context_tokens": max_context_tokens,
            "include_context": include_context, "community_level": community_level,
            "top_k_communities": top_k_communities, "max_iterations": max_iterations,
            "convergence_threshold": convergence_threshold}))

    def query_stream(self, query: str, mode: Mode = "AUTO", *,
                     as_of: datetime | None = None) -> Iterator[StreamEvent]:
        """Server-Sent Events of ``/v1/graphrag/query/stream``, each yielded as soon as it
        arrives: ``start``, ``trace``, ``answer`` (``data["delta"]``: the LLM's text as it is
        generated, when an LLM writes the answer), ``answer_reset`` (drop the deltas so far),
        ``citation``, ``done`` (the full answer) or ``error``."""
        body = _drop_none({"query": query, "mode": mode, "as_of": as_of, "group_id": self._group})
        with self._http.stream("POST", "/v1/graphrag/query/stream", json=body) as response:
            if response.status_code >= 400:
                response.read()
                _raise_for_problem(response)
            event, data = "", ""
            for line in response.iter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    data = line[6:]
                elif not line and event:
                    yield StreamEvent(event=event, data=json.loads(data or "{}"))
                    event, data = "", ""
            if event:
                yield StreamEvent(event=event, data=json.loads(data or "{}"))

    def local(self, query: str, *, seed_entity_ids: list[str] | None = None, max_hops: int = 2,
              as_of: datetime | None = None) -> LocalAnswer:
        return LocalAnswer.model_validate(self._post("/v1/graphrag/local", {
            "query": query, "seed_entity_ids": seed_entity_ids or [], "max_hops": max_hops, "as_of": as_of}))

    def global_search(self, query: str, *, community_level: int | None = None,
                      top_k_communities: int = 10) -> Answer:
        return Answer.model_validate(self._post("/v1/graphrag/global", {
            "query": query, "community_level": community_level, "top_k_communities": top_k_communities}))

    def drift(self, query: str, *, max_iterations: int = 3, convergence_threshold: float = 0.9) -> Answer:
        return Answer.model_validate(self._post("/v1/graphrag/drift", {
            "query": query, "max_iterations": max_iterations,
            "convergence_threshold": convergence_threshold}))

    # ------------------------------------------------------------------ graph
    def traverse(self, entity_ids: list[str], *, max_hops: int = 2,
                 relationship_types: list[str] | None = None, direction: Direction = "BOTH",
                 min_confidence: float = 0.0, max_entities: int = 100,
                 as_of: datetime | None = None, include_invalid: bool = False) -> Traversal:
        return Traversal.model_validate(self._post("/v1/graph/traverse", {
            "entity_ids": entity_ids, "max_hops": max_hops, "relationship_types": relationship_types or [],
            "direction": direction, "min_confidence": min_confidence, "max_entities": max_entities,
            "as_of": as_of, "include_invalid": include_invalid}))

    def subgraph(self, entity_ids: list[str], *, include_hops: int = 0,
                 include_communities: bool = False, as_of: datetime | None = None) -> Subgraph:
        return Subgraph.model_validate(self._post("/v1/graph/subgraph", {
            "entity_ids": entity_ids, "include_hops": include_hops,
            "include_communities": include_communities, "as_of": as_of}))

    def paths(self, source_entity_id: str, target_entity_id: str, *, max_length: int = 4,
              relationship_types: list[str] | None = None) -> Paths:
        return Paths.model_validate(self._post("/v1/graph/paths", {
            "source_entity_id": source_entity_id, "target_entity_id": target_entity_id,
            "max_length": max_length, "relationship_types": relationship_types or []}))

    # ------------------------------------------------------------------ writes / entities
    def add_episode(self, content: str, *, source: str = "message",
                    reference_time: datetime | None = None, name: str | None = None) -> dict[str, Any]:
        result: dict[str, Any] = self._post("/v1/episodes", {
            "content": content, "source": source, "reference_time": reference_time, "name": name})
        return result

    def resolve_entity(self, mention_text: str, *, entity_type_hint: str | None = None) -> dict[str, Any]:
        result: dict[str, Any] = self._post("/v1/entities/resolve", {
            "mention_text": mention_text, "entity_type_hint": entity_type_hint})
        return result


def _raise_for_problem(response: httpx.Response) -> None:
    if response.status_code < 400:
        return
    try:
        body = response.json()
        title, detail = str(body.get("title", "")), str(body.get("detail", ""))
    except ValueError:
        title, detail = response.reason_phrase, response.text[:200]
    raise KnotworkAPIError(response.status_code, title, detail)
