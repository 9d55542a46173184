"""Entity routes (design doc 003): create (resolving first), read, search; and the admin-only
review queue, merge, unmerge and audit trail (``admin_api_key``, compared as a SHA-256 hash).

Errors are problem+json via the app's handlers: unknown ids 404, conflicts 409, bad input 4xx.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Literal, TypeVar

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import JSONResponse
from pydantic import Field, field_validator

from knotwork.domain.auth import Scope
from knotwork.domain.models import EntityType
from knotwork.resolution.merge import MergeError, NotFoundError
from knotwork.resolution.models import ReviewFilter, ReviewSort, ReviewStatus
from knotwork.resolution.workflow import EntityChanges, EntityWorkflow
from knotwork.services.api.deps import KW, Group, Tenant
from knotwork.services.api.request_models import NAME, TEXT, ApiInt, ApiRequest, LaxEnum

router = APIRouter()
T = TypeVar("T")


def require_admin(request: Request, kw: KW) -> str:
    """The actor: the name of the admin-scoped key (header or signed-in session) that
    ``authorize`` verified for this request."""
    issued = getattr(request.state, "api_key", None)  # set by services.api.auth.authorize
    if issued is not None and issued.allows(Scope.ADMIN):
        return str(issued.name)
    if kw.settings.admin_api_key is None:  # authorize let it through: no key was ever issued
        raise HTTPException(403, "admin is disabled: set KNOTWORK_ADMIN_API_KEY or use a key "
                                 "with the admin scope")
    raise HTTPException(401, "a valid admin API key is required",
                        headers={"WWW-Authenticate": 'Bearer realm="knotwork-admin"'})


Admin = Annotated[str, Depends(require_admin)]


def workflow(kw: KW, tenant: str) -> EntityWorkflow:
    return EntityWorkflow(kw.runtime, tenant)


def _call(fn: Callable[..., T], *args: object) -> T:
    """Map workflow errors to HTTP: unknown → 404, state conflicts → 409."""
    try:
        return fn(*args)
    except NotFoundError as exc:
        raise HTTPException(404, str(exc)) from exc
    except MergeError as exc:
        raise HTTPException(409, str(exc)) from exc


def _upper(value: object) -> object:
    return value.upper() if isinstance(value, str) else value


class CreateEntityRequest(ApiRequest):
    display_name: str = Field(min_length=1, max_length=500, pattern=NAME)
    entity_type: LaxEnum[EntityType]
    properties: dict[str, str] = Field(default_factory=dict, max_length=100)
    source_chunk_id: str | None = Field(default=None, max_length=255)
    group_id: str | None = Group

    @field_validator("entity_type", mode="before")
    @classmethod
    def _type(cls, value: object) -> object:
        return _upper(value)


class SearchRequest(ApiRequest):
    query: str = Field(min_length=1, max_length=500, pattern=TEXT)
    entity_types: list[LaxEnum[EntityType]] = Field(default_factory=list)
    min_confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    limit: ApiInt = Field(default=20, ge=1, le=100)
    include_aliases: bool = True
    group_id: str | None = Group

    @field_validator("entity_types", mode="before")
    @classmethod
    def _types(cls, value: object) -> object:
        return [_upper(v) for v in value] if isinstance(value, list) else value


class MergeRequest(ApiRequest):
    target_id: str = Field(min_length=1, max_length=255)
    source_ids: list[str] = Field(min_length=1, max_length=100)
    group_id: str | None = Group


class MergeIntoRequest(ApiRequest):
    target_id: str = Field(min_length=1, max_length=255)
    group_id: str | None = Group


class GroupBody(ApiRequest):
    group_id: str | None = Group


# --------------------------------------------------------------------------- public entity API


@router.post("/v1/entities")
def create_entity(body: CreateEntityRequest, kw: KW, tenant: Tenant, request: Request) -> dict[str, object]:
    with request.app.state.write_lock:
        result = workflow(kw, tenant).create(body.display_name, body.entity_type,
                                                   body.properties, body.source_chunk_id)
    return result.model_dump()


class UpdateEntityRequest(ApiRequest):
    version: ApiInt = Field(ge=1, description="the version you read (optimistic locking)")
    name: str | None = Field(default=None, min_length=1, max_length=500, pattern=NAME)
    entity_type: LaxEnum[EntityType] | None = None
    aliases: list[str] | None = Field(default=None, max_length=200)
    summary: str | None = Field(default=None, max_length=20_000)
    group_id: str | None = Group

    @field_validator("entity_type", mode="before")
    @classmethod
    def _upper_type(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value


@router.patch("/v1/entities/{entity_id}", responses={409: {"description": "version conflict"}})
def update_entity(entity_id: str, body: UpdateEntityRequest, kw: KW, tenant: Tenant,
                  request: Request) -> JSONResponse:
    """Edit an entity; 409 when it changed since ``version`` was read (re-read and retry).
    A body with only ``version`` changes nothing and answers the entity as it is."""
    changes = EntityChanges(name=body.name, entity_type=body.entity_type, aliases=body.aliases,
                            summary=body.summary)
    actor = getattr(getattr(request.state, "api_key", None), "name", None) or "api"
    with request.app.state.write_lock:
        entity = _call(workflow(kw, tenant).update, entity_id, body.version, changes, actor)
    return JSONResponse({"entity": entity.model_dump(mode="json")},
                        headers={"ETag": f'"{entity.version}"'})


@router.post("/v1/entities/search")
def search_entities(body: SearchRequest, kw: KW, tenant: Tenant) -> dict[str, object]:
    hits, total = workflow(kw, tenant).search(body.query, body.entity_types,
                                                     body.min_confidence, body.limit,
                                                     body.include_aliases)
    return {"entities": [h.entity.model_dump(mode="json") | {"score": h.score} for h in hits],
            "total_count": total}


@router.get("/v1/entities/{entity_id}")
def get_entity(entity_id: str, kw: KW, tenant: Tenant) -> dict[str, object]:
    view = _call(workflow(kw, tenant).view, entity_id)
    return {"entity": view.entity.model_dump(mode="json"),
            "relationships": [f.model_dump(mode="json") for f in view.relationships],
            "mentions_count": view.mentions_count,
            "examples": [m.model_dump() for m in view.examples],
            "merges": [m.model_dump(mode="json", exclude={"snapshot"}) for m in view.merges]}


# --------------------------------------------------------------------------- admin: review queue


@dataclass(frozen=True)
class ReviewQuery:
    """A page of the review queue: which items (the filter), from where, how many."""

    filter: ReviewFilter
    offset: int
    limit: int


def review_query(
        status: Annotated[str, Query(pattern="^(pending|approved|rejected|merged|all)$")]
        = "pending",
        q: Annotated[str, Query(max_length=200, description="mention contains")] = "",
        type: Annotated[EntityType | None, Query(description="entity type")] = None,
        decision: Annotated[str | None, Query(pattern="^[a-z_]{1,32}$")] = None,
        min_score: Annotated[float | None, Query(ge=0.0, le=1.0)] = None,
        max_score: Annotated[float | None, Query(ge=0.0, le=1.0)] = None,
        sort: ReviewSort = ReviewSort.NEWEST,
        offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
        limit: Annotated[int, Query(ge=1, le=500)] = 50) -> ReviewQuery:
    flt = ReviewFilter(status=None if status == "all" else ReviewStatus(status), query=q,
                       entity_type=type.value if type else None, decision=decision,
                       min_score=min_score, max_score=max_score, sort=sort)
    return ReviewQuery(flt, offset, limit)


Reviews = Annotated[ReviewQuery, Depends(review_query)]


@router.get("/v1/review")
def list_reviews(kw: KW, _: Admin, tenant: Tenant, page: Reviews) -> dict[str, object]:
    """The review queue, filtered and paged: ``items``, ``total`` (matching the filter) and
    ``counts`` per status (under the filter's other conditions)."""
    found = workflow(kw, tenant).review_page(page.filter, page.offset, page.limit)
    return found.model_dump(mode="json") | {"offset": page.offset, "limit": page.limit}


class BulkRequest(ApiRequest):
    action: Literal["approve", "reject"]
    group_id: str | None = Group


@router.post("/v1/review/bulk")
def bulk_decide(body: BulkRequest, kw: KW, tenant: Tenant, request: Request, actor: Admin,
                page: Reviews) -> dict[str, object]:
    """Approve or reject (split off) the pending items the query's filter selects (the same
    parameters as ``GET /v1/review``; up to ``limit`` at a time, ``remaining`` says how many
    are left), each as one click would, each audited with the actor."""
    with request.app.state.write_lock:
        done = workflow(kw, tenant).bulk_decide(page.filter, body.action == "approve", actor,
                                                page.limit)
    return done.model_dump(mode="json")


@router.get("/v1/review/{review_id}")
def get_review(review_id: str, kw: KW, _: Admin, tenant: Tenant) -> dict[str, object]:
    wf = workflow(kw, tenant)
    item = wf.sql.get_review(wf.group_id, review_id)
    if item is None:
        raise HTTPException(404, f"no review item {review_id!r}")
    return item.model_dump(mode="json")


@router.post("/v1/review/{review_id}/approve")
def approve(review_id: str, body: GroupBody, kw: KW, tenant: Tenant, request: Request, actor: Admin) -> dict[str, object]:
    with request.app.state.write_lock:
        return _call(workflow(kw, tenant).approve, review_id, actor).model_dump(mode="json")


@router.post("/v1/review/{review_id}/reject")
def reject(review_id: str, body: GroupBody, kw: KW, tenant: Tenant, request: Request, actor: Admin) -> dict[str, object]:
    with request.app.state.write_lock:
        return _call(workflow(kw, tenant).reject, review_id, actor).model_dump(mode="json")


@router.post("/v1/review/{review_id}/merge")
def merge_into(review_id: str, body: MergeIntoRequest, kw: KW, tenant: Tenant, request: Request,
               actor: Admin) -> dict[str, object]:
    with request.app.state.write_lock:
        item = _call(workflow(kw, tenant).merge_into, review_id, body.target_id, actor)
    return item.model_dump(mode="json")


# --------------------------------------------------------------------------- admin: merges, audit


@router.post("/v1/entities/merge")
def merge_entities(body: MergeRequest, kw: KW, tenant: Tenant, request: Request, actor: Admin) -> dict[str, object]:
    with request.app.state.write_lock:
        record = _call(workflow(kw, tenant).merge, body.target_id, body.source_ids, actor)
    return record.model_dump(mode="json", exclude={"snapshot"})


@router.post("/v1/merges/{merge_id}/unmerge")
def unmerge(merge_id: str, body: GroupBody, kw: KW, tenant: Tenant, request: Request, actor: Admin) -> dict[str, object]:
    with request.app.state.write_lock:
        record = _call(workflow(kw, tenant).unmerge, merge_id, actor)
    return record.model_dump(mode="json", exclude={"snapshot"}) | {"restored": record.source_ids}


@router.get("/v1/entities/{entity_id}/audit")
def audit_trail(entity_id: str, kw: KW, _: Admin, tenant: Tenant) -> dict[str, object]:
    entries = workflow(kw, tenant).audit_trail(entity_id)
    return {"entries": [e.model_dump(mode="json") for e in entries]}
