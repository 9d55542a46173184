"""/admin: the review queue, entity search and an entity's page with its audit trail.

Behind the admin API key: a header (``X-Admin-Key`` / ``X-Api-Key`` / Bearer) or the cookie
the sign-in sets (the key's SHA-256, HttpOnly). Without it the pages answer 401 with a
sign-in form.
"""

from __future__ import annotations

from importlib import resources
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.auth import Scope
from knotwork.infra.sql.api_keys import digest
from knotwork.resolution.merge import NotFoundError
from knotwork.resolution.models import ReviewStatus
from knotwork.services.admin import render
from knotwork.services.api.deps import KW, Tenant
from knotwork.services.api.entity_routes import (
    ADMIN_COOKIE,
    is_admin,
    presented_admin_hash,
    workflow,
)

router = APIRouter(include_in_schema=False)


class LoginRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: str = Field(min_length=1, max_length=500)


def _allowed(request: Request, kw: KW) -> HTMLResponse | None:
    issued = getattr(request.state, "api_key", None)  # a key with the admin scope
    if issued is not None and issued.allows(Scope.ADMIN):
        return None
    key = kw.settings.admin_api_key
    if key is None:
        return HTMLResponse(render.login_page("Admin is disabled: set KNOTWORK_ADMIN_API_KEY."),
                            status_code=403)
    if not is_admin(key.get_secret_value(), presented_admin_hash(request)):
        return HTMLResponse(render.login_page("Sign in with the admin API key."), status_code=401)
    return None


@router.get("/admin/admin.js")
def admin_js() -> Response:
    script = resources.files("knotwork.services.admin").joinpath("admin.js").read_text("utf-8")
    return Response(script, media_type="text/javascript")


@router.post("/admin/login")
def login(body: LoginRequest, kw: KW) -> JSONResponse:
    key = kw.settings.admin_api_key
    if key is None:
        raise HTTPException(403, "admin is disabled: set KNOTWORK_ADMIN_API_KEY")
    key_digest = digest(body.key)
    if not is_admin(key.get_secret_value(), key_digest):
        raise HTTPException(401, "wrong admin API key")
    response = JSONResponse({"signed_in": True})
    response.set_cookie(ADMIN_COOKIE, key_digest, httponly=True, samesite="strict", path="/")
    return response


@router.get("/admin")
def queue(request: Request, kw: KW, tenant: Tenant,
          status: Annotated[str, Query(pattern="^(pending|approved|rejected|merged|all)$")]
          = "pending", q: Annotated[str, Query(max_length=200)] = "") -> HTMLResponse:
    denied = _allowed(request, kw)
    if denied is not None:
        return denied
    wf = workflow(kw, tenant)
    items = wf.reviews(None if status == "all" else ReviewStatus(status), q, 50)
    views = []
    for item in items:
        try:
            views.append(wf.review_view(item.id))
        except NotFoundError:
            continue
    return HTMLResponse(render.queue_page(views, wf.group_id, status, q))


@router.get("/admin/entities")
def entities(request: Request, kw: KW, tenant: Tenant,
             q: Annotated[str, Query(max_length=200)] = "") -> HTMLResponse:
    denied = _allowed(request, kw)
    if denied is not None:
        return denied
    wf = workflow(kw, tenant)
    hits = wf.search(q, [], 0.0, 50)[0] if q.strip() else []
    return HTMLResponse(render.search_page(hits, wf.group_id, q))


@router.get("/admin/entities/{entity_id}")
def entity(entity_id: str, request: Request, kw: KW, tenant: Tenant) -> HTMLResponse:
    denied = _allowed(request, kw)
    if denied is not None:
        return denied
    wf = workflow(kw, tenant)
    try:
        view = wf.view(entity_id)
    except NotFoundError as exc:
        raise HTTPException(404, str(exc)) from exc
    return HTMLResponse(render.entity_page(view, wf.audit_trail(view.entity.id), wf.group_id))
