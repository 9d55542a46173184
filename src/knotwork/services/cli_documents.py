"""``knotwork documents list|show|delete``: the tenant's documents with their processing status,
and deleting one with everything only it evidenced (as ``DELETE /v1/documents/{id}``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from knotwork.core import Knotwork
    from knotwork.domain.models import Document

documents_app = typer.Typer(no_args_is_help=True, help="Stored documents: list, show, delete.")


def _row(doc: Document) -> dict[str, object]:
    return {"id": doc.id, "title": doc.title, "source": f"{doc.source_system.value}:{doc.source_id}",
            "status": doc.processing_status.value, "chunks": doc.chunk_count,
            "entities": doc.entity_count,
            "modified_at": doc.modified_at.isoformat() if doc.modified_at else None}


def _with(body: object) -> None:
    from knotwork.core import Knotwork
    from knotwork.domain.errors import UnknownReference
    from knotwork.services import cli

    with cli._knotwork() as kw:
        assert isinstance(kw, Knotwork) and callable(body)
        try:
            body(kw)
        except UnknownReference as exc:
            cli.fail(str(exc))


@documents_app.command("list")
def list_documents(
    status: Annotated[str | None, typer.Option("--status", help="PENDING|PROCESSING|COMPLETED|"
                                               "FAILED")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the documents with their processing status."""
    from knotwork.domain.models import ProcessingStatus
    from knotwork.services import cli

    wanted = cli._choice(status.upper(), ProcessingStatus, "status") if status else None

    def body(kw: Knotwork) -> None:
        rows = [_row(d) for d in kw.list_documents() if wanted is None
                or d.processing_status is wanted]
        if as_json:
            typer.echo(json.dumps(rows, indent=2))
            return
        for r in rows:
            typer.echo(f"{r['id']} {r['status']:<10} {r['title']}  ({r['source']})")

    _with(body)


@documents_app.command("show")
def show(document_id: Annotated[str, typer.Argument(help="A document id (see list).")]) -> None:
    """Print one document's status and counts as JSON."""
    from knotwork.services import cli

    def body(kw: Knotwork) -> None:
        doc = kw.get_document(document_id)
        if doc is None:
            cli.fail(f"no document {document_id!r} in group {kw.settings.group!r}")
        typer.echo(json.dumps(_row(doc), indent=2))

    _with(body)


@documents_app.command("delete")
def delete(document_id: Annotated[str, typer.Argument(help="A document id (see list).")]) -> None:
    """Delete a document and everything only it evidenced (facts, entities, vectors)."""

    def body(kw: Knotwork) -> None:
        retired = kw.delete_document(document_id)
        typer.echo(json.dumps({"deleted": document_id, "facts": retired.facts,
                               "entities": retired.entities, "episodes": retired.episodes}))

    _with(body)


def register(app: typer.Typer) -> None:
    app.add_typer(documents_app, name="documents")
