"""Ports: one narrow Protocol per store aggregate. Adapters live in ``knotwork.infra``.

Every adapter of a port passes the same contract suite in ``tests/contract``.
All methods are synchronous; async callers run them in a worker thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.events import CommunitiesRebuilt, CommunityUpdated, Delivery
from knotwork.domain.models import (
    AuditEvent,
    Chunk,
    Community,
    CommunityState,
    Document,
    DocumentCounts,
    Entity,
    EntityMention,
    Episode,
    Fact,
    FactHit,
    GraphCounts,
    ProcessingStatus,
)

# --------------------------------------------------------------------------- graph


@runtime_checkable
class GraphStore(Protocol):
    """Entities, facts (RELATES_TO), episodes and MENTIONS of one or more tenants.

    Writes are idempotent upserts keyed by id. Tenants never see each other's data.
    """

    def ensure_schema(self, group_id: str) -> None: ...

    def upsert_episodes(self, episodes: Sequence[Episode]) -> None: ...

    def upsert_entities(self, entities: Sequence[Entity]) -> None: ...

    def upsert_mentions(self, group_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        """MERGE (episode)-[:MENTIONS]->(entity) for each (episode_id, entity_id)."""
        ...

    def upsert_facts(self, facts: Sequence[Fact]) -> None: ...

    def get_entities(self, group_id: str, ids: Sequence[str]) -> list[Entity]: ...

    def find_entities_by_keys(self, group_id: str, keys: Sequence[str]) -> list[Entity]:
        """Entities whose ``name_keys`` (normalised name + aliases) contain any key."""
        ...

    def get_facts(self, group_id: str, ids: Sequence[str]) -> list[Fact]: ...

    def facts_between(self, group_id: str, entity_ids: Sequence[str]) -> list[Fact]:
        """Facts (valid or not) whose two endpoints are both in ``entity_ids``."""
        ...

    def expand_facts(
        self,
        group_id: str,
        seed_ids: Sequence[str],
        *,
        depth: int = 2,
        as_of: datetime | None = None,
        include_invalid: bool = False,
        limit: int = 200,
    ) -> list[FactHit]:
        """Facts within ``depth`` hops of the seeds, hop 0 = touching a seed.

        ``as_of``: only facts valid at that time (valid_at <= t < invalid_at).
        Without it, invalidated facts are left out unless ``include_invalid``.
        """
        ...

    def get_episodes(self, group_id: str, ids: Sequence[str]) -> list[Episode]: ...

    def episode_entity_ids(self, group_id: str, episode_id: str) -> list[str]: ...

    def recent_episode_ids(self, group_id: str, limit: int) -> list[str]:
        """Ids of the newest episodes (by valid_at, then created_at), newest first."""
        ...

    def list_entities(self, group_id: str) -> list[Entity]: ...

    def list_facts(self, group_id: str) -> list[Fact]: ...

    def counts(self, group_id: str) -> GraphCounts: ...

    # -- lineage: withdrawing a document's evidence (a changed or deleted source page)

    def detach_document_episodes(self, group_id: str, document_ids: Sequence[str]) -> int:
        """Delete the documents' episodes (with their MENTIONS) and remove their ids from the
        ``episodes`` of every fact; facts keep their other evidence. Returns episodes deleted.
        """
        ...

    def unevidenced_facts(self, group_id: str) -> list[Fact]:
        """Facts whose ``episodes`` is empty (nothing evidences them any more)."""
        ...

    def delete_facts(self, group_id: str, ids: Sequence[str]) -> int:
        """Delete facts by id; returns how many existed."""
        ...

    def orphan_entity_ids(self, group_id: str) -> list[str]:
        """Entities that no episode mentions and no fact touches, sorted."""
        ...

    def delete_entities(self, group_id: str, ids: Sequence[str]) -> int:
        """Delete entities (and any edge of theirs) by id; returns how many existed."""
        ...

    # -- communities: Community nodes, (c)-[:HAS_MEMBER]->(entity), (parent)-[:PARENT_OF]->(c)

    def replace_communities(self, group_id: str, communities: Sequence[Community]) -> None:
        """Delete every community of the tenant, then write these with members and links."""
        ...

    def upsert_communities(self, communities: Sequence[Community]) -> None:
        """Write the properties (summary, metrics, counts) of existing or new communities.

        Membership is not touched: see :meth:`add_community_members`.
        """
        ...

    def add_community_members(self, group_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        """MERGE (community)-[:HAS_MEMBER]->(entity) per (community_id, entity_id)."""
        ...

    def list_communities(self, group_id: str, level: int | None = None) -> list[Community]:
        """With members; ordered by level descending, then id."""
        ...

    def get_community(self, group_id: str, community_id: str) -> Community | None: ...

    def community_of(
        self, group_id: str, entity_ids: Sequence[str], level: int = 0
    ) -> dict[str, str]:
        """entity id -> id of its community at ``level`` (entities without one left out)."""
        ...

    def mark_stale(self, group_id: str, community_ids: Sequence[str]) -> int:
        """Set ``summary_stale``; returns how many communities exist among the ids."""
        ...

    def get_community_state(self, group_id: str) -> CommunityState | None: ...

    def save_community_state(self, state: CommunityState) -> None: ...

    def delete_group(self, group_id: str) -> None: ...

    def close(self) -> None: ...


# --------------------------------------------------------------------------- vectors


class Collection(StrEnum):
    ENTITIES = "entities"
    CHUNKS = "chunks"
    FACTS = "facts"
    COMMUNITIES = "communities"


PayloadValue = str | int | float | bool | list[str] | None


class VectorPoint(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str  # a UUID string
    vector: list[float]
    group_id: str
    payload: dict[str, PayloadValue] = Field(default_factory=dict)


class VectorHit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    score: float
    payload: dict[str, PayloadValue] = Field(default_factory=dict)


@runtime_checkable
class VectorStore(Protocol):
    """Dense vectors per collection; every point carries its tenant (``group_id``)."""

    def ensure_collection(self, collection: Collection, dimension: int) -> None: ...

    def upsert(self, collection: Collection, points: Sequence[VectorPoint]) -> None: ...

    def search(
        self,
        collection: Collection,
        vector: Sequence[float],
        *,
        group_id: str,
        limit: int = 10,
        filters: dict[str, str] | None = None,
        min_score: float | None = None,
    ) -> list[VectorHit]:
        """Cosine top-k within one tenant; ``filters`` are exact payload matches."""
        ...

    def delete(self, collection: Collection, ids: Sequence[str]) -> None: ...

    def delete_group(self, collection: Collection, group_id: str) -> None: ...

    def count(self, collection: Collection, group_id: str) -> int: ...

    def close(self) -> None: ...


# --------------------------------------------------------------------------- documents


@runtime_checkable
class DocumentStore(Protocol):
    """Documents, chunks, entity mentions and the audit log (SQL)."""

    def migrate(self) -> None:
        """Bring the schema to head (Alembic)."""
        ...

    def get_document_by_source(
        self, group_id: str, source_system: str, source_id: str
    ) -> Document | None: ...

    def save_document(self, document: Document, chunks: Sequence[Chunk]) -> None:
        """Insert or update the document and replace its chunks (and their mentions)."""
        ...

    def set_status(
        self,
        document_id: str,
        status: ProcessingStatus,
        *,
        entity_count: int | None = None,
    ) -> None: ...

    def add_mentions(self, mentions: Sequence[EntityMention]) -> None:
        """Idempotent on mention id."""
        ...

    def chunks_mentioning(
        self, group_id: str, entity_ids: Sequence[str], limit: int = 50
    ) -> list[str]:
        """Ids of chunks that mention any of the entities, most mentions first."""
        ...

    def get_documents(self, ids: Sequence[str]) -> list[Document]: ...

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]: ...

    def list_documents(self, group_id: str) -> list[Document]: ...

    def delete_documents(self, group_id: str, ids: Sequence[str]) -> int:
        """Delete documents of the group with their chunks and mentions; returns how many."""
        ...

    def get_sync_cursor(self, group_id: str, source: str) -> str | None:
        """The cursor an incremental sync of ``source`` stored last, if any."""
        ...

    def set_sync_cursor(self, group_id: str, source: str, cursor: str) -> None: ...

    def record_audit(self, event: AuditEvent) -> None: ...

    def counts(self, group_id: str) -> DocumentCounts: ...

    def delete_group(self, group_id: str) -> None: ...

    def close(self) -> None: ...


# --------------------------------------------------------------------------- models


@runtime_checkable
class Embedder(Protocol):
    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-normalised vectors, one per text, computed in batches."""
        ...


# --------------------------------------------------------------------------- events


@runtime_checkable
class EventQueue(Protocol):
    """At-least-once topics with consumer groups (Redis Streams in production).

    Every consumer group sees every event of a topic; within a group each event goes to one
    consumer until it is acknowledged. Unacknowledged events can be claimed again.
    """

    def publish(self, topic: str, event: CommunityUpdated | CommunitiesRebuilt) -> str:
        """Append the event; returns its message id."""
        ...

    def consume(
        self,
        topic: str,
        group: str,
        consumer: str,
        *,
        count: int = 10,
        block_ms: int | None = None,
        claim_idle_ms: int | None = None,
    ) -> list[Delivery]:
        """New events for ``consumer`` (the group is created, from the start, if missing).

        ``claim_idle_ms``: first take over events another consumer of the group left
        unacknowledged for at least that long. ``block_ms``: wait up to that long for one.
        """
        ...

    def ack(self, topic: str, group: str, message_ids: Sequence[str]) -> int:
        """Acknowledge; returns how many were pending."""
        ...

    def pending(self, topic: str, group: str) -> int:
        """Delivered but not yet acknowledged."""
        ...

    def delete_topic(self, topic: str) -> None: ...

    def close(self) -> None: ...
