"""Typed outputs of extraction (per chunk, before resolution)."""

from __future__ import annotations

from dataclasses import dataclass, field

from knotwork.domain.models import EntityType, RelationType


@dataclass(slots=True)
class Mention:
    start: int
    end: int
    text: str
    type: EntityType
    confidence: float
    extractor: str  # spacy | rule | gazetteer | speaker | coref
    subtype: str | None = None
    # for coref/pronoun mentions: the name of the entity referred to
    refers_to: str | None = None


@dataclass(slots=True)
class LocalEntity:
    """All mentions of one entity within a chunk."""

    name: str
    key: str  # normalised name
    type: EntityType
    subtype: str | None
    confidence: float
    mentions: list[Mention] = field(default_factory=list)
    aliases: set[str] = field(default_factory=set)


@dataclass(slots=True)
class LocalRelation:
    source: int  # index into ChunkExtraction.entities
    target: int
    type: RelationType
    fact: str
    confidence: float
    start: int  # sentence offsets in the chunk
    end: int
    method: str = "rule"


@dataclass(slots=True)
class ChunkExtraction:
    entities: list[LocalEntity]
    relations: list[LocalRelation]
    speaker: str | None = None
