"""API keys, scopes and the caller a request acts for."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Scope(StrEnum):
    QUERY = "query"  # read: query, search, entities, graph, communities, reports
    INGEST = "ingest"  # write documents / episodes / entities
    ADMIN = "admin"  # review queue, merges, admin UI, key management


class ApiKey(BaseModel):
    """A stored key, without its secret."""

    model_config = ConfigDict(extra="forbid")

    id: str
    prefix: str
    name: str
    scopes: list[Scope]
    tenant: str | None = None  # None: every tenant
    principals: list[str] = Field(default_factory=list)  # identities for source ACLs
    rate_limit_per_minute: int | None = None  # None: the server default
    created_at: datetime
    revoked_at: datetime | None = None

    def allows(self, scope: Scope) -> bool:
        return Scope.ADMIN in self.scopes or scope in self.scopes


class IssuedKey(BaseModel):
    """A newly created key: the secret is shown once and never stored."""

    key: ApiKey
    secret: str
