"""The MCP tools' results (their ``outputSchema`` and ``structuredContent``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from knotwork.domain.models import Citation, Document, Entity, Fact, QueryResult
from knotwork.retrieval.search import SearchResults as Found

SNIPPET = 500


class QueryAnswer(BaseModel):
    answer: str
    confidence: float
    mode_used: str
    reasoning_trace: list[str]
    citations: list[Citation]

    @classmethod
    def of(cls, result: QueryResult) -> QueryAnswer:
        return cls(answer=result.answer, confidence=result.confidence,
                   mode_used=result.mode_used.value.upper(),
                   reasoning_trace=result.reasoning_trace, citations=result.citations)


class EntityRef(BaseModel):
    id: str
    name: str
    type: str

    @classmethod
    def of(cls, entity: Entity) -> EntityRef:
        return cls(id=entity.id, name=entity.name, type=entity.type.value)


class RelationshipRef(BaseModel):
    id: str
    source_id: str
    target_id: str
    type: str
    fact: str

    @classmethod
    def of(cls, fact: Fact) -> RelationshipRef:
        return cls(id=fact.id, source_id=fact.source_id, target_id=fact.target_id,
                   type=fact.type.value, fact=fact.fact)


class FactHit(BaseModel):
    id: str
    fact: str
    type: str
    score: float


class EntityHit(EntityRef):
    score: float


class TextHit(BaseModel):
    id: str
    text: str
    score: float


class CommunityHit(BaseModel):
    id: str
    name: str
    summary: str
    score: float


class SearchResults(BaseModel):
    facts: list[FactHit]
    entities: list[EntityHit]
    chunks: list[TextHit]
    communities: list[CommunityHit]

    @classmethod
    def of(cls, out: Found) -> SearchResults:
        return cls(
            facts=[FactHit(id=s.item.id, fact=s.item.fact, type=s.item.type.value, score=s.score)
                   for s in out.facts],
            entities=[EntityHit(id=s.item.id, name=s.item.name, type=s.item.type.value,
                                score=s.score) for s in out.entities],
            chunks=[TextHit(id=s.item.id, text=s.item.content[:SNIPPET], score=s.score)
                    for s in out.chunks],
            communities=[CommunityHit(id=s.item.id, name=s.item.name,
                                      summary=s.item.summary[:SNIPPET], score=s.score)
                         for s in out.communities])


class Traversal(BaseModel):
    entities: list[EntityRef]
    relationships: list[RelationshipRef]


class EntityFound(BaseModel):
    entity: EntityRef
    summary: str
    aliases: list[str]
    confidence: float  # 1.0 for a lookup by id; the resolution score for a name
    relationships: list[RelationshipRef]
    mentions_count: int


class EpisodeAdded(BaseModel):
    episode_ids: list[str]
    entities: int
    facts: int
    unchanged: bool


class DocumentView(BaseModel):
    id: str
    title: str
    source_system: str
    source_id: str
    url: str | None
    status: str
    chunk_count: int
    entity_count: int

    @classmethod
    def of(cls, doc: Document) -> DocumentView:
        return cls(id=doc.id, title=doc.title, source_system=doc.source_system.value,
                   source_id=doc.source_id, url=doc.url, status=doc.processing_status.value,
                   chunk_count=doc.chunk_count, entity_count=doc.entity_count)


class DocumentAdded(BaseModel):
    document: DocumentView
    outcome: Literal["added", "updated", "unchanged"]
    entities: int
    facts: int


class DocumentDeleted(BaseModel):
    deleted: str
    documents: int
    episodes: int
    facts: int
    entities: int


class DocumentList(BaseModel):
    items: list[DocumentView]
    total: int
