"""REST routes of the GraphRAG search modes (design doc 003): local, global and DRIFT.

``POST /v1/graphrag/query`` (any mode, AUTO routing) lives in :mod:`.routes`; these expose
each mode with its own parameters and response shape. All answer through ``Knotwork.query``
(one code path: the query cache, and the LLM writing the answer when one is configured).
Bad input is problem+json: 422 for a malformed body, 400 for a blank query or an
out-of-range level, 404 for unknown seed entities.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from knotwork.domain.models import (
    Chunk,
    Citation,
    Community,
    DriftIteration,
    Entity,
    Fact,
    KeyPoint,
    QueryMode,
    QueryResult,
)
from knotwork.retrieval.options import QueryOptions
from knotwork.services.api.deps import KW, Group, Tenant
from knotwork.services.api.request_models import (
    TEXT,
    ApiInt,
    ApiRequest,
    ApiTime,
    CommunityLevel,
    DriftIterations,
    TopCommunities,
)

router = APIRouter()
MAX_CHUNKS = 12




class _Request(ApiRequest):
    query: str = Field(min_length=1, max_length=4000, pattern=TEXT)
    max_context_tokens: ApiInt = Field(default=4000, ge=100, le=100_000)
    as_of: ApiTime | None = None
    group_id: str | None = Group

    def question(self) -> str:
        if not self.query.strip():
            raise ValueError("the question is empty")
        return self.query.strip()

    def options(self) -> QueryOptions:
        """What the engine is told (issue 20: one object from the route to the engine)."""
        return QueryOptions(as_of=self.as_of, max_context_tokens=self.max_context_tokens)


class LocalRequest(_Request):
    seed_entity_ids: list[str] = Field(default_factory=list, max_length=100)
    max_hops: ApiInt = Field(default=2, ge=1, le=4)

    def options(self) -> QueryOptions:
        return super().options().with_fields(
            mode=QueryMode.LOCAL, seed_entity_ids=tuple(dict.fromkeys(self.seed_entity_ids)),
            max_hops=self.max_hops)


class GlobalRequest(_Request):
    community_level: CommunityLevel | None = None
    top_k_communities: TopCommunities = 10

    def options(self) -> QueryOptions:
        return super().options().with_fields(mode=QueryMode.GLOBAL,
                                             community_level=self.community_level,
                                             top_k_communities=self.top_k_communities)


class DriftRequest(_Request):
    max_iterations: DriftIterations = 3
    convergence_threshold: float = Field(default=0.9, ge=0.0, le=1.0)

    def options(self) -> QueryOptions:
        return super().options().with_fields(mode=QueryMode.DRIFT,
                                             max_iterations=self.max_iterations,
                                             convergence_threshold=self.convergence_threshold)


class ApiEntity(BaseModel):
    id: str
    name: str
    type: str
    subtype: str | None = None
    aliases: list[str]
    summary: str
    confidence: float


class ApiRelationship(BaseModel):
    id: str
    source_id: str
    target_id: str
    type: str
    fact: str
    confidence: float
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    episodes: list[str]


class ApiChunk(BaseModel):
    id: str
    document_id: str
    index: int
    content: str
    token_count: int


class _Answer(BaseModel):
    answer: str
    citations: list[Citation]
    confidence: float
    mode_used: str
    reasoning_trace: list[str]


class LocalResponse(_Answer):
    context: str
    entities: list[ApiEntity]
    relationships: list[ApiRelationship]
    chunks: list[ApiChunk]


class GlobalResponse(_Answer):
    context: str
    communities: list[dict[str, Any]]  # Community without its member list
    key_entities: list[ApiEntity]
    key_points: list[KeyPoint]
    community_level: int | None


class DriftResponse(_Answer):
    iterations: list[DriftIteration]
    final_coverage: float
    key_points: list[KeyPoint]


def _entity(e: Entity) -> ApiEntity:
    return ApiEntity(id=e.id, name=e.name, type=e.type.value, subtype=e.subtype, aliases=e.aliases,
                     summary=e.summary, confidence=e.confidence)


def _relationship(f: Fact) -> ApiRelationship:
    return ApiRelationship(id=f.id, source_id=f.source_id, target_id=f.target_id, type=f.type.value,
                           fact=f.fact, confidence=f.confidence, valid_at=f.valid_at,
                           invalid_at=f.invalid_at, episodes=f.episodes)


def _chunk(c: Chunk) -> ApiChunk:
    return ApiChunk(id=c.id, document_id=c.document_id, index=c.index, content=c.content,
                    token_count=c.token_count)


def _community(c: Community) -> dict[str, Any]:
    return c.model_dump(mode="json", exclude={"entity_ids"})


def _answer(result: QueryResult) -> dict[str, Any]:
    return {"answer": result.answer, "citations": result.citations,
            "confidence": result.confidence, "mode_used": result.mode_used.value.upper(),
            "reasoning_trace": result.reasoning_trace}


@router.post("/v1/graphrag/local", response_model=LocalResponse)
def graphrag_local(body: LocalRequest, kw: KW, tenant: Tenant) -> JSONResponse:
    """Entity-centric search: seeds (found, or given), k-hop facts, ranked context."""
    question = body.question()
    group, options = tenant, body.options()
    seeds = list(options.seed_entity_ids)
    if seeds:
        known = {e.id for e in kw.runtime.graph.get_entities(group, seeds)}
        missing = [s for s in seeds if s not in known]
        if missing:
            raise HTTPException(404, f"unknown seed entity ids: {', '.join(missing[:5])}")
    result = kw.query(question, group, options)
    chunk_ids = list(dict.fromkeys([c.chunk_id for c in result.citations]
                                   + [e for f in result.facts[:MAX_CHUNKS] for e in f.episodes[-1:]]))
    chunks = kw.runtime.documents.get_chunks(chunk_ids[:MAX_CHUNKS])
    response = LocalResponse(
        **_answer(result), context=result.context,
        entities=[_entity(e) for e in result.entities],
        relationships=[_relationship(f) for f in result.facts],
        chunks=[_chunk(c) for c in chunks])
    return JSONResponse(response.model_dump(mode="json"))


@router.post("/v1/graphrag/global", response_model=GlobalResponse)
def graphrag_global(body: GlobalRequest, kw: KW, tenant: Tenant) -> JSONResponse:
    """Community-based search: map over the reports at a level, reduce into key points."""
    result = kw.query(body.question(), tenant, body.options())
    response = GlobalResponse(
        **_answer(result), context=result.context,
        communities=[_community(c) for c in result.communities],
        key_entities=[_entity(e) for e in result.entities] if result.communities else [],
        key_points=result.key_points, community_level=result.community_level)
    return JSONResponse(response.model_dump(mode="json"))


@router.post("/v1/graphrag/drift", response_model=DriftResponse)
def graphrag_drift(body: DriftRequest, kw: KW, tenant: Tenant) -> JSONResponse:
    """Iterative search: a global primer, then local follow-ups until the question is covered."""
    result = kw.query(body.question(), tenant, body.options())
    response = DriftResponse(
        **_answer(result), iterations=result.iterations,
        final_coverage=result.final_coverage or 0.0, key_points=result.key_points)
    return JSONResponse(response.model_dump(mode="json"))
