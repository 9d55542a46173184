"""Typed outputs of extraction (per chunk, before resolution)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from knotwork.domain.models import EntityType, RelationType


@dataclass(slots=True)
class Mention:
    start: int
    end: int
    text: str
    type: EntityType
    confidence: float
    extractor: str  # spacy | rule | gazetteer | known | speaker | shape | gliner | llm | coref
    subtype: str | None = None
    # for coref/pronoun mentions: the name of the entity referred to
    refers_to: str | None = None
    # the extractors that voted for this span (set by ensemble.vote)
    votes: tuple[str, ...] = ()


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


@dataclass(frozen=True, slots=True)
class KnownName:
    """An entity already in the graph, matched by name in new text."""

    name: str
    type: EntityType
    subtype: str | None


@dataclass(slots=True)
class ChunkInput:
    """What every entity extractor sees of one chunk."""

    text: str
    doc: object | None = None  # the chunk's spaCy Doc (parsed once, shared)
    known: Mapping[str, KnownName] = field(default_factory=dict)  # normalised name -> entity
    context: Sequence[KnownName] = ()  # entities of the preceding episodes (coreference)
    users: Mapping[str, str] = field(default_factory=dict)  # Slack handle / user id -> name


class Extractor(Protocol):
    """One entity extractor of the ensemble: typed mentions with spans and confidences.

    ``name`` is the vote it casts (``Mention.extractor``); one extractor counts once per span.
    """

    name: str

    def mentions(self, chunks: Sequence[ChunkInput]) -> list[list[Mention]]:
        """Candidate mentions of each chunk (exact character offsets into ``chunk.text``)."""
        ...


@dataclass(frozen=True, slots=True)
class LlmEntityVote:
    """An entity an LLM named in a chunk (its offsets are found in the text)."""

    name: str
    type: EntityType
    confidence: float = 0.85


@dataclass(frozen=True, slots=True)
class LlmRelationVote:
    """A relation an LLM stated between two entity names of a chunk."""

    source: str
    target: str
    type: RelationType
    confidence: float = 0.8
    fact: str | None = None  # the LLM's sentence; the chunk sentence is used when absent


@dataclass(frozen=True, slots=True)
class LlmChunkVotes:
    entities: Sequence[LlmEntityVote] = ()
    relations: Sequence[LlmRelationVote] = ()
