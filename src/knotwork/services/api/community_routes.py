"""REST routes for communities and the analyst digest."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import HTMLResponse, JSONResponse, Response

from knotwork.services.api.deps import KW, Tenant

router = APIRouter()




@router.get("/v1/communities")
def list_communities(
    kw: KW,
    tenant: Tenant,
    level: Annotated[int | None, Query(ge=0, le=100)] = None,
    include_members: bool = False,
) -> JSONResponse:
    found = kw.communities(tenant).communities(level)
    exclude = None if include_members else {"entity_ids"}
    return JSONResponse({"communities": [c.model_dump(mode="json", exclude=exclude)
                                         for c in found]})


@router.get("/v1/communities/{community_id}")
def get_community(community_id: str, kw: KW, tenant: Tenant) -> JSONResponse:
    detail = kw.communities(tenant).detail(community_id)
    if detail is None:
        raise HTTPException(404, f"no community {community_id!r}")
    return JSONResponse(detail.model_dump(mode="json"))


@router.get("/v1/reports/latest", response_model=None, responses={200: {
    "description": "The latest analyst digest: HTML (default) or JSON (`format=json`)",
    "content": {"text/html": {"schema": {"type": "string"}}, "application/json": {}}}})
def latest_report(
    kw: KW,
    tenant: Tenant,
    format: Annotated[Literal["html", "json"], Query()] = "html",
) -> Response:
    from knotwork.communities.render import render_html

    report = kw.latest_report(tenant)
    if report is None:
        raise HTTPException(404, "no report yet: build communities, then run `knotwork report`")
    if format == "json":
        return JSONResponse(report.model_dump(mode="json"))
    return HTMLResponse(render_html(report))
