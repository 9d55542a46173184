"""The worker loop: fetch jobs (highest priority first), handle them, finish each one.

Delivery is at-least-once, so every handler is idempotent:

* ``EXTRACT_ENTITIES`` — the document in the task is prepared like an inline ingest; one that
  is stored unchanged and COMPLETED is skipped (a redelivery, or a duplicate task). The jobs
  of one fetch are processed as one batch (extraction outside, writes inside the store-writer
  gate, see :mod:`knotwork.services.worker.stores`); if the batch fails, each document is
  retried alone so one poison document cannot hold the others back. Its follow-up tasks are
  enqueued before its jobs are acknowledged; a redelivered job whose document is already
  COMPLETED re-derives them from the stored state (see
  :mod:`knotwork.services.worker.follow_ups`), so a worker dying in between loses none.
* ``RESOLVE_ENTITY`` — re-resolves an entity whose ingestion decision was deferred (tied
  candidates; workers enqueue these, HIGH priority, after the batch that created it) and
  merges it when the match is now automatic; a name-only task resolves the name. Decisions
  go to the audit log (``entity.resolution``). See :mod:`knotwork.services.worker.resolve`.
* ``COMMUNITY_UPDATED`` — re-summarizes the community if it is still stale (a stale-free
  event only drops the tenant's cached community values). Workers enqueue these themselves
  (LOW priority) when ``community_inline_summaries`` is off.
* ``DERIVE_EMPLOYMENT`` — the people of a workspace (``ingest --queue`` of a Slack export with
  ``users.json``): once the HIGH and NORMAL streams are empty (the extraction it follows is done,
  by any worker; a document waiting out a retry is not waited for), the tenant is consolidated if this worker extracted into it, then its persons among
  the members get WORKS_AT its organisation, as an inline ingest does at its end. While other
  jobs are there it waits (back on its stream after ``queue_retry_backoff_s``; a wait is not
  counted as a failure). See :mod:`knotwork.ingestion.employment`.

A failed job is retried after ``queue_retry_backoff_s`` × 2^retries (capped), at most
``queue_max_retries`` times; then it goes to the dead letters and its document is marked
FAILED. A job whose worker died ``queue_max_deliveries`` times is dead-lettered unprocessed.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import structlog

from knotwork.domain.models import AuditEvent, ProcessingStatus
from knotwork.domain.ports import CacheLayer, JobQueue
from knotwork.domain.tasks import (
    CommunityUpdatedTask,
    DeriveEmploymentTask,
    ExtractEntitiesTask,
    Job,
    ResolveEntityTask,
    Task,
)
from knotwork.domain.timeutil import ensure_utc, utcnow
from knotwork.ingestion.pipeline import CommitGuard, IngestionPipeline, IngestReport
from knotwork.runtime import Runtime
from knotwork.services.worker.follow_ups import batch_tasks, outstanding_tasks
from knotwork.services.worker.resolve import Outcome, handle_resolve

log = structlog.get_logger(__name__)


@dataclass
class WorkerStats:
    jobs: int = 0  # finished (acked), any kind
    extracted: int = 0  # documents (re-)extracted
    unchanged: int = 0  # extraction jobs whose document was already done
    chunks: int = 0
    resolved: int = 0  # RESOLVE_ENTITY tasks handled
    merged: int = 0  # ... of which merged their entity into another
    resummarized: int = 0
    employment_facts: int = 0  # WORKS_AT facts written by DERIVE_EMPLOYMENT tasks
    retried: int = 0
    dead: int = 0


class Beats(Protocol):
    """Where a worker's loop reports that it lives (``infra.queue.heartbeat.Heartbeat``)."""

    def beat(self, name: str, jobs: int = 0, *, force: bool = False) -> bool: ...

    def stop(self, name: str) -> None: ...


def consumer_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


def _error(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Worker:
    def __init__(self, runtime: Runtime, queue: JobQueue, guard: CommitGuard, *,
                 name: str | None = None, on_batch: Callable[[int], None] | None = None,
                 known_stale: Callable[[], bool] | None = None,
                 heartbeat: Beats | None = None) -> None:
        self._rt = runtime
        self._queue = queue
        self._guard = guard
        self._settings = runtime.settings
        self.name = name or consumer_name()
        self._pipelines: dict[str, IngestionPipeline] = {}
        self._on_batch = on_batch
        self._known_stale = known_stale or (lambda: False)
        self._heartbeat = heartbeat
        self.stats = WorkerStats()
        self._unconsolidated: set[str] = set()  # tenants extracted into since the last pass

    # ------------------------------------------------------------------ loop
    def run(self, *, stop: threading.Event | None = None, until_empty: bool = False,
            max_jobs: int | None = None, block_ms: int = 2000) -> WorkerStats:
        """Until ``stop`` is set, ``max_jobs`` were handled, or (``until_empty``) the queue has
        nothing left: no waiting, pending or retrying job."""
        stop = stop or threading.Event()
        beats = self._heartbeat
        try:
            if beats is not None:
                beats.beat(self.name, self.stats.jobs, force=True)
            while not stop.is_set():
                if max_jobs is not None and self.stats.jobs >= max_jobs:
                    break
                handled = self.run_once(block_ms=block_ms)
                if beats is not None:  # between fetches: a loop stuck in a store call stops beating
                    beats.beat(self.name, self.stats.jobs)
                if handled == 0 and until_empty and self._queue.stats().outstanding == 0:
                    break
        finally:
            self._release()
            if beats is not None:
                try:
                    beats.stop(self.name)
                except Exception as exc:  # noqa: BLE001 - Redis gone: the beat expires by itself
                    log.warning("worker.heartbeat_stop_failed", error=_error(exc))
        return self.stats

    def _yield(self) -> None:
        hand_over = getattr(self._guard, "yield_if_wanted", None)
        if hand_over is not None:
            hand_over()

    def _release(self) -> None:
        release = getattr(self._guard, "release", None)
        if release is not None:
            release()

    def run_once(self, block_ms: int | None = None) -> int:
        """One fetch; returns how many jobs it finished (acked, retried or dead-lettered)."""
        self._yield()
        jobs = self._queue.fetch(self.name, count=self._settings.queue_batch, block_ms=block_ms,
                                 claim_idle_ms=int(self._settings.queue_claim_idle_s * 1000))
        if not jobs:
            self._consolidate_when_drained()
            self._release()  # idle: let another worker (or a CLI) have the stores
            return 0
        live: list[Job] = []
        for job in jobs:
            if job.deliveries > self._settings.queue_max_deliveries:
                self._bury(job, f"delivered {job.deliveries} times without finishing "
                                "(the worker died each time)")
            else:
                live.append(job)
        extract = [j for j in live if isinstance(j.task, ExtractEntitiesTask)]
        for group in dict.fromkeys(j.task.group_id for j in extract):
            self._extract([j for j in extract if j.task.group_id == group])
        for job in live:
            if not isinstance(job.task, ExtractEntitiesTask):
                self._one(job)
        if self._on_batch:
            self._on_batch(len(jobs))
        return len(jobs)

    # ------------------------------------------------------------------ handlers
    def _pipeline(self, group: str) -> IngestionPipeline:
        if group not in self._pipelines:
            self._pipelines[group] = IngestionPipeline(
                self._rt, group, batch_documents=self._settings.queue_batch,
                commit_guard=self._guard)
        return self._pipelines[group]

    def _extract(self, jobs: Sequence[Job]) -> None:
        pipeline = self._pipeline(jobs[0].task.group_id)
        if self._known_stale():
            pipeline.forget_known()
        try:
            redelivered = [j.task.document for j in jobs if isinstance(j.task, ExtractEntitiesTask)
                           and (j.deliveries > 1 or j.task.retry_count > 0)]
            if redelivered:  # an attempt died or failed: roll back what it half wrote first
                pipeline.recover(redelivered)
            self._extract_batch(pipeline, jobs)
        except Exception as exc:  # noqa: BLE001 - any failure: retry the documents one by one
            if len(jobs) == 1:
                self._fail(jobs[0], exc)
                return
            log.warning("worker.batch_failed", jobs=len(jobs), error=_error(exc))
            for job in jobs:
                try:  # resumed: the batch may have committed it and failed after
                    self._extract_batch(pipeline, [job], resumed=True)
                except Exception as one:  # noqa: BLE001
                    self._fail(job, one)

    def _superseded(self, job: Job, newest: dict[str, Job]) -> bool:
        """An older version of a document than one in this batch or already stored."""
        task = job.task
        assert isinstance(task, ExtractEntitiesTask)
        if newest[task.document_id] is not job:
            return True
        stored = self._rt.documents.get_documents([task.document_id])
        when = task.document.modified_at
        return bool(stored and stored[0].processing_status is ProcessingStatus.COMPLETED
                    and stored[0].modified_at and when
                    and ensure_utc(when) < ensure_utc(stored[0].modified_at))

    def _extract_batch(self, pipeline: IngestionPipeline, jobs: Sequence[Job], *,
                       resumed: bool = False) -> None:
        prepared, todo, done, again = [], [], [], []
        group = jobs[0].task.group_id
        newest = {j.task.document_id: j for j in jobs
                  if isinstance(j.task, ExtractEntitiesTask)}  # stream order: last is newest
        for job in jobs:
            task = job.task
            assert isinstance(task, ExtractEntitiesTask)
            if self._superseded(job, newest):
                done.append(job)
                self.stats.unchanged += 1
                continue
            ready = pipeline.prepare(task.document)
            if ready is None:
                done.append(job)
                self.stats.unchanged += 1
                if resumed or job.deliveries > 1 or task.retry_count > 0:
                    again.append(task.document_id)  # maybe committed by an attempt that died
            else:
                prepared.append(ready)
                todo.append(job)
        if again:  # before the acks: the follow-ups that attempt may not have enqueued
            self._enqueue(outstanding_tasks(self._rt, group, again))
        for job in done:
            self._ack(job)
        if not prepared:
            return
        report = pipeline.process(prepared)
        if report.added or report.updated:
            self._unconsolidated.add(group)
        self._follow_up(group, report)  # before the acks: none is lost
        for job in todo:
            self._ack(job)
        self.stats.extracted += report.documents_ingested
        self.stats.unchanged += report.documents_unchanged
        self.stats.chunks += report.chunks

    def _consolidate_when_drained(self) -> None:
        """The queue has nothing left: each tenant extracted into since the last pass gets the
        consolidation an inline ingest runs at its end (twins merged, types re-decided), so a
        queued ingest stores what an inline one does."""
        if not self._unconsolidated or self._queue.stats().outstanding:
            return  # nothing new, or more to come (another worker's jobs, retries)
        groups, self._unconsolidated = sorted(self._unconsolidated), set()
        self._consolidate(groups)

    def _consolidate(self, groups: Sequence[str]) -> None:
        if not self._settings.consolidate_after_ingest:
            return
        from knotwork.resolution.consolidate import consolidate

        for group in groups:
            try:
                with self._guard():
                    report = consolidate(self._rt, group)
            except Exception as exc:  # noqa: BLE001 - the next drained queue tries again
                log.warning("worker.consolidate_failed", group=group, error=_error(exc))
                self._unconsolidated.add(group)
                continue
            pipeline = self._pipelines.get(group)
            if pipeline is not None and (report.merged_entities or report.retyped or report.retired):
                pipeline.forget_known()  # its cache of known names holds old types or twins
            from knotwork.ingestion.team_lines import derive_team_lines

            with self._guard():  # the lines of the settled graph (what an inline ingest derives)
                derive_team_lines(self._rt, group, utcnow())

    def _follow_up(self, group: str, report: IngestReport) -> None:
        """The tasks a committed batch calls for: RESOLVE_ENTITY per deferred (tied)
        decision, COMMUNITY_UPDATED per community it left stale (unless re-summarized
        inline)."""
        self._enqueue(batch_tasks(self._rt, group, report.deferred, report.stale_communities))

    def _enqueue(self, tasks: Sequence[Task]) -> None:
        for task in tasks:
            self._queue.enqueue(task)

    def _one(self, job: Job) -> None:
        try:
            if isinstance(job.task, ResolveEntityTask):
                self._resolve(job.task)
            elif isinstance(job.task, CommunityUpdatedTask):
                self._resummarize(job.task)
            elif isinstance(job.task, DeriveEmploymentTask) and not self._employ(job):
                return  # waits for the extraction still outstanding
        except Exception as exc:  # noqa: BLE001
            self._fail(job, exc)
            return
        self._ack(job)

    def _employ(self, job: Job) -> bool:
        """False (and the job back on its stream after a pause) while higher-priority jobs are
        there: the people it relates must be extracted first, by whichever worker."""
        task = job.task
        assert isinstance(task, DeriveEmploymentTask)
        if any(s.length for s in self._queue.stats().streams if s.stream != task.priority.value.lower()):
            waiting = job.model_copy(update={"task": task.model_copy(
                update={"deferrals": task.deferrals + 1})})  # a wait is not a failure
            self._queue.retry(waiting, "waiting for the extraction before it",
                              self._settings.queue_retry_backoff_s)
            return False
        if task.group_id in self._unconsolidated:  # merge twins and re-type before relating
            self._unconsolidated.discard(task.group_id)
            self._consolidate([task.group_id])
        from knotwork.ingestion.employment import derive_employment

        with self._guard():
            report = derive_employment(self._rt, task.group_id, task.members, utcnow())
        log.info("worker.employment", group=task.group_id, members=len(task.members),
                 organization=report.organization, facts=report.facts)
        self.stats.employment_facts += report.facts
        return True

    def _resolve(self, task: ResolveEntityTask) -> None:
        with self._guard():  # reads the entity vectors, may merge
            outcome = handle_resolve(self._rt, task)
        if outcome.outcome is Outcome.MERGED:
            pipeline = self._pipelines.get(task.group_id)
            if pipeline is not None:  # its cache of known names holds the merged entity
                pipeline.forget_known()
            self.stats.merged += 1
        self.stats.resolved += 1

    def _resummarize(self, task: CommunityUpdatedTask) -> None:
        from knotwork.communities.service import CommunityService

        if not task.summary_stale:  # already re-summarized: drop the cached community values
            if self._rt.cache is not None:
                self._rt.cache.invalidate_layer(task.group_id, CacheLayer.COMMUNITY)
            return
        with self._guard():
            done = CommunityService(self._rt, task.group_id).refresh([task.community_id])
        self.stats.resummarized += len(done)

    # ------------------------------------------------------------------ finishing
    def _ack(self, job: Job) -> None:
        if self._queue.ack(job):  # False when already finished (a batch retried one by one)
            self.stats.jobs += 1

    def _fail(self, job: Job, exc: BaseException) -> None:
        error = _error(exc)
        retries = job.task.retry_count - getattr(job.task, "deferrals", 0)
        if retries >= self._settings.queue_max_retries:
            self._bury(job, error)
            return
        delay = min(self._settings.queue_retry_backoff_s * (2 ** retries),
                    self._settings.queue_max_backoff_s)
        log.warning("worker.retry", task=job.task.task_id, retry=retries + 1, delay=delay,
                    error=error)
        self._queue.retry(job, error, delay)
        self.stats.retried += 1

    def _bury(self, job: Job, error: str) -> None:
        log.error("worker.dead_letter", task=job.task.task_id, error=error)
        self._queue.dead_letter(job, error)
        self.stats.dead += 1
        task = job.task
        if isinstance(task, ExtractEntitiesTask):
            try:
                self._rt.documents.set_status(task.document_id, ProcessingStatus.FAILED)
                self._rt.documents.record_audit(AuditEvent(
                    group_id=task.group_id, action="document.failed",
                    detail=f"{task.metadata.source_system}:{task.metadata.source_id}: {error}"))
            except Exception as exc:  # noqa: BLE001 - the dead letter itself is kept
                log.warning("worker.mark_failed", document=task.document_id, error=_error(exc))


def wait_until_idle(queue: JobQueue, timeout_s: float, poll_s: float = 0.2) -> bool:
    """True once the queue has no waiting, pending or retrying job (tests, benchmarks)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if queue.stats().outstanding == 0:
            return True
        time.sleep(poll_s)
    return False
