"""A document sent over the API (``POST /v1/documents``): text, Markdown or HTML, converted
the way the file loader converts files of those kinds. Its source id is ``upload/<name>``: a
later upload under the same name is a new version of the same document (incremental)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from knotwork.domain.models import RawDocument, SourceSystem
from knotwork.domain.timeutil import ensure_utc, utcnow
from knotwork.ingestion.loaders.dates import document_date
from knotwork.ingestion.loaders.markdown import markdown_title, markdown_to_text, unwrap_plain_text
from knotwork.ingestion.loaders.xhtml import convert_html

UPLOAD_PREFIX = "upload/"


class UploadFormat(StrEnum):
    TEXT = "text"
    MARKDOWN = "markdown"
    HTML = "html"


def uploaded_document(name: str, content: str, fmt: UploadFormat = UploadFormat.TEXT, *,
                      title: str | None = None, url: str | None = None,
                      modified_at: datetime | None = None, acl: list[str] | None = None
                      ) -> RawDocument:
    """The document an upload makes; ``ValueError`` when it has no text."""
    if fmt is UploadFormat.HTML:
        converted = convert_html(content)
        text, found_title, mime = converted.text, converted.title, "text/plain"
    elif fmt is UploadFormat.MARKDOWN:
        text, found_title, mime = markdown_to_text(content), markdown_title(content), "text/markdown"
    else:
        text, found_title, mime = (unwrap_plain_text(content).strip("\n"), markdown_title(content),
                                   "text/plain")
    if not text.strip():
        raise ValueError("the document has no text")
    written = ensure_utc(modified_at) if modified_at else document_date(name, title or found_title,
                                                                          text)
    when = written or utcnow()
    return RawDocument(source_system=SourceSystem.FILE, source_id=f"{UPLOAD_PREFIX}{name}",
                       title=title or found_title or name, content=text, url=url,
                       created_at=when, modified_at=when, mime_type=mime,
                       metadata={"uploaded_as": fmt.value}, acl=sorted(set(acl or [])))
