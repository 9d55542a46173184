"""The vector store and embedder ports."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from enum import StrEnum
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

# --------------------------------------------------------------------------- vectors


class Collection(StrEnum):
    ENTITIES = "entities"
    CHUNKS = "chunks"
    FACTS = "facts"
    COMMUNITIES = "communities"
    SENTENCES = "sentences"  # candidate source sentences as local search embeds them


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

    def vectors_of(self, collection: Collection, group_id: str, ids: Sequence[str]
                   ) -> dict[str, list[float]]:
        """The stored vectors of these point ids within one tenant, in one read (ids of
        another tenant or not stored are left out)."""
        ...

    def scan(self, collection: Collection, group_id: str, batch: int = 256, *,
             with_vectors: bool = True) -> Iterator[VectorPoint]:
        """Every point of one tenant with its payload (and vector unless ``with_vectors`` is
        False: then ``vector`` is empty), in pages (export, reconciliation)."""
        ...

    def close(self) -> None: ...


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
