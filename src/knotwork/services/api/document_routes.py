"""Documents over REST: upload (text, Markdown or HTML; a later upload under the same name is a
new version), list with processing status, read one, delete one with everything only it
evidenced (facts, entities, vectors, summaries; communities refreshed).

Writes need the ingest scope; reads honour the caller's source ACLs like every query.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request, Response
from pydantic import Field, field_validator

from knotwork.domain.models import Document, ProcessingStatus
from knotwork.ingestion.loaders.upload import UPLOAD_PREFIX, UploadFormat, uploaded_document
from knotwork.services.api.deps import KW, Group, Tenant
from knotwork.services.api.request_models import TEXT, ApiRequest, ApiTime, LaxEnum

router = APIRouter(tags=["documents"])

# a file-like name: letters, digits and . _ - / (no leading slash; ".." refused below)
NAME_PATTERN = r"^[\w.\-][\w.\-/ ]*$"


class UploadRequest(ApiRequest):
    name: str = Field(min_length=1, max_length=300, pattern=NAME_PATTERN,
                      description="the document's name: uploading the same name again replaces "
                                  "the earlier version")
    content: str = Field(min_length=1, max_length=5_000_000, pattern=TEXT)
    format: LaxEnum[UploadFormat] = UploadFormat.TEXT
    title: str | None = Field(default=None, min_length=1, max_length=500, pattern=TEXT)
    url: str | None = Field(default=None, max_length=2000, pattern=r"^https?://\S+$")
    modified_at: ApiTime | None = None
    acl: list[Annotated[str, Field(min_length=1, max_length=300, pattern=r"^(user|group):\S+$")]] \
        = Field(default_factory=list, max_length=1000,
                description='who may read it ("user:<id>", "group:<name>"); empty: everyone')
    group_id: str | None = Group

    @field_validator("name")
    @classmethod
    def _no_parent(cls, value: str) -> str:
        if ".." in value.split("/"):
            raise ValueError("the name may not contain a '..' segment")
        return value


def _view(doc: Document) -> dict[str, object]:
    return {"id": doc.id, "title": doc.title, "source_system": doc.source_system.value,
            "source_id": doc.source_id, "url": doc.url, "status": doc.processing_status.value,
            "chunk_count": doc.chunk_count, "entity_count": doc.entity_count,
            "modified_at": doc.modified_at.isoformat() if doc.modified_at else None,
            "last_processed_at": doc.last_processed_at.isoformat()
            if doc.last_processed_at else None}


@router.post("/v1/documents", status_code=201)
def upload_document(body: UploadRequest, kw: KW, tenant: Tenant, request: Request,
                    response: Response) -> dict[str, object]:
    """Ingest one document now (201 when new, 200 when it replaced or matched a version)."""
    max_chars = kw.settings.max_document_chars
    if len(body.content) > max_chars:
        raise HTTPException(413, f"the document has {len(body.content)} characters; the limit "
                                 f"is {max_chars} (KNOTWORK_MAX_DOCUMENT_CHARS)")
    try:
        raw = uploaded_document(body.name, body.content, body.format, title=body.title,
                                url=body.url, modified_at=body.modified_at, acl=body.acl)
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from exc
    with request.app.state.write_lock:
        report = kw.ingest_documents([raw], group_id=tenant)
    stored = next((d for d in kw.list_documents(tenant)
                   if d.source_id == raw.source_id and d.source_system == raw.source_system), None)
    if stored is None:  # pragma: no cover - the pipeline stores what it ingests
        raise HTTPException(500, "the document was not stored")
    outcome = ("added" if report.added else "updated" if report.updated else "unchanged")
    if outcome != "added":
        response.status_code = 200
    return _view(stored) | {"outcome": outcome, "entities": report.entities,
                            "facts": report.facts, "facts_retired": report.facts_retired}


@router.get("/v1/documents")
def list_documents(kw: KW, tenant: Tenant,
                   status: ProcessingStatus | None = None,
                   q: Annotated[str, Query(max_length=200)] = "",
                   uploaded_only: bool = False,
                   offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
                   limit: Annotated[int, Query(ge=1, le=500)] = 50) -> dict[str, object]:
    """The tenant's documents, newest first: filter by status, title text (``q``) or
    uploads only; ``counts`` per status over the whole tenant."""
    docs = kw.list_documents(tenant)
    counts: dict[str, int] = {}
    for d in docs:
        counts[d.processing_status.value] = counts.get(d.processing_status.value, 0) + 1
    wanted = [d for d in docs if (status is None or d.processing_status is status)
              and (not q or q.lower() in d.title.lower())
              and (not uploaded_only or d.source_id.startswith(UPLOAD_PREFIX))]
    wanted.sort(key=lambda d: (d.modified_at.isoformat() if d.modified_at else "", d.id),
                reverse=True)
    return {"items": [_view(d) for d in wanted[offset:offset + limit]], "total": len(wanted),
            "counts": counts, "offset": offset, "limit": limit}


@router.get("/v1/documents/{document_id}")
def get_document(document_id: str, kw: KW, tenant: Tenant) -> dict[str, object]:
    doc = kw.get_document(document_id, tenant)
    if doc is None:
        raise HTTPException(404, f"no document {document_id!r}")
    return _view(doc)


@router.delete("/v1/documents/{document_id}")
def delete_document(document_id: str, kw: KW, tenant: Tenant, request: Request) -> dict[str, object]:
    """Delete the document and everything only it evidenced."""
    with request.app.state.write_lock:
        retired = kw.delete_document(document_id, tenant)  # unknown: 404 (UnknownReference)
    return {"deleted": document_id, "documents": retired.documents, "episodes": retired.episodes,
            "facts": retired.facts, "entities": retired.entities}
