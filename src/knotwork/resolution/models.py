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
