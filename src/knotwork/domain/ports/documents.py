"""The document store (SQL) and API key store ports."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from knotwork.domain.auth import ApiKey, IssuedKey, Scope
from knotwork.domain.models import (
    AuditEvent,
    Chunk,
    Document,
    DocumentCounts,
    EntityMention,
    ProcessingStatus,
)

if TYPE_CHECKING:
    from knotwork.domain.backup import TableDump

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

    def complete_documents(self, entity_counts: Mapping[str, int]) -> None:
        """Mark the documents COMPLETED, each with its entity count, in one transaction (a
        batch is finished whole or not at all)."""
        ...

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
