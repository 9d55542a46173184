"""Ports: one narrow Protocol per store aggregate. Adapters live in ``knotwork.infra``.

Every adapter of a port passes the same contract suite in ``tests/contract``.
All methods are synchronous; async callers run them in a worker thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.auth import ApiKey, IssuedKey, Scope
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
from knotwork.domain.tasks import DeadLetter, Job, QueueStats, Task

if TYPE_CHECKING:
    from knotwork.domain.backup import TableDump

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

    def update_entity(self, entity: Entity, expected_version: int) -> bool:
        """Compare-and-set (optimistic locking): write name, type, aliases, keys, summary and
        properties only if the stored ``version`` is ``expected_version``; it then becomes
        ``expected_version + 1``. False when the entity is missing or was changed meanwhile.
        """
        ...

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

    # -- resolution: entity merge / unmerge (issue 5)

    def entity_episode_ids(self, group_id: str, entity_id: str) -> list[str]:
        """Ids of the episodes with a MENTIONS edge to the entity, sorted."""
        ...

    def delete_mentions(self, group_id: str, pairs: Sequence[tuple[str, str]]) -> int:
        """Remove (episode)-[:MENTIONS]->(entity) per (episode_id, entity_id); returns how many."""
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

    def scan(self, collection: Collection, group_id: str, batch: int = 256, *,
             with_vectors: bool = True) -> Iterator[VectorPoint]:
        """Every point of one tenant with its payload (and vector unless ``with_vectors`` is
        False: then ``vector`` is empty), in pages (export, reconciliation)."""
        ...

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

    def dump(self, group_id: str) -> Iterator[TableDump]:
        """Every row of the tenant in every table, parents first (export)."""
        ...

    def api_keys(self) -> ApiKeyStore:
        """The API keys kept in the same database."""
        ...

    def restore(self, dumps: Iterable[TableDump]) -> dict[str, int]:
        """Insert dumped rows in one transaction; rows written per table (import)."""
        ...

    def delete_group(self, group_id: str) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class ApiKeyStore(Protocol):
    """API keys: secrets are shown once at creation, only their digests are kept."""

    def create(self, name: str, scopes: Sequence[Scope], *, tenant: str | None = None,
               principals: Sequence[str] = (),
               rate_limit_per_minute: int | None = None) -> IssuedKey: ...

    def authenticate(self, secret: str) -> ApiKey | None:
        """The live key of this secret; None when unknown, malformed or revoked."""
        ...

    def list(self) -> list[ApiKey]: ...

    def revoke(self, key_id_or_prefix: str) -> bool: ...

    def any_issued(self) -> bool:
        """True once any key was created, even if revoked since."""
        ...


# --------------------------------------------------------------------------- models


@runtime_checkable
class Embedder(Protocol):
    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-normalised vectors, one per text, computed in batches."""
        ...


@runtime_checkable
class PassageVectors(Protocol):
    """Passages embedded once, with vectors of character spans inside them read from the same
    pass (late chunking: a span's vector pools its tokens' contextual vectors)."""

    @property
    def vectors(self) -> list[list[float]]:
        """One unit vector per passage, exactly what ``embed`` returns for it."""
        ...

    def span_vector(self, index: int, start: int, end: int) -> list[float] | None:
        """Unit vector of ``texts[index][start:end]``; None when the pass cannot give one
        (the span was truncated away, the passage came from a cache): embed it instead."""
        ...


@runtime_checkable
class SpanEmbedder(Protocol):
    """Optional part of an :class:`Embedder`: passages whose spans can be pooled later
    (``infra.embeddings.spans.embed_passages`` falls back to ``embed`` without it)."""

    def embed_passages(self, texts: Sequence[str]) -> PassageVectors: ...


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


# --------------------------------------------------------------------------- LLM (optional)


class ChatRole(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    role: ChatRole
    content: str


class LLMUsage(BaseModel):
    """Tokens of one call (as the endpoint reports them; estimated when it does not)."""

    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


OutputT = TypeVar("OutputT", bound=BaseModel)


class LLMResult(BaseModel, Generic[OutputT]):
    """One structured completion. ``value`` is None when the output stayed invalid after
    repair (the client logged ``llm.output_dropped``); transport failures raise LLMError."""

    value: OutputT | None
    usage: LLMUsage = Field(default_factory=LLMUsage)
    attempts: int = 1  # HTTP requests made: 1 + retries
    repaired: bool = False  # the JSON needed fixing (fences, trailing text, brackets...)
    error: str | None = None


class LLMStats(BaseModel):
    """Running totals of one client (what the benchmark prints)."""

    model_config = ConfigDict(extra="forbid")

    calls: int = 0  # complete() and stream() invocations
    requests: int = 0  # HTTP requests, retries included
    retries: int = 0
    failures: int = 0  # calls that raised LLMError
    repaired: int = 0
    dropped: int = 0  # calls whose output was invalid even after repair
    prompt_tokens: int = 0
    completion_tokens: int = 0


class LLMError(RuntimeError):
    """The endpoint failed after the bounded retries (timeout, connection, HTTP status)."""


@runtime_checkable
class LLMClient(Protocol):
    """Chat completion constrained to a JSON schema, parsed into a pydantic model (or, with
    ``stream``, free text delivered as it is generated).

    Retries timeouts, connection errors, 429 and 5xx with backoff (at most
    ``llm_max_retries``); repairs invalid JSON (fences, trailing text, missing brackets) or
    drops it with a structured log line. Synchronous, like every port.
    """

    @property
    def model(self) -> str: ...

    @property
    def stats(self) -> LLMStats: ...

    def complete(
        self,
        messages: Sequence[ChatMessage],
        output: type[OutputT],
        *,
        name: str = "",
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> LLMResult[OutputT]:
        """``name`` (the prompt's name and version) goes in logs and the schema name."""
        ...

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        name: str = "",
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Iterator[str]:
        """Free text, streamed: the text deltas as the endpoint sends them (lazy: nothing is
        sent before the first ``next``). Failures before the first delta are retried like
        ``complete``; any failure raises LLMError. Counted in ``stats`` once it ends (an empty
        text counts as dropped); closing the iterator early closes the connection."""
        ...

    def close(self) -> None: ...


# --------------------------------------------------------------------------- job queue


@runtime_checkable
class JobQueue(Protocol):
    """Tasks for workers (Redis Streams): one stream per priority, one consumer group.

    At-least-once: a job stays pending until finished; a worker that dies holding it loses it
    to another after ``claim_idle_ms``. Finishing: ``ack`` (done), ``retry`` (back after a
    delay, ``retry_count`` + 1) or ``dead_letter`` (kept on the dead-letter stream).
    """

    def enqueue(self, task: Task) -> str:
        """Append the task to its priority's stream; returns the message id."""
        ...

    def fetch(self, consumer: str, *, count: int = 1, block_ms: int | None = None,
              claim_idle_ms: int | None = None) -> list[Job]:
        """Jobs for ``consumer``, highest priority first (abandoned ones claimed first)."""
        ...

    def ack(self, job: Job) -> bool: ...

    def retry(self, job: Job, error: str, delay_s: float) -> None: ...

    def dead_letter(self, job: Job, error: str) -> None: ...

    def dead_letters(self, limit: int = 100) -> list[DeadLetter]: ...

    def requeue_dead(self, message_ids: Sequence[str] | None = None) -> int:
        """Put dead letters back on their streams (all when ``None``); returns how many."""
        ...

    def stats(self) -> QueueStats: ...

    def purge(self) -> None:
        """Delete every stream, the retry set and the dead letters."""
        ...

    def close(self) -> None: ...


# --------------------------------------------------------------------------- cache (optional)


class CacheLayer(StrEnum):
    """Design doc 003, "Cache Strategy": one TTL per layer (settings ``cache_ttl_*``)."""

    ENTITY = "entity"  # entity by id, 1 h
    SEARCH = "search"  # entity / hybrid search results, 15 min
    SUBGRAPH = "subgraph"  # subgraph by entity set, 5 min
    COMMUNITY = "community"  # community summaries, 24 h
    QUERY = "query"  # GraphRAG query results, 5 min


class CacheStats(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hits: dict[str, int] = Field(default_factory=dict)  # per layer, this process
    misses: dict[str, int] = Field(default_factory=dict)

    def hit_rate(self, layer: str | None = None) -> float:
        layers = [layer] if layer else sorted(set(self.hits) | set(self.misses))
        hits = sum(self.hits.get(x, 0) for x in layers)
        total = hits + sum(self.misses.get(x, 0) for x in layers)
        return hits / total if total else 0.0


@runtime_checkable
class QueryCache(Protocol):
    """Serialized values (JSON text) per tenant and layer, with the layer's TTL.

    ``entity_ids``: the entities a value was computed from; updating one of them invalidates
    it (doc 003 triggers: entity update → its entity key, searches, subgraphs and query
    results containing it; community detection complete → every community and query value).
    """

    def get(self, layer: CacheLayer, group_id: str, key: str) -> str | None: ...

    def get_many(self, layer: CacheLayer, group_id: str, keys: Sequence[str]) -> list[str | None]:
        """One round trip; each lookup counts as a hit or a miss."""
        ...

    def set(self, layer: CacheLayer, group_id: str, key: str, value: str, *,
            entity_ids: Sequence[str] = ()) -> None: ...

    def invalidate_entities(self, group_id: str, entity_ids: Sequence[str]) -> int:
        """Drop the entities' own keys and every value computed from them; returns keys dropped."""
        ...

    def invalidate_layer(self, group_id: str, layer: CacheLayer) -> int: ...

    def clear_group(self, group_id: str) -> int: ...

    def stats(self) -> CacheStats: ...

    def close(self) -> None: ...
