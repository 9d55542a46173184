"""Typed records of the resolution workflow: review items, merge lineage, audit entries."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class ReviewStatus(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    MERGED = "merged"  # merged into another entity by the reviewer


class ReviewCandidate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entity_id: str
    name: str
    type: str
    score: float
    name_score: float
    embedding_score: float | None = None
    type_score: float | None = None
    name_level: str = ""


class ReviewItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    group_id: str
    status: ReviewStatus = ReviewStatus.PENDING
    mention: str
    entity_type: str
    entity_id: str | None  # the entity the mention was attached to (None: kept apart)
    decision: str
    score: float
    candidates: list[ReviewCandidate] = Field(default_factory=list)
    episode_ids: list[str] = Field(default_factory=list)
    alias_added: str | None = None
    created_at: datetime
    decided_at: datetime | None = None
    decided_by: str | None = None
    outcome: str | None = None


class MergeRecord(BaseModel):
    """An entity merge and the exact prior state (graph JSON snapshot) it replaced."""

    model_config = ConfigDict(extra="forbid")
    id: str
    group_id: str
    target_id: str
    source_ids: list[str]
    snapshot: dict[str, list[dict[str, object]]]
    actor: str
    created_at: datetime
    undone_at: datetime | None = None


class AuditEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: str
    entity_id: str | None
    detail: str
    created_at: datetime


class MentionExample(BaseModel):
    model_config = ConfigDict(extra="forbid")
    chunk_id: str
    text: str
    snippet: str
    document_title: str = ""
    document_url: str | None = None


class ReviewSort(StrEnum):
    NEWEST = "newest"
    IMPACT = "impact"  # most mentions affected first
    SCORE = "score"  # lowest score (least sure) first


class ReviewFilter(BaseModel):
    """Which review items a page (or a bulk decision) covers."""

    model_config = ConfigDict(extra="forbid")
    status: ReviewStatus | None = ReviewStatus.PENDING  # None: every status
    query: str = Field(default="", max_length=200)  # mention contains (case-insensitive)
    entity_type: str | None = Field(default=None, max_length=32)
    decision: str | None = Field(default=None, max_length=32)
    min_score: float | None = Field(default=None, ge=0.0, le=1.0)
    max_score: float | None = Field(default=None, ge=0.0, le=1.0)
    sort: ReviewSort = ReviewSort.NEWEST


class ReviewPage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    items: list[ReviewItem]
    total: int  # items matching the filter
    counts: dict[str, int]  # per status, under the filter's other conditions


class ActionKind(StrEnum):
    """What an undoable entity action did."""

    SPLIT = "split"  # mentions made into a new entity
    MOVE = "move"  # mentions moved to another existing entity
    APPROVE = "approve"  # a review item kept as resolved
    REJECT = "reject"  # a review item's mention split off
    MERGE_INTO = "merge_into"  # a review item's mention moved to another candidate


class MentionRow(BaseModel):
    """One stored mention of an entity, with the document it is in."""

    model_config = ConfigDict(extra="forbid")
    id: str
    chunk_id: str
    text: str
    document_id: str
    document_title: str = ""


class EpisodeLinks(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entity_id: str
    ids: list[str]


class ActionSnapshot(BaseModel):
    """The prior state an action replaced: restoring it undoes the action exactly."""

    model_config = ConfigDict(extra="forbid")
    entities: list[dict[str, object]] = Field(default_factory=list)  # Entity JSON, before
    created_entity: str | None = None
    facts: list[dict[str, object]] = Field(default_factory=list)  # Fact JSON, before
    created_facts: list[str] = Field(default_factory=list)
    episodes: list[EpisodeLinks] = Field(default_factory=list)  # MENTIONS edges, before
    mentions: list[EpisodeLinks] = Field(default_factory=list)  # mention rows by owner, before
    cannot_links: list[tuple[str, str]] = Field(default_factory=list)  # (entity id, name key)
    review_id: str | None = None  # a review item put back to pending on undo
    merge_id: str | None = None  # a whole-entity merge the action made (undone by unmerge)
    moved_mentions: int = 0
    moved_facts: list[str] = Field(default_factory=list)


class EntityAction(BaseModel):
    """An undoable review action and the state it replaced."""

    model_config = ConfigDict(extra="forbid")
    id: str
    group_id: str
    kind: ActionKind
    review_id: str | None = None
    entity_ids: list[str]  # every entity it touched (for "undo the later one first")
    snapshot: ActionSnapshot
    actor: str
    created_at: datetime
    undone_at: datetime | None = None
