"""Graph REST routes (design doc 003, "Graph APIs"): traverse, subgraph, paths.

Bad input is problem+json: 422 for a malformed body or an unknown relationship type, 404 when
an entity id is unknown in the tenant. Subgraphs are cached when a cache is configured.
"""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, HTTPException
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from knotwork.domain.models import RelationType
from knotwork.domain.ports import CacheLayer
from knotwork.domain.timeutil import ensure_utc
from knotwork.retrieval.graph_ops import Direction, EdgeFilter, GraphOps, GraphPath, UnknownEntities
from knotwork.services.api.deps import KW, Group, Tenant
from knotwork.services.api.graphrag_routes import ApiEntity, ApiRelationship, _entity, _relationship
from knotwork.services.api.request_models import ApiInt, ApiRequest, ApiTime, LaxEnum

router = APIRouter(tags=["graph"])
_ID = Field(min_length=1, max_length=128)


class _GraphRequest(ApiRequest):
    group_id: str | None = Group
    as_of: ApiTime | None = Field(default=None, description="only facts valid at this time")
    include_invalid: bool = Field(default=False, description="also walk invalidated facts")

    def when(self) -> datetime | None:
        return ensure_utc(self.as_of) if self.as_of else None


class TraverseRequest(_GraphRequest):
    entity_ids: list[str] = Field(min_length=1, max_length=100)
    max_hops: ApiInt = Field(default=2, ge=1, le=4)
    relationship_types: list[LaxEnum[RelationType]] = Field(default_factory=list)
    direction: LaxEnum[Direction] = Direction.BOTH
    min_confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    max_entities: ApiInt = Field(default=100, ge=1, le=1000)


class SubgraphRequest(_GraphRequest):
    entity_ids: list[str] = Field(min_length=1, max_length=200)
    include_hops: ApiInt = Field(default=0, ge=0, le=3)
    include_communities: bool = False


class PathsRequest(_GraphRequest):
    source_entity_id: str = _ID
    target_entity_id: str = _ID
    max_length: ApiInt = Field(default=4, ge=1, le=6)
    relationship_types: list[LaxEnum[RelationType]] = Field(default_factory=list)


class ApiPath(BaseModel):
    entity_ids: list[str]
    relationship_ids: list[str]
    length: int


class ApiCommunity(BaseModel):
    id: str
    level: int
    title: str
    summary: str
    entity_count: int
    parent_id: str | None = None


class TraverseResponse(BaseModel):
    entities: list[ApiEntity]
    relationships: list[ApiRelationship]
    paths: list[ApiPath]
    truncated: bool


class SubgraphResponse(BaseModel):
    entities: list[ApiEntity]
    relationships: list[ApiRelationship]
    communities: list[ApiCommunity]


class PathsResponse(BaseModel):
    paths: list[ApiPath]
    shortest_path_length: int | None = Field(description="null when no path within max_length")


def _path(p: GraphPath) -> ApiPath:
    return ApiPath(entity_ids=list(p.entity_ids), relationship_ids=list(p.relationship_ids),
                   length=p.length)


def _ops(kw: KW, tenant: str) -> GraphOps:
    return GraphOps(kw.runtime.graph, tenant, cache=kw.runtime.cache)


def _types(values: list[RelationType]) -> frozenset[str]:
    return frozenset(v.value for v in values)


_ERRORS: dict[int | str, dict[str, object]] = {
    404: {"description": "an entity id is unknown (problem+json)"},
    422: {"description": "malformed request (problem+json)"},
}


@router.post("/v1/graph/traverse", response_model=TraverseResponse, responses=_ERRORS)
def graph_traverse(body: TraverseRequest, kw: KW, tenant: Tenant) -> JSONResponse:
    """K-hop traversal from the given entities (breadth-first, filters applied per hop)."""
    flt = EdgeFilter(relationship_types=_types(body.relationship_types), direction=body.direction,
                     min_confidence=body.min_confidence, as_of=body.when(),
                     include_invalid=body.include_invalid)
    try:
        result = _ops(kw, tenant).traverse(body.entity_ids, max_hops=body.max_hops, flt=flt,
                                                  max_entities=body.max_entities)
    except UnknownEntities as exc:
        raise HTTPException(404, str(exc)) from exc
    response = TraverseResponse(entities=[_entity(e) for e in result.entities],
                                relationships=[_relationship(f) for f in result.relationships],
                                paths=[_path(p) for p in result.paths], truncated=result.truncated)
    return JSONResponse(response.model_dump(mode="json"))


@router.post("/v1/graph/subgraph", response_model=SubgraphResponse, responses=_ERRORS)
def graph_subgraph(body: SubgraphRequest, kw: KW, tenant: Tenant) -> JSONResponse:
    """The entities, the facts among them (and their neighbours within ``include_hops``),
    and optionally their level-0 communities."""
    group = tenant
    cache = kw.runtime.cache
    key = body.model_dump_json(exclude={"group_id"})
    if cache is not None and (hit := cache.get(CacheLayer.SUBGRAPH, group, key)) is not None:
        return JSONResponse(SubgraphResponse.model_validate_json(hit).model_dump(mode="json"))
    try:
        result = _ops(kw, tenant).subgraph(
            body.entity_ids, include_hops=body.include_hops,
            include_communities=body.include_communities, as_of=body.when(),
            include_invalid=body.include_invalid)
    except UnknownEntities as exc:
        raise HTTPException(404, str(exc)) from exc
    response = SubgraphResponse(
        entities=[_entity(e) for e in result.entities],
        relationships=[_relationship(f) for f in result.relationships],
        communities=[ApiCommunity(id=c.id, level=c.level, title=c.name, summary=c.summary,
                                  entity_count=c.entity_count, parent_id=c.parent_id)
                     for c in result.communities])
    if cache is not None:
        cache.set(CacheLayer.SUBGRAPH, group, key, response.model_dump_json(),
                  entity_ids=[e.id for e in result.entities])
    return JSONResponse(response.model_dump(mode="json"))


@router.post("/v1/graph/paths", response_model=PathsResponse, responses=_ERRORS)
def graph_paths(body: PathsRequest, kw: KW, tenant: Tenant) -> JSONResponse:
    """Every shortest path (up to 20) between two entities, at most ``max_length`` edges."""
    flt = EdgeFilter(relationship_types=_types(body.relationship_types), as_of=body.when(),
                     include_invalid=body.include_invalid)
    try:
        result = _ops(kw, tenant).paths(body.source_entity_id, body.target_entity_id,
                                               max_length=body.max_length, flt=flt)
    except UnknownEntities as exc:
        raise HTTPException(404, str(exc)) from exc
    response = PathsResponse(paths=[_path(p) for p in result.paths],
                             shortest_path_length=result.shortest_path_length)
    return JSONResponse(response.model_dump(mode="json"))
