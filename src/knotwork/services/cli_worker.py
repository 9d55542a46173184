"""``knotwork worker``, ``knotwork queue dlq|retry|purge|workers|alive`` and the queued halves of
``ingest --queue`` / ``sync --queue`` (registered by cli)."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, NoReturn

import structlog
import typer

if TYPE_CHECKING:
    from knotwork.domain.models import RawDocument, WorkspaceMember
    from knotwork.domain.ports import DocumentStore, JobQueue
    from knotwork.infra.queue.heartbeat import Heartbeat
    from knotwork.ingestion.sync import Enqueue, SyncReport, SyncSource
    from knotwork.services.worker.enqueue import EnqueueReport
    from knotwork.settings import Settings

log = structlog.get_logger(__name__)

queue_app = typer.Typer(no_args_is_help=True, help="The job queue: dead letters, retries.")

MAX_RECONNECTS = 5


def _settings() -> Settings:
    from knotwork.services import cli
    from knotwork.settings import Settings

    return cli._State.settings or Settings()


def _fail(message: str) -> NoReturn:
    from knotwork.services import cli

    cli.fail(message)


def _first_line(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return text or type(exc).__name__


@contextmanager
def queue_stores(settings: Settings) -> Iterator[tuple[DocumentStore, JobQueue]]:
    """SQL and the job queue only: no vector store, so workers keep theirs (qdrant-edge)."""
    from knotwork.infra.graph_factory import create_graph_store
    from knotwork.infra.queue.factory import create_job_queue
    from knotwork.infra.sql.store import SqlDocumentStore

    try:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        documents = SqlDocumentStore(settings.resolved_database_url())
        documents.migrate()
    except Exception as exc:  # noqa: BLE001 - one line, exit 2
        _fail(f"cannot open the document store: {_first_line(exc)}")
    graph = None
    try:
        if not settings.redis_url:
            graph = create_graph_store(settings)  # its server carries the streams
        queue = create_job_queue(settings, graph)
        queue.stats()  # connects now: fail here with one line
    except Exception as exc:  # noqa: BLE001
        documents.close()
        if graph is not None:
            graph.close()
        _fail(f"cannot open the job queue: {_first_line(exc)}")
    try:
        yield documents, queue
    finally:
        for closer in (queue.close, *((graph.close,) if graph else ()), documents.close):
            closer()


def enqueue_loaded(documents: list[RawDocument], kind: str,
                   members: Sequence[WorkspaceMember] = ()) -> None:
    """``knotwork ingest PATH --queue``: one EXTRACT_ENTITIES task per new/changed document,
    then (a Slack export with ``users.json``) one DERIVE_EMPLOYMENT task for its people."""
    from knotwork.services.worker.enqueue import enqueue_documents, enqueue_members

    settings = _settings()
    with queue_stores(settings) as (store, queue):
        report = _with_progress("enqueue", len(documents), lambda tick: enqueue_documents(
            documents, store, queue, settings.group, progress=tick))
        people = enqueue_members(members, queue, settings.group)
    also = f", and the {len(members)} people of the workspace" if people else ""
    typer.echo(f"enqueued {report.enqueued} {kind} documents "
               f"({len(report.added)} new, {len(report.updated)} changed, "
               f"{report.unchanged} unchanged){also}; run `knotwork worker` to process them")


def sync_enqueuer(settings: Settings, queue: JobQueue, store: DocumentStore) -> Enqueue:
    """The ``enqueue`` of :func:`knotwork.ingestion.sync.run_sync` (``sync --queue``)."""
    from knotwork.services.worker.enqueue import enqueue_documents

    def enqueue(documents: Iterable[RawDocument], progress: Callable[[int], None] | None
                ) -> tuple[list[str], list[str], int, int]:
        report: EnqueueReport = enqueue_documents(documents, store, queue, settings.group,
                                                  progress=progress)
        return report.added, report.updated, report.unchanged, report.enqueued

    return enqueue


def queued_sync(kw: object, source: SyncSource, progress: Callable[[int], None]) -> SyncReport:
    """``knotwork sync … --queue``: listing, deletions and the cursor here; new and changed
    documents as EXTRACT_ENTITIES tasks (``tasks_enqueued``)."""
    from knotwork.core import Knotwork
    from knotwork.infra.queue.factory import create_job_queue
    from knotwork.ingestion.pipeline import IngestionPipeline
    from knotwork.ingestion.sync import run_sync

    assert isinstance(kw, Knotwork)
    rt, group = kw.runtime, kw.settings.group
    queue = create_job_queue(kw.settings, rt.graph)
    try:
        return run_sync(IngestionPipeline(rt, group), rt.documents, group, source, progress,
                        enqueue=sync_enqueuer(kw.settings, queue, rt.documents),
                        max_chars=kw.settings.max_document_chars)
    finally:
        queue.close()


def _with_progress(label: str, total: int | None,
                   work: Callable[[Callable[[int], None]], EnqueueReport]) -> EnqueueReport:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, transient=True, disable=not sys.stderr.isatty()) as bar:
        task = bar.add_task(label, total=total, rate="")

        def tick(n: int) -> None:
            bar.advance(task, n)
            speed = bar.tasks[0].speed
            bar.update(task, rate=f"{speed:.1f}/s" if speed else "")

        return work(tick)


@contextmanager
def _stop_on_signals() -> Iterator[threading.Event]:
    """SIGTERM / SIGINT: finish the current batch, then stop (a second one kills)."""
    stop = threading.Event()

    def handler(signum: int, frame: object) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield stop
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def worker(
    until_empty: Annotated[bool, typer.Option(
        "--until-empty", help="Exit once no job is waiting, pending or retrying.")] = False,
    max_jobs: Annotated[int | None, typer.Option("--max-jobs", min=1,
                                                 help="Exit after this many jobs.")] = None,
    name: Annotated[str | None, typer.Option("--name", help="Consumer name "
                                             "(default host-pid).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the totals as JSON.")] = False,
) -> None:
    """Process the job queue (any number of workers may run; see `knotwork status`)."""
    import redis

    from knotwork.services.worker.worker import WorkerStats

    settings = _settings()
    totals = WorkerStats()
    with _stop_on_signals() as stop:
        for attempt in range(MAX_RECONNECTS + 1):
            try:
                _work(settings, totals, stop, until_empty, max_jobs, name)
                break
            except redis.ConnectionError as exc:  # e.g. the embedded server was stopped
                if attempt == MAX_RECONNECTS or stop.is_set():
                    _fail(f"lost the queue's Redis: {_first_line(exc)}")
                typer.echo(f"knotwork: warning: lost the queue's Redis ({_first_line(exc)}); "
                           "reconnecting", err=True)
    if as_json:
        typer.echo(json.dumps(totals.__dict__))
    else:
        typer.echo(f"worker done: {totals.jobs} jobs ({totals.extracted} documents extracted, "
                   f"{totals.unchanged} unchanged, {totals.chunks} chunks, "
                   f"{totals.resolved} entities re-resolved ({totals.merged} merged), "
                   f"{totals.resummarized} communities re-summarized, "
                   f"{totals.employment_facts} employment facts, "
                   f"{totals.retried} retried, {totals.dead} dead-lettered)")


def _work(settings: Settings, totals: object, stop: threading.Event, until_empty: bool,
          max_jobs: int | None, name: str | None) -> None:
    from knotwork.infra.queue.factory import create_job_queue, create_writer_lock, redis_client
    from knotwork.infra.queue.heartbeat import Heartbeat
    from knotwork.services.worker.stores import CommitGate, open_worker_runtime
    from knotwork.services.worker.worker import Worker, WorkerStats

    assert isinstance(totals, WorkerStats)
    try:
        runtime, vectors = open_worker_runtime(settings)
    except Exception as exc:  # noqa: BLE001
        _fail(f"cannot open the stores in {settings.data_dir}: {_first_line(exc)}")
    try:
        runtime.extractor.extract(["Warm up."], {})  # load the models before taking jobs
        runtime.embedder.embed(["warm up"])
        log.info("worker.ready", pid=os.getpid())
        queue = create_job_queue(settings, runtime.graph)
        client = redis_client(settings, runtime.graph)
        gate = CommitGate(create_writer_lock(settings, runtime.graph), vectors, client,
                          settings.queue_prefix)
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        columns = (SpinnerColumn(), TextColumn("[bold]worker {task.completed} jobs"),
                   TextColumn("{task.fields[rate]}"), TextColumn("backlog {task.fields[left]}"),
                   TimeElapsedColumn())
        with Progress(*columns, transient=True, disable=not sys.stderr.isatty()) as bar:
            task = bar.add_task("worker", total=None, rate="", left="?")

            def on_batch(n: int) -> None:
                bar.advance(task, n)
                speed = bar.tasks[0].speed
                bar.update(task, rate=f"{speed:.1f}/s" if speed else "",
                           left=str(queue.stats().outstanding))

            beats = Heartbeat(client, prefix=settings.queue_prefix,
                              ttl_s=settings.worker_heartbeat_ttl_s,
                              every_s=settings.worker_heartbeat_s)
            job_worker = Worker(runtime, queue, gate, name=name, on_batch=on_batch,
                                known_stale=gate.others_committed, heartbeat=beats)
            job_worker.stats = totals
            job_worker.run(stop=stop, until_empty=until_empty, max_jobs=max_jobs)
    finally:
        runtime.close()


@queue_app.command("dlq")
def dlq(
    limit: Annotated[int, typer.Option("--limit", min=1, help="Newest first, at most.")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the dead letters: tasks that failed every retry, with their errors."""
    with queue_stores(_settings()) as (_, queue):
        dead = queue.dead_letters(limit)
    if as_json:
        typer.echo(json.dumps([d.model_dump(mode="json", exclude={"body"}) for d in dead],
                              indent=2))
        return
    if not dead:
        typer.echo("no dead letters")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"dead letters ({len(dead)} shown)")
    for column in ("id", "type", "task", "tries", "failed at", "error"):
        table.add_column(column)
    for d in dead:
        table.add_row(d.message_id, d.kind, (d.task_id or "")[:8],
                      str(d.retry_count + 1), d.failed_at.strftime("%Y-%m-%d %H:%M:%S"), d.error)
    Console().print(table)


@queue_app.command("retry")
def retry(
    ids: Annotated[list[str] | None, typer.Argument(help="Dead-letter ids (default: all).")]
    = None,
) -> None:
    """Put dead letters back on the queue (their retry count starts again)."""
    with queue_stores(_settings()) as (_, queue):
        moved = queue.requeue_dead(ids or None)
    typer.echo(f"re-queued {moved} dead letters")


@queue_app.command("purge")
def purge(
    yes: Annotated[bool, typer.Option("--yes", help="Really delete every queued job.")] = False,
) -> None:
    """Delete every waiting, retrying and dead job (documents stay as they are)."""
    if not yes:
        _fail("purge deletes every queued job: pass --yes")
    with queue_stores(_settings()) as (_, queue):
        queue.purge()
    typer.echo("queue purged")


@contextmanager
def _heartbeats(settings: Settings) -> Iterator[Heartbeat]:
    """The workers' beats in the queue's Redis (no SQL, no vectors: cheap enough for a
    container healthcheck)."""
    from knotwork.infra.graph_factory import create_graph_store
    from knotwork.infra.queue.factory import redis_client
    from knotwork.infra.queue.heartbeat import Heartbeat

    graph = None
    try:
        if not settings.redis_url:
            graph = create_graph_store(settings)  # its server carries the streams
        client = redis_client(settings, graph)
        client.ping()
    except Exception as exc:  # noqa: BLE001 - one line, exit 2
        if graph is not None:
            graph.close()
        _fail(f"cannot reach the job queue's Redis: {_first_line(exc)}")
    try:
        yield Heartbeat(client, prefix=settings.queue_prefix,
                        ttl_s=settings.worker_heartbeat_ttl_s)
    finally:
        client.close()
        if graph is not None:
            graph.close()


@queue_app.command("workers")
def workers(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the live workers: name, host, pid, jobs done, seconds since their last beat."""
    settings = _settings()
    with _heartbeats(settings) as beats:
        live = beats.workers()
    if as_json:
        typer.echo(json.dumps([{**b.model_dump(mode="json"), "age_s": round(b.age_s(), 1)}
                               for b in live], indent=2))
        return
    if not live:
        typer.echo("no live workers")
        return
    for b in live:
        typer.echo(f"{b.name}  host={b.host} pid={b.pid} jobs={b.jobs} "
                   f"last beat {b.age_s():.0f}s ago")


@queue_app.command("alive")
def alive(
    within: Annotated[float | None, typer.Option(
        "--within", min=0.1, help="Seconds (default: worker_heartbeat_ttl_s).")] = None,
    this_host: Annotated[bool, typer.Option(
        "--this-host", help="Only a worker of this host (a container's own healthcheck).")]
    = False,
) -> None:
    """Exit 0 when a worker beat within --within seconds, 1 otherwise (a healthcheck)."""
    import socket

    settings = _settings()
    window = within if within is not None else settings.worker_heartbeat_ttl_s
    host = socket.gethostname() if this_host else None
    with _heartbeats(settings) as beats:
        live = beats.alive(window, host=host)
    if not live:
        where = f" on host {host}" if host else ""
        typer.echo(f"knotwork: no worker{where} beat in the last {window:g}s", err=True)
        raise typer.Exit(1)
    typer.echo(f"{len(live)} live worker(s): {', '.join(b.name for b in live)}")


def register(app: typer.Typer) -> None:
    app.command("worker")(worker)
    app.add_typer(queue_app, name="queue")
