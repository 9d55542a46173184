"""Job-queue tasks in the message formats of design doc 003 ("Queue Message Formats").

Four kinds travel on the job streams (see :class:`knotwork.domain.ports.JobQueue`):

* ``EXTRACT_ENTITIES`` — one source document (``chunk_id`` ``None``: every chunk of it) or
  one chunk. The task carries the document itself, so a worker needs no access to the
  source; handling it is idempotent (an unchanged, COMPLETED document is skipped).
* ``RESOLVE_ENTITY`` — one entity to resolve against the tenant's graph: a name, or (with
  ``entity.entity_id``) a stored entity whose ingestion decision was deferred (tied
  candidates) — re-resolved with the embedding of its source chunk, merged when the match
  is now automatic.
* ``COMMUNITY_UPDATED`` — a community whose summary went stale: re-summarize it.
* ``DERIVE_EMPLOYMENT`` — the people of a workspace an ingest brought: WORKS_AT for those the
  graph knows, once the extraction before it is done.

Serialised as JSON; :func:`decode_task` picks the model by ``task_type`` / ``event_type``.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.models import EntityType, RawDocument, WorkspaceMember
from knotwork.domain.timeutil import utcnow


class Priority(StrEnum):
    HIGH = "HIGH"
    NORMAL = "NORMAL"
    LOW = "LOW"


PRIORITY_ORDER: tuple[Priority, ...] = (Priority.HIGH, Priority.NORMAL, Priority.LOW)


def _task_id() -> str:
    return str(uuid.uuid4())


class _Task(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str = Field(default_factory=_task_id)
    group_id: str
    priority: Priority = Priority.NORMAL
    created_at: datetime = Field(default_factory=utcnow)
    retry_count: int = Field(default=0, ge=0)


class ExtractMetadata(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source_system: str
    document_title: str
    source_id: str
    content_hash: str  # of the version enqueued (title + content)


class ExtractEntitiesTask(_Task):
    task_type: Literal["EXTRACT_ENTITIES"] = "EXTRACT_ENTITIES"
    document_id: str
    chunk_id: str | None = None  # None: the whole document (every chunk)
    chunk_content: str | None = None
    chunk_index: int | None = None
    metadata: ExtractMetadata
    document: RawDocument


class EntityToResolve(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    display_name: str
    entity_type: EntityType | None = None
    embedding: list[float] = Field(default_factory=list)
    source_chunk_id: str | None = None
    # the stored entity to re-resolve against the others (a deferred ingestion decision);
    # None: resolve ``display_name`` only (the decision goes to the audit log)
    entity_id: str | None = None


class ResolveEntityTask(_Task):
    task_type: Literal["RESOLVE_ENTITY"] = "RESOLVE_ENTITY"
    priority: Priority = Priority.HIGH
    entity: EntityToResolve
    blocking_keys: list[str] = Field(default_factory=list)


class CommunityUpdatedTask(_Task):
    """The design's community update event, as a job (``event_type``, not ``task_type``)."""

    event_type: Literal["COMMUNITY_UPDATED"] = "COMMUNITY_UPDATED"
    priority: Priority = Priority.LOW
    community_id: str
    level: int
    entity_count: int
    summary_stale: bool = True
    timestamp: datetime = Field(default_factory=utcnow)


class DeriveEmploymentTask(_Task):
    """The people of a workspace an ingest brought (a Slack export's ``users.json``): after
    the documents' extraction, the tenant's persons among them get WORKS_AT its organisation
    (what an inline ingest does at its end). LOW priority: it waits behind the extraction."""

    task_type: Literal["DERIVE_EMPLOYMENT"] = "DERIVE_EMPLOYMENT"
    priority: Priority = Priority.LOW
    members: list[WorkspaceMember]
    deferrals: int = Field(default=0, ge=0)  # times it waited for the extraction before it


Task = ExtractEntitiesTask | ResolveEntityTask | CommunityUpdatedTask | DeriveEmploymentTask

_MODELS: dict[str, type[Task]] = {
    "EXTRACT_ENTITIES": ExtractEntitiesTask,
    "RESOLVE_ENTITY": ResolveEntityTask,
    "COMMUNITY_UPDATED": CommunityUpdatedTask,
    "DERIVE_EMPLOYMENT": DeriveEmploymentTask,
}


def task_kind(task: Task) -> str:
    return task.event_type if isinstance(task, CommunityUpdatedTask) else task.task_type


def encode_task(task: Task) -> str:
    return task.model_dump_json()


def decode_task(kind: str, body: str | bytes) -> Task:
    """``ValueError`` (or pydantic's ``ValidationError``) for an unknown kind or a bad body."""
    model = _MODELS.get(kind)
    if model is None:
        raise ValueError(f"unknown task type {kind!r}")
    return model.model_validate_json(body)


class Job(BaseModel):
    """One task handed to a worker; finish it with ``ack``, ``retry`` or ``dead_letter``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stream: str  # the priority stream it came from (``high`` / ``normal`` / ``low``)
    message_id: str
    task: Task
    deliveries: int = 1  # > 1 when re-delivered after a worker died holding it


class DeadLetter(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    message_id: str
    kind: str
    task_id: str | None
    group_id: str | None
    error: str
    stream: str
    deliveries: int
    retry_count: int
    failed_at: datetime
    body: str  # the task as it was (re-queued as is by ``requeue_dead``)


class StreamStats(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    stream: str
    length: int  # entries in the stream: waiting + being processed
    pending: int  # delivered to a worker, not yet finished
    consumers: int


class QueueStats(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    streams: list[StreamStats]
    retrying: int  # failed tasks waiting out their backoff
    dead: int

    @property
    def outstanding(self) -> int:
        return sum(s.length for s in self.streams) + self.retrying
