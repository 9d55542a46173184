"""Admin routes that repair resolution: list an entity's mentions, split or move a selection of
them (facts follow their evidence), list recent actions and undo one.

Every action writes one audit record per entity touched, with the actor; undo restores the
exact prior state (newest first where actions touch the same entities).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import Field

from knotwork.domain.models import EntityType
from knotwork.resolution.models import EntityAction
from knotwork.resolution.workflow import SplitRequest
from knotwork.services.api.deps import KW, Group, Tenant
from knotwork.services.api.entity_routes import Admin, GroupBody, _call, workflow
from knotwork.services.api.request_models import NAME, ApiRequest, LaxEnum

router = APIRouter(tags=["entity repair"])

_ID = Field(min_length=1, max_length=255)


class SplitBody(ApiRequest):
    """Select mentions by id, by document or by surface form (any combination); they move
    ``into`` an existing entity, or to a new entity ``name`` of ``entity_type``."""

    mention_ids: list[Annotated[str, _ID]] = Field(default_factory=list, max_length=5000)
    document_ids: list[Annotated[str, _ID]] = Field(default_factory=list, max_length=1000)
    surface_forms: list[Annotated[str, Field(min_length=1, max_length=300, pattern=NAME)]] = \
        Field(default_factory=list, max_length=100)
    into: str | None = Field(default=None, min_length=1, max_length=255)
    name: str | None = Field(default=None, min_length=1, max_length=300, pattern=NAME)
    entity_type: LaxEnum[EntityType] | None = None
    group_id: str | None = Group


def _view(action: EntityAction) -> dict[str, object]:
    snap = action.snapshot
    return {"id": action.id, "kind": action.kind.value, "review_id": action.review_id,
            "entity_ids": action.entity_ids, "actor": action.actor,
            "created_at": action.created_at.isoformat(),
            "undone_at": action.undone_at.isoformat() if action.undone_at else None,
            "moved_mentions": snap.moved_mentions, "moved_facts": snap.moved_facts,
            "created_entity": snap.created_entity, "merge_id": snap.merge_id,
            "cannot_links": [list(p) for p in snap.cannot_links]}


@router.get("/v1/entities/{entity_id}/mentions")
def entity_mentions(entity_id: str, kw: KW, _: Admin, tenant: Tenant) -> dict[str, object]:
    """The entity's stored mentions (id, surface form, chunk, document) to select a split from."""
    rows = _call(workflow(kw, tenant).mentions, entity_id)
    return {"mentions": [r.model_dump(mode="json") for r in rows], "total": len(rows)}


@router.post("/v1/entities/{entity_id}/split")
def split_entity(entity_id: str, body: SplitBody, kw: KW, tenant: Tenant, request: Request,
                 actor: Admin) -> dict[str, object]:
    """Move the selected mentions, and the facts they evidence, to another entity or to a new
    one; the moved names can no longer resolve to this entity (cannot-link)."""
    split = SplitRequest(mention_ids=body.mention_ids, document_ids=body.document_ids,
                         surface_forms=body.surface_forms, into=body.into, name=body.name,
                         entity_type=body.entity_type)
    with request.app.state.write_lock:
        action = _call(workflow(kw, tenant).split, entity_id, split, actor)
    return _view(action)


@router.get("/v1/actions")
def list_actions(kw: KW, _: Admin, tenant: Tenant,
                 limit: Annotated[int, Query(ge=1, le=500)] = 50) -> dict[str, object]:
    """Recent review actions (split, move, approve, reject, merge into), newest first."""
    return {"actions": [_view(a) for a in workflow(kw, tenant).actions(limit)]}


@router.post("/v1/actions/{action_id}/undo")
def undo_action(action_id: str, body: GroupBody, kw: KW, tenant: Tenant, request: Request,
                actor: Admin) -> dict[str, object]:
    """Undo an action exactly (409 if a later action on the same entities is still live)."""
    with request.app.state.write_lock:
        return _view(_call(workflow(kw, tenant).undo, action_id, actor))
