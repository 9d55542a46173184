"""``ingest --queue`` / ``sync --queue``: documents become EXTRACT_ENTITIES jobs.

Only what changed is enqueued: a document stored COMPLETED with the same content hash costs
nothing (no task). A new document gets a PENDING placeholder row (no chunks) so that
``knotwork status`` counts it; a changed one keeps its stored version (the worker withdraws
that version's evidence) and is marked PENDING.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from knotwork.domain.ids import document_digest, stable_id
from knotwork.domain.models import Document, ProcessingStatus, RawDocument, WorkspaceMember
from knotwork.domain.ports import DocumentStore, JobQueue
from knotwork.domain.tasks import (
    DeriveEmploymentTask,
    ExtractEntitiesTask,
    ExtractMetadata,
    Priority,
)
from knotwork.domain.timeutil import ensure_utc
from knotwork.ingestion.recovery import crashed


@dataclass
class EnqueueReport:
    documents_seen: int = 0
    enqueued: int = 0  # EXTRACT_ENTITIES tasks
    unchanged: int = 0
    added: list[str] = field(default_factory=list)  # source ids
    updated: list[str] = field(default_factory=list)
    task_ids: list[str] = field(default_factory=list)


def enqueue_documents(documents: Iterable[RawDocument], store: DocumentStore, queue: JobQueue,
                      group_id: str, *, priority: Priority = Priority.NORMAL,
                      progress: Callable[[int], None] | None = None) -> EnqueueReport:
    report = EnqueueReport()
    for raw in documents:
        report.documents_seen += 1
        doc_id = stable_id(group_id, "document", raw.source_system, raw.source_id)
        digest = document_digest(raw.title, raw.content, raw.acl)  # as the pipeline hashes
        stored = store.get_document_by_source(group_id, raw.source_system, raw.source_id)
        if stored is not None and stored.processing_status is ProcessingStatus.COMPLETED \
                and (stored.content_hash == digest or _older(raw, stored)):
            report.unchanged += 1  # (an older version than the stored one is not re-applied)
        else:
            if stored is None:
                store.save_document(_placeholder(raw, doc_id, group_id, digest), [])
                report.added.append(raw.source_id)
            else:
                if not crashed(stored):  # a dead attempt's mark stays: the worker rolls it back
                    store.set_status(stored.id, ProcessingStatus.PENDING)
                (report.updated if stored.chunk_count else report.added).append(raw.source_id)
            task = ExtractEntitiesTask(
                group_id=group_id, document_id=doc_id, priority=priority, document=raw,
                metadata=ExtractMetadata(source_system=raw.source_system.value,
                                         document_title=raw.title, source_id=raw.source_id,
                                         content_hash=digest))
            queue.enqueue(task)
            report.enqueued += 1
            report.task_ids.append(task.task_id)
        if progress:
            progress(1)
    return report


def enqueue_members(members: Sequence[WorkspaceMember], queue: JobQueue, group_id: str
                    ) -> str | None:
    """The workspace's people (a Slack export's ``users.json``) as one DERIVE_EMPLOYMENT task,
    LOW priority so that it runs after the extraction enqueued before it; ``None`` when there
    are none. Always enqueued when there are members, even over unchanged documents: a
    deactivated account ends its WORKS_AT as an inline ingest of the same export does."""
    if not members:
        return None
    task = DeriveEmploymentTask(group_id=group_id, members=list(members))
    queue.enqueue(task)
    return task.task_id


def _placeholder(raw: RawDocument, doc_id: str, group_id: str, digest: str) -> Document:
    return Document(
        id=doc_id, group_id=group_id, source_system=raw.source_system, source_id=raw.source_id,
        title=raw.title, url=raw.url, author=raw.author, created_at=raw.created_at,
        modified_at=raw.modified_at, mime_type=raw.mime_type, content_hash=digest,
        processing_status=ProcessingStatus.PENDING, chunk_count=0, metadata=raw.metadata)


def _older(raw: RawDocument, stored: Document) -> bool:
    return bool(raw.modified_at and stored.modified_at
                and ensure_utc(raw.modified_at) < ensure_utc(stored.modified_at))
