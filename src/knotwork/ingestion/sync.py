"""Incremental sync of one live source into one tenant.

A :class:`SyncSource` (``connectors.confluence.ConfluenceSource``,
``connectors.slack.SlackSource``) lists its scope and returns a :class:`SyncPlan`: the
documents that may have changed (fetched lazily, while the pipeline consumes them), how many it
knows to be unchanged without fetching them, and the source ids of stored documents that are
gone. :func:`run_sync` then

1. ingests the documents: an unchanged content hash costs nothing; a changed document is
   re-chunked and re-extracted after its old version's evidence is withdrawn, and facts left
   without evidence are retired (see :mod:`knotwork.ingestion.lineage`);
2. deletes the documents gone at the source, cascading to chunks, mentions, episodes, chunk
   vectors and facts (and entities) that only they evidenced;
3. stores the source's new cursor (``sync_state``), only once everything above succeeded.

A failed sync stores no cursor: running it again redoes the unfinished work idempotently.

With ``enqueue`` (``knotwork sync … --queue``) step 1 only puts the new and changed documents
on the job queue as EXTRACT_ENTITIES tasks (``tasks_enqueued``; zero when nothing changed) for
``knotwork worker`` to process; deletions still happen here, and the cursor is stored once
everything is enqueued (a task that ends in the dead letters leaves its document FAILED, and
the next sync fetches it again).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import structlog
from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.models import Document, RawDocument, SourceSystem
from knotwork.domain.ports import DocumentStore

if TYPE_CHECKING:  # the connectors import this module: keep it light
    from knotwork.ingestion.pipeline import IngestionPipeline

log = structlog.get_logger(__name__)

Progress = Callable[[int], None]


class Enqueue(Protocol):
    """Puts documents on the job queue; returns (added, updated, unchanged, enqueued)."""

    def __call__(self, documents: Iterable[RawDocument],
                 progress: Progress | None) -> tuple[list[str], list[str], int, int]: ...


@dataclass
class SyncPlan:
    """What a source's listing found. ``documents`` is consumed once, lazily; sources may
    append to ``deleted`` and bump ``skipped`` or update ``cursor`` while it is consumed."""

    documents: Iterable[RawDocument] = ()
    deleted: list[str] = field(default_factory=list)  # source ids gone at the source
    unchanged: int = 0  # known unchanged without fetching their content
    skipped: int = 0  # items that yield no document (no text, noise), reported only
    expected: int | None = None  # how many documents will come, when known
    cursor: str = ""  # stored after a successful sync


class SyncSource(Protocol):
    @property
    def system(self) -> SourceSystem: ...

    @property
    def key(self) -> str:
        """The ``sync_state.source`` of this source: one cursor per key and tenant."""
        ...

    @property
    def label(self) -> str:
        """For messages, e.g. ``confluence ENG``."""
        ...

    def plan(self, cursor: str | None, known: Mapping[str, Document]) -> SyncPlan:
        """List the source; ``known``: this tenant's stored documents of ``system`` by source id."""
        ...


class DocRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source_id: str
    title: str


class SyncReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source: str
    added: list[DocRef] = Field(default_factory=list)
    updated: list[DocRef] = Field(default_factory=list)
    deleted: list[DocRef] = Field(default_factory=list)
    unchanged: int = 0
    skipped: int = 0
    # over ``max_document_chars``: left out and reported (a stored earlier version stays)
    oversized: list[DocRef] = Field(default_factory=list)
    documents_processed: int = 0  # documents (re-)extracted: zero on a sync with no change
    tasks_enqueued: int = 0  # with --queue: EXTRACT_ENTITIES tasks (zero with no change)
    chunks: int = 0
    facts_retired: int = 0
    entities_retired: int = 0
    cursor: str = ""


def run_sync(pipeline: IngestionPipeline, documents: DocumentStore, group_id: str,
             source: SyncSource, progress: Progress | None = None,
             enqueue: Enqueue | None = None, max_chars: int | None = None) -> SyncReport:
    """One incremental sync of ``source``. Documents over ``max_chars`` characters are skipped
    and reported in ``oversized``; what is stored for them already is kept as it is."""
    known = {d.source_id: d for d in documents.list_documents(group_id)
             if d.source_system == source.system}
    plan = source.plan(documents.get_sync_cursor(group_id, source.key), known)
    titles: dict[str, str] = {}
    oversized: list[DocRef] = []

    def recorded(items: Iterable[RawDocument]) -> Iterator[RawDocument]:
        for raw in items:
            if max_chars is not None and len(raw.content) > max_chars:
                oversized.append(DocRef(source_id=raw.source_id, title=raw.title))
                log.warning("sync.document_too_large", source=source.key,
                            source_id=raw.source_id, chars=len(raw.content), limit=max_chars)
                continue
            titles[raw.source_id] = raw.title
            yield raw

    if enqueue is not None:
        from knotwork.ingestion.pipeline import IngestReport

        added, updated, unchanged, tasks = enqueue(recorded(plan.documents), progress)
        ingested = IngestReport(documents_unchanged=unchanged, added=added, updated=updated)
    else:
        tasks = 0
        ingested = pipeline.ingest(recorded(plan.documents), progress)
    gone = [known[sid] for sid in dict.fromkeys(plan.deleted) if sid in known]
    retired = pipeline.delete_documents(gone)
    documents.set_sync_cursor(group_id, source.key, plan.cursor)
    report = SyncReport(
        source=source.label,
        added=[DocRef(source_id=s, title=titles.get(s, s)) for s in ingested.added],
        updated=[DocRef(source_id=s, title=titles.get(s, s)) for s in ingested.updated],
        deleted=[DocRef(source_id=d.source_id, title=d.title) for d in gone],
        unchanged=plan.unchanged + ingested.documents_unchanged,
        skipped=plan.skipped + len(oversized),
        oversized=oversized,
        documents_processed=ingested.documents_ingested,
        tasks_enqueued=tasks,
        chunks=ingested.chunks,
        facts_retired=ingested.facts_retired + retired.facts,
        entities_retired=ingested.entities_retired + retired.entities,
        cursor=plan.cursor,
    )
    log.info("sync.done", group=group_id, source=source.key, added=len(report.added),
             updated=len(report.updated), deleted=len(report.deleted),
             unchanged=report.unchanged, facts_retired=report.facts_retired)
    return report
