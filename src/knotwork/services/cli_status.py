"""``knotwork status``: documents by processing status, the job queue, failures (registered by
cli). ``--json`` prints :class:`StatusReport`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from knotwork.domain.ports import DocumentStore, JobQueue

FAILURES_LISTED = 20


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FailedDocument(_Model):
    source_system: str
    source_id: str
    title: str


class DeadLetterLine(_Model):
    id: str
    type: str
    error: str
    failed_at: str


class QueueStatus(_Model):
    streams: dict[str, int]  # stream -> entries (waiting + in progress)
    pending: dict[str, int]  # stream -> delivered to a worker, not finished
    consumers: int
    retrying: int
    dead: int
    outstanding: int


class StatusReport(_Model):
    group: str
    documents: dict[str, int]  # processing status -> count
    total_documents: int
    queue: QueueStatus | None = None
    queue_error: str | None = None
    failed: list[FailedDocument] = Field(default_factory=list)
    dead_letters: list[DeadLetterLine] = Field(default_factory=list)


def build_status(group: str, store: DocumentStore, queue: JobQueue | None,
                 queue_error: str | None = None) -> StatusReport:
    from knotwork.domain.models import ProcessingStatus

    docs = store.list_documents(group)
    counts = {s.value: 0 for s in ProcessingStatus}
    for d in docs:
        counts[d.processing_status.value] += 1
    failed = [FailedDocument(source_system=d.source_system.value, source_id=d.source_id,
                             title=d.title)
              for d in docs if d.processing_status is ProcessingStatus.FAILED]
    report = StatusReport(group=group, documents=counts, total_documents=len(docs),
                          failed=failed[:FAILURES_LISTED], queue_error=queue_error)
    if queue is not None:
        stats = queue.stats()
        report.queue = QueueStatus(
            streams={s.stream: s.length for s in stats.streams},
            pending={s.stream: s.pending for s in stats.streams},
            consumers=max((s.consumers for s in stats.streams), default=0),
            retrying=stats.retrying, dead=stats.dead, outstanding=stats.outstanding)
        report.dead_letters = [
            DeadLetterLine(id=d.message_id, type=d.kind, error=d.error,
                           failed_at=d.failed_at.isoformat())
            for d in queue.dead_letters(5)]
    return report


def _print(report: StatusReport) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    docs = Table(title=f"documents ({report.group})")
    docs.add_column("status")
    docs.add_column("documents", justify="right")
    for status, count in report.documents.items():
        docs.add_row(status, str(count))
    docs.add_row("[bold]total", f"[bold]{report.total_documents}")
    console.print(docs)
    if report.queue is None:
        console.print(f"queue: unavailable ({report.queue_error})")
    else:
        q = report.queue
        jobs = Table(title="job queue")
        for column in ("stream", "entries", "in progress"):
            jobs.add_column(column, justify="right" if column != "stream" else "left")
        for stream, length in q.streams.items():
            jobs.add_row(stream, str(length), str(q.pending[stream]))
        jobs.add_row("retrying (backoff)", str(q.retrying), "")
        jobs.add_row("dead letters", str(q.dead), "")
        console.print(jobs)
    if report.failed:
        console.print(f"[bold red]failed documents[/] ({report.documents['FAILED']}):")
        for f in report.failed:
            console.print(f"  {f.source_system}:{f.source_id}  {f.title}")
    if report.dead_letters:
        console.print("[bold red]latest dead letters[/] (`knotwork queue dlq` for all):")
        for d in report.dead_letters:
            console.print(f"  {d.id} {d.type}: {d.error}")


def status(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Documents by processing status, queue depth per stream, retries, dead letters."""
    from knotwork.infra.graph_factory import create_graph_store
    from knotwork.infra.queue.factory import create_job_queue
    from knotwork.infra.sql.store import SqlDocumentStore
    from knotwork.services import cli
    from knotwork.settings import Settings

    settings = cli._State.settings or Settings()
    try:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        store = SqlDocumentStore(settings.resolved_database_url())
        store.migrate()
    except Exception as exc:  # noqa: BLE001 - one line, exit 2
        cli.fail(f"cannot open the document store: {str(exc).splitlines()[0] if str(exc) else exc!r}")
    graph, queue, error = None, None, None
    try:
        if not settings.redis_url:
            graph = create_graph_store(settings)
        queue = create_job_queue(settings, graph)
        queue.stats()
    except Exception as exc:  # noqa: BLE001 - documents are still reported
        error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        queue = None
    try:
        report = build_status(settings.group, store, queue, error)
    finally:
        for closer in ((queue.close,) if queue else ()) + ((graph.close,) if graph else ()):
            closer()
        store.close()
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        _print(report)


def register(app: typer.Typer) -> None:
    app.command("status")(status)
