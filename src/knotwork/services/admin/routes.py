"""/admin: the review queue, entity search and an entity's page with its audit trail.

Behind an admin-scoped key: a header (``X-Admin-Key`` / ``X-Api-Key`` / Bearer) or the signed,
expiring session cookie the sign-in sets (services.api.sessions). Without it the pages answer 401 with a
sign-in form.
"""

from __future__ import annotations

from importlib import resources
from typing import Annotated
from urllib.parse import parse_qs

import anyio.to_thread
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.auth import Scope
from knotwork.resolution.merge import NotFoundError
from knotwork.resolution.models import ReviewStatus
from knotwork.services.admin import render
from knotwork.services.admin.queue import SCORE_BANDS, queue_page
from knotwork.services.api.auth import SETTINGS_ADMIN_ID, Authenticator
from knotwork.services.api.deps import KW, Tenant
from knotwork.services.api.entity_routes import Reviews, workflow
from knotwork.services.api.sessions import SESSION_COOKIE, Session

router = APIRouter(include_in_schema=False)


class LoginRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: str = Field(min_length=1, max_length=500)


def _allowed(request: Request, kw: KW) -> HTMLResponse | None:
    """None when a key with the admin scope signed this request in (header or session)."""
    issued = getattr(request.state, "api_key", None)
    if issued is not None and issued.allows(Scope.ADMIN):
        return None
    if kw.settings.admin_api_key is None and not _keys_issued(request):
        return HTMLResponse(render.login_page("Admin is disabled: set KNOTWORK_ADMIN_API_KEY "
                                              "or create a key with the admin scope."),
                            status_code=403)
    return HTMLResponse(render.login_page("Sign in with an admin API key."), status_code=401)


def _keys_issued(request: Request) -> bool:
    auth = getattr(request.app.state, "auth", None)
    return isinstance(auth, Authenticator) and auth.enforced(Scope.ADMIN)


def _context(request: Request) -> render.Signed:
    session: Session | None = getattr(request.state, "session", None)
    issued = getattr(request.state, "api_key", None)
    actor = session.actor if session else (issued.name if issued else "")
    return render.Signed(actor=actor, csrf=session.csrf if session else "")


@router.get("/admin/admin.js")
def admin_js() -> Response:
    script = resources.files("knotwork.services.admin").joinpath("admin.js").read_text("utf-8")
    return Response(script, media_type="text/javascript")


@router.post("/admin/login")
async def login(request: Request) -> Response:
    """Sign in with ``admin_api_key`` or a key with the admin scope: a JSON body
    ``{"key": …}`` answers JSON, the sign-in page's form (``key=…``) redirects to the queue.
    The session cookie is signed, HttpOnly, SameSite=Strict and expires."""
    form = "json" not in request.headers.get("content-type", "")
    raw = await request.body()
    if form:
        values = parse_qs(raw.decode("utf-8", "replace"), max_num_fields=5).get("key", [""])
        secret = values[0].strip()
    else:
        secret = LoginRequest.model_validate_json(raw).key
    auth = request.app.state.auth
    assert isinstance(auth, Authenticator)
    key = await anyio.to_thread.run_sync(auth.verify, secret) if secret else None
    if key is None or not key.allows(Scope.ADMIN):
        if form:
            return HTMLResponse(render.login_page("Wrong key, or not an admin key."),
                                status_code=401)
        raise HTTPException(401, "the key is unknown, revoked or lacks the admin scope")
    admin = auth.admin_fingerprint() if key.id == SETTINGS_ADMIN_ID else ""
    token, session = auth.sessions.open(key.id, key.name, key.tenant, admin)
    response: Response = (RedirectResponse("/admin", status_code=303) if form else
                          JSONResponse({"signed_in": True, "actor": session.actor,
                                        "expires_in_s": auth.sessions.ttl_s}))
    response.set_cookie(SESSION_COOKIE, token, max_age=auth.sessions.ttl_s, httponly=True,
                        samesite="strict", secure=request.url.scheme == "https", path="/")
    return response


@router.post("/admin/logout")
def logout(request: Request) -> JSONResponse:
    """End the signed-in session (its CSRF token required, like every change)."""
    session: Session | None = getattr(request.state, "session", None)
    if session is None:
        raise HTTPException(401, "not signed in with a session")
    request.app.state.auth.sessions.end(session)
    response = JSONResponse({"signed_out": True})
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return response


@router.get("/admin")
def queue(request: Request, kw: KW, tenant: Tenant, page: Reviews,
          band: Annotated[str, Query(pattern="^(|high|mid|low)$")] = "") -> HTMLResponse:
    denied = _allowed(request, kw)
    if denied is not None:
        return denied
    flt = page.filter
    if band:
        low, high = SCORE_BANDS[band]
        flt = flt.model_copy(update={"min_score": low, "max_score": high})
    wf = workflow(kw, tenant)
    found = wf.review_page(flt, page.offset, page.limit)
    views = wf.review_views(found.items)
    decided = {v.item.id for v in views if v.item.status is not ReviewStatus.PENDING}
    undoable = {a.review_id: a.id for a in reversed(wf.actions(500))
                if a.review_id in decided and a.undone_at is None} if decided else {}
    return HTMLResponse(queue_page(views, found, flt, wf.group_id, page.offset, page.limit,
                                   _context(request), undoable))


@router.get("/admin/entities")
def entities(request: Request, kw: KW, tenant: Tenant,
             q: Annotated[str, Query(max_length=200)] = "") -> HTMLResponse:
    denied = _allowed(request, kw)
    if denied is not None:
        return denied
    wf = workflow(kw, tenant)
    hits = wf.search(q, [], 0.0, 50)[0] if q.strip() else []
    return HTMLResponse(render.search_page(hits, wf.group_id, q, _context(request)))


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
    actions = [a for a in wf.actions(200) if view.entity.id in a.entity_ids]
    return HTMLResponse(render.entity_page(view, wf.audit_trail(view.entity.id), wf.group_id,
                                            _context(request), wf.mentions(view.entity.id),
                                            actions))
