"""REST routes (design doc 003 shapes). Handlers are sync: FastAPI runs them in a thread pool
(``/v1/graphrag/query`` answers a cache hit on the event loop first)."""

from __future__ import annotations

from typing import Literal

import anyio.to_thread
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field, field_validator

from knotwork.core import Knotwork
from knotwork.domain.models import (
    Citation,
    DriftIteration,
    EntityType,
    EpisodeSource,
    KeyPoint,
    QueryMode,
    QueryResult,
)
from knotwork.resolution.lookup import ResolveResult
from knotwork.retrieval.options import QueryOptions
from knotwork.services.api.deps import KW, Group, Tenant
from knotwork.services.api.query_hits import cached_response
from knotwork.services.api.request_models import (
    NAME,
    TEXT,
    ApiInt,
    ApiRequest,
    ApiTime,
    CommunityLevel,
    DriftIterations,
    LaxEnum,
    TopCommunities,
)

router = APIRouter()




class QueryRequest(ApiRequest):
    query: str = Field(min_length=1, max_length=4000, pattern=TEXT)
    mode: Literal["AUTO", "LOCAL", "GLOBAL", "DRIFT"] = "AUTO"
    max_context_tokens: ApiInt = Field(default=4000, ge=100, le=100_000)
    include_citations: bool = True
    include_context: bool = False
    temperature: float = Field(default=0.1, ge=0.0, le=2.0)
    as_of: ApiTime | None = None
    group_id: str | None = Group
    # GLOBAL (and DRIFT's primer) / DRIFT parameters; ignored by the other modes
    community_level: CommunityLevel | None = None
    top_k_communities: TopCommunities | None = None
    max_iterations: DriftIterations | None = None
    convergence_threshold: float | None = Field(default=None, ge=0.0, le=1.0)

    @field_validator("mode", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    def options(self) -> QueryOptions:
        """What the engine is told: the one object that flows from here to it (issue 20)."""
        return QueryOptions(mode=QueryMode(self.mode.lower()), as_of=self.as_of,
                            max_context_tokens=self.max_context_tokens,
                            community_level=self.community_level,
                            top_k_communities=self.top_k_communities,
                            max_iterations=self.max_iterations,
                            convergence_threshold=self.convergence_threshold)


class QueryResponse(BaseModel):
    answer: str
    citations: list[Citation]
    confidence: float
    mode_used: str
    reasoning_trace: list[str]
    context: str | None = None
    # only when the mode used produced them (GLOBAL: key points; DRIFT: iterations too)
    key_points: list[KeyPoint] | None = None
    iterations: list[DriftIteration] | None = None
    final_coverage: float | None = None


class EpisodeRequest(ApiRequest):
    content: str = Field(min_length=1, max_length=1_000_000)
    source: LaxEnum[EpisodeSource] = EpisodeSource.MESSAGE
    reference_time: ApiTime | None = None
    name: str | None = None
    group_id: str | None = Group

    @field_validator("source", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value


class ResolveRequest(ApiRequest):
    mention_text: str = Field(min_length=1, max_length=500, pattern=NAME)
    context: str = ""
    entity_type_hint: LaxEnum[EntityType] | None = None
    group_id: str | None = Group

    @field_validator("entity_type_hint", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value


@router.get("/healthz")
def healthz(kw: KW) -> dict[str, str]:
    """Ready when every store answers (a store that is down gives 503 with Retry-After)."""
    from knotwork.domain.ports import Collection

    group = kw.settings.group
    kw.runtime.graph.counts(group)
    kw.runtime.documents.counts(group)
    kw.runtime.vectors.count(Collection.ENTITIES, group)
    return {"status": "ok"}


@router.post("/v1/graphrag/query", response_model=QueryResponse)
async def graphrag_query(body: QueryRequest, kw: KW, tenant: Tenant, request: Request) -> Response:
    """A cached answer is read and sent on the event loop (no worker thread); anything else
    is answered in a worker thread, like the other routes."""
    entry = kw.query_cache_key(body.query, tenant, body.options())
    cached = await cached_response(request, entry, (body.include_citations, body.include_context),
                                   lambda result: _query_response(body, result))
    if cached is not None:
        return cached
    return await anyio.to_thread.run_sync(_answer_query, body, kw, tenant)


def _answer_query(body: QueryRequest, kw: Knotwork, tenant: str) -> JSONResponse:
    result = kw.query(body.query, tenant, body.options())
    return _query_response(body, result)


def _query_response(body: QueryRequest, result: QueryResult) -> JSONResponse:
    drift = result.mode_used is QueryMode.DRIFT
    response = QueryResponse(
        answer=result.answer,
        citations=result.citations if body.include_citations else [],
        confidence=result.confidence,
        mode_used=result.mode_used.value.upper(),
        reasoning_trace=result.reasoning_trace,
        context=result.context if body.include_context else None,
        key_points=result.key_points if result.mode_used in (QueryMode.GLOBAL, QueryMode.DRIFT)
        else None,
        iterations=result.iterations if drift else None,
        final_coverage=result.final_coverage if drift else None,
    )
    # Optional keys are left out when unused; a citation's null url/created_at must stay.
    payload = response.model_dump(mode="json")
    for key in ("context", "key_points", "iterations", "final_coverage"):
        if getattr(response, key) is None:
            payload.pop(key, None)
    return JSONResponse(payload)


@router.post("/v1/episodes")
def add_episode(body: EpisodeRequest, kw: KW, tenant: Tenant, request: Request) -> dict[str, object]:
    with request.app.state.write_lock:
        result = kw.add_episode(body.content, group_id=tenant,
                                reference_time=body.reference_time, source=body.source,
                                name=body.name)
    return result.model_dump()


@router.post("/v1/entities/resolve")
def resolve_entity(body: ResolveRequest, kw: KW, tenant: Tenant) -> dict[str, object]:
    result: ResolveResult = kw.resolve_entity(body.mention_text, body.entity_type_hint,
                                              tenant, context=body.context)
    return {
        "resolved_entity_id": result.entity_id,
        "name": result.name,
        "type": result.type,
        "confidence": result.confidence,
        "alternatives": [a.model_dump() for a in result.alternatives],
        "decision": result.decision,  # auto_merge | merge | merge_flagged | new
    }
