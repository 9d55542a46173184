"""One query's options, from the route to the engine (issue 20).

``QueryOptions`` is what a caller may say about how a question is answered. The REST request
models, the CLI, MCP and ``Knotwork.query`` build one; ``QueryEngine.prepare`` /
``query_stream`` and the mode searches read it. ``QueryFields`` is the same set as keyword
arguments (``kw.query(q, mode="local", as_of=…)``); a test keeps the two equal.
"""

from __future__ import annotations

from datetime import datetime
from typing import TypedDict

from pydantic import BaseModel, ConfigDict, Field, field_validator

from knotwork.domain.models import QueryMode


class QueryOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: QueryMode = QueryMode.AUTO
    as_of: datetime | None = None  # answer as the graph stood then (None: now, or the question's own time)
    max_context_tokens: int | None = Field(default=None, ge=1)  # None: the settings' budget
    community_level: int | None = None  # GLOBAL (and DRIFT's primer): which community level
    top_k_communities: int | None = None  # GLOBAL: how many community reports are mapped
    max_iterations: int | None = None  # DRIFT
    convergence_threshold: float | None = None  # DRIFT
    seed_entity_ids: tuple[str, ...] = ()  # LOCAL only: local search starts from these
    max_hops: int | None = None  # LOCAL: graph expansion depth
    principals: tuple[str, ...] | None = None  # who asks (ACL); None: a trusted caller

    @field_validator("mode", mode="before")
    @classmethod
    def _lower_mode(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value

    def with_fields(self, **fields: object) -> QueryOptions:
        """These options with some fields replaced, validated."""
        return QueryOptions.model_validate({**self.model_dump(), **fields}) if fields else self


class QueryFields(TypedDict, total=False):
    """``QueryOptions`` as keyword arguments."""

    mode: QueryMode | str
    as_of: datetime | None
    max_context_tokens: int | None
    community_level: int | None
    top_k_communities: int | None
    max_iterations: int | None
    convergence_threshold: float | None
    seed_entity_ids: tuple[str, ...] | list[str]
    max_hops: int | None
    principals: tuple[str, ...] | list[str] | None


def query_options(options: QueryOptions | None, fields: QueryFields) -> QueryOptions:
    """``options`` (or the defaults) with the keyword fields on top, validated."""
    return (options or QueryOptions()).with_fields(**fields)
