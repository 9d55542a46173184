"""Typed domain records shared by every stage and every adapter.

Times are timezone-aware UTC datetimes in Python; adapters serialise them as
ISO-8601 strings (see :func:`knotwork.domain.timeutil.to_iso`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from knotwork.domain.evidence import aligned_confidences, aligned_valid_at


class EntityType(StrEnum):
    PERSON = "PERSON"
    ORGANIZATION = "ORGANIZATION"
    LOCATION = "LOCATION"
    CONCEPT = "CONCEPT"
    EVENT = "EVENT"
    PRODUCT = "PRODUCT"
    TECHNOLOGY = "TECHNOLOGY"


class RelationType(StrEnum):
    WORKS_AT = "WORKS_AT"
    REPORTS_TO = "REPORTS_TO"
    MANAGES = "MANAGES"
    MEMBER_OF = "MEMBER_OF"
    LEADS = "LEADS"
    LOCATED_IN = "LOCATED_IN"
    HEADQUARTERED_IN = "HEADQUARTERED_IN"
    OWNS = "OWNS"
    ACQUIRED = "ACQUIRED"
    INVESTED_IN = "INVESTED_IN"
    COLLABORATED_WITH = "COLLABORATED_WITH"
    CREATED = "CREATED"
    DEVELOPED = "DEVELOPED"
    MAINTAINS = "MAINTAINS"
    USES = "USES"
    DEPENDS_ON = "DEPENDS_ON"
    RELATED_TO = "RELATED_TO"


class EpisodeSource(StrEnum):
    MESSAGE = "message"
    TEXT = "text"
    JSON = "json"


class SourceSystem(StrEnum):
    CONFLUENCE = "confluence"
    SLACK = "slack"
    FILE = "file"
    EPISODE = "episode"


class ProcessingStatus(StrEnum):
    PENDING = "PENDING"
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PropertyValue(_Model):
    """One value of an entity property with its provenance (issue 5: merged with provenance)."""

    value: str
    source: str = ""  # the episode (chunk) or entity the value came from
    confidence: float = 1.0


class Entity(_Model):
    id: str
    group_id: str
    name: str
    canonical_name: str
    type: EntityType
    subtype: str | None = None
    aliases: list[str] = Field(default_factory=list)
    # normalised name + aliases: the exact-match resolution keys
    name_keys: list[str] = Field(default_factory=list)
    summary: str = ""
    confidence: float = 1.0
    evidence_count: int = 1
    created_at: datetime
    updated_at: datetime
    # resolution tracking (design doc 003): merged entities live on in merged_from / lineage
    properties: dict[str, list[PropertyValue]] = Field(default_factory=dict)
    merged_from: list[str] = Field(default_factory=list)
    canonical_entity_id: str | None = None  # None or own id: canonical
    resolution_confidence: float | None = None
    # optimistic locking: bumped by the store whenever a write changes what people see
    version: int = Field(default=1, ge=1)


# Extraction methods of facts derived from a source's metadata rather than stated in a
# passage (the workspace's members work at the tenant's organisation): graph facts that
# retrieval and community detection leave out, so they never crowd an answer's candidates
# ("team_line": a reporting line implied by a team's ended lead, ``ingestion.team_lines``).
DERIVED_METHODS: frozenset[str] = frozenset({"workspace", "team_line"})


class Fact(_Model):
    """A RELATES_TO edge between two entities, bi-temporal.

    valid_at / invalid_at: when the fact held in the world.
    created_at / expired_at: when Knotwork learned it / learned it stopped holding.
    episodes: ids of the episodes (chunks) that evidence it.
    episode_confidences: the extraction confidence of each of them (aligned with
    ``episodes``); ``confidence`` is computed from them (``domain.evidence``).
    episode_valid_at: the start of validity each of them gives; ``valid_at`` is the earliest.
    """

    id: str
    group_id: str
    source_id: str
    target_id: str
    type: RelationType
    fact: str
    confidence: float = 1.0
    episodes: list[str] = Field(default_factory=list)
    episode_confidences: list[float] = Field(default_factory=list)
    episode_valid_at: list[datetime | None] = Field(default_factory=list)
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    created_at: datetime
    expired_at: datetime | None = None
    extraction_method: str = "rule"
    # the newer fact that ended this one (a contradiction); retired with its evidence, it
    # gives this one back its validity
    invalidated_by: str | None = None

    @property
    def derived(self) -> bool:
        """Derived from a source's metadata (``DERIVED_METHODS``), not stated in a passage."""
        return self.extraction_method in DERIVED_METHODS

    @model_validator(mode="after")
    def _aligned(self) -> Fact:
        """Per-episode lists always aligned with ``episodes`` (a fact made without them gets
        what the store would give it), so a fact equals itself read back from any store."""
        if len(self.episode_confidences) != len(self.episodes):
            self.episode_confidences = aligned_confidences(self.confidence, self.episodes,
                                                           self.episode_confidences)
        if len(self.episode_valid_at) != len(self.episodes):
            self.episode_valid_at = aligned_valid_at(self.valid_at, self.episodes,
                                                     self.episode_valid_at)
        return self


class Episode(_Model):
    """One unit of evidence: a chunk of a document, or a message added directly."""

    id: str
    group_id: str
    name: str
    content: str
    source: EpisodeSource = EpisodeSource.TEXT
    source_description: str = ""
    document_id: str
    valid_at: datetime
    created_at: datetime


class GraphCounts(_Model):
    entities: int
    facts: int
    episodes: int
    mentions: int


class EntityEvidence(_Model):
    """What the episodes mentioning an entity say about it now (issue 18): how many there
    are and the earliest one's time. An entity's evidence count and first-seen time are
    these, recomputed, so they do not depend on the batches or the order that wrote them."""

    episodes: int
    first_seen: datetime | None = None


class FactHit(_Model):
    fact: Fact
    hop: int  # 0 = touches a seed entity


class RawDocument(_Model):
    """What a loader yields: text plus source metadata, before storage."""

    source_system: SourceSystem
    source_id: str
    title: str
    content: str
    url: str | None = None
    author: str | None = None
    created_at: datetime | None = None
    modified_at: datetime | None = None
    mime_type: str = "text/plain"
    episode_source: EpisodeSource = EpisodeSource.TEXT
    metadata: dict[str, str] = Field(default_factory=dict)
    # who may read it at the source ("user:<id or email>", "group:<name>"); empty = everyone
    acl: list[str] = Field(default_factory=list)


@dataclass(frozen=True, slots=True)
class WorkspaceMember:
    """One person of a source workspace (a Slack export's ``users.json``): their name, title
    and e-mail, and whether they left. Not a document: the employment pass reads the members
    as evidence of who works where."""

    name: str
    title: str = ""
    email: str = ""
    left: bool = False
    left_at: datetime | None = None

    @property
    def domain(self) -> str:
        return self.email.rpartition("@")[2].lower() if "@" in self.email else ""


class Document(_Model):
    id: str
    group_id: str
    source_system: SourceSystem
    source_id: str
    title: str
    url: str | None = None
    author: str | None = None
    created_at: datetime | None = None
    modified_at: datetime | None = None
    mime_type: str = "text/plain"
    content_hash: str
    processing_status: ProcessingStatus = ProcessingStatus.PENDING
    chunk_count: int = 0
    entity_count: int = 0
    last_processed_at: datetime | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    acl: list[str] = Field(default_factory=list)  # empty: readable by everyone in the tenant


class Chunk(_Model):
    id: str
    document_id: str
    group_id: str
    index: int
    content: str
    start_offset: int
    end_offset: int
    token_count: int


class EntityMention(_Model):
    id: str
    group_id: str
    chunk_id: str
    entity_id: str
    span_start: int
    span_end: int
    text: str
    extractor: str
    confidence: float


class AuditEvent(_Model):
    group_id: str
    action: str
    entity_id: str | None = None
    detail: str = ""


class DocumentCounts(_Model):
    documents: int
    chunks: int
    mentions: int


class Citation(_Model):
    document_id: str
    source_system: str
    source_id: str
    title: str
    url: str | None = None
    created_at: str | None = None
    chunk_id: str
    text: str
    entity_id: str | None = None
    # the evidence text the citation stands for (a fact's sentence, an answer's sentence),
    # while an answer is assembled; never serialised (see retrieval/cited.py)
    _evidence: str = PrivateAttr(default="")


class QueryMode(StrEnum):
    AUTO = "auto"
    LOCAL = "local"
    GLOBAL = "global"
    DRIFT = "drift"


class KeyPoint(_Model):
    """One point of a global (community-based) answer: a fact or a source sentence."""

    text: str
    score: float
    community_id: str | None = None
    community: str = ""  # the community's title
    chunk_ids: list[str] = Field(default_factory=list)
    fact_id: str | None = None


class DriftIteration(_Model):
    """One DRIFT step: the primer (global) or a follow-up sub-query (local)."""

    query: str
    mode: QueryMode
    results: list[str] = Field(default_factory=list)  # the evidence it added (empty: none)
    coverage: float = 0.0  # share of the question's terms covered after this step
    confidence: float = 0.0
    chunk_ids: list[str] = Field(default_factory=list)


class QueryResult(_Model):
    answer: str
    citations: list[Citation]
    confidence: float
    mode_used: QueryMode
    context: str = ""
    reasoning_trace: list[str] = Field(default_factory=list)
    entities: list[Entity] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    # global and DRIFT only (optional: older callers see the fields above unchanged)
    key_points: list[KeyPoint] = Field(default_factory=list)
    communities: list[Community] = Field(default_factory=list)
    community_level: int | None = None
    iterations: list[DriftIteration] = Field(default_factory=list)
    final_coverage: float | None = None


class Community(_Model):
    """A node of the community hierarchy (design doc 003, Community schema).

    ``level`` 0 is a leaf; a parent's level is above each child's. ``entity_ids`` are the
    members (stored as HAS_MEMBER edges); every internal community is the union of its
    children. ``key_facts`` are fact ids, ``citations`` the episode (chunk) ids evidencing them.
    ``external_connectivity`` is the share of the members' edge weight that leaves the
    community (0 = closed, 1 = no internal edges).
    """

    id: str
    group_id: str
    level: int = Field(ge=0)
    name: str = ""
    parent_id: str | None = None
    child_ids: list[str] = Field(default_factory=list)
    entity_ids: list[str] = Field(default_factory=list)
    entity_count: int = 0
    summary: str = ""
    key_topics: list[str] = Field(default_factory=list)
    central_entities: list[str] = Field(default_factory=list)
    representative_entities: list[str] = Field(default_factory=list)
    key_facts: list[str] = Field(default_factory=list)
    citations: list[str] = Field(default_factory=list)
    modularity_contribution: float = 0.0
    internal_density: float = 0.0
    external_connectivity: float = 0.0
    summary_stale: bool = False
    summary_version: int = 0
    summarizer: str = ""
    created_at: datetime
    updated_at: datetime
    last_summarized_at: datetime | None = None


class CommunityState(_Model):
    """The record of a tenant's last full community build, plus the changes since."""

    group_id: str
    built_at: datetime
    entity_count: int  # projected entities at build time
    fact_count: int  # projected facts at build time
    community_count: int
    levels: int
    modularity: float = 0.0
    total_weight: float = 0.0  # summed edge weight of the projection (updated approximately)
    resolution: float = 1.0
    max_size: int = 10
    seed: int = 0
    changed_entities: int = 0  # assigned incrementally since the build
    changed_facts: int = 0  # facts touched since the build
    updated_at: datetime

    @property
    def changed_share(self) -> float:
        total = self.entity_count + self.fact_count
        return (self.changed_entities + self.changed_facts) / total if total else 1.0
