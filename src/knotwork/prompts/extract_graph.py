"""Entities, relations of the fixed taxonomy and their dates, for several chunks in one call."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.ports import ChatMessage
from knotwork.prompts.base import (
    ENTITY_TYPES,
    RELATION_TYPES,
    cut_list,
    cut_text,
    system,
    user,
)

NAME = "extract_graph"
VERSION = "1"

MAX_CHUNKS = 16
MAX_ENTITIES = 24
MAX_RELATIONS = 16


class ChunkText(BaseModel):
    model_config = ConfigDict(extra="forbid")

    index: int
    text: str
    reference_date: str | None = None  # the document's date (ISO), for relative dates


class Input(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chunks: list[ChunkText] = Field(min_length=1, max_length=MAX_CHUNKS)


# Output fields are plain strings so that an endpoint ignoring the schema still parses; the
# schema itself lists the allowed values (enum), and the extractor maps or drops the rest.
Name = Annotated[str, cut_text(120)]
EntityTypeName = Annotated[str, cut_text(40), Field(json_schema_extra={"enum": list(ENTITY_TYPES)})]
RelationTypeName = Annotated[
    str, cut_text(40), Field(json_schema_extra={"enum": list(RELATION_TYPES)})
]
Sentence = Annotated[str, cut_text(400)]
DateText = Annotated[str, cut_text(40)]


class ExtractedEntity(BaseModel):
    name: Name
    type: EntityTypeName


class ExtractedRelation(BaseModel):
    source: Name
    relation: RelationTypeName
    target: Name
    sentence: Sentence
    valid_from: DateText | None = None
    valid_until: DateText | None = None


class ChunkGraph(BaseModel):
    chunk: int
    entities: Annotated[
        list[ExtractedEntity], cut_list(MAX_ENTITIES), Field(max_length=MAX_ENTITIES)
    ] = Field(default_factory=list)
    relations: Annotated[
        list[ExtractedRelation], cut_list(MAX_RELATIONS), Field(max_length=MAX_RELATIONS)
    ] = Field(default_factory=list)


class Output(BaseModel):
    chunks: Annotated[list[ChunkGraph], cut_list(MAX_CHUNKS), Field(max_length=MAX_CHUNKS)] = Field(
        default_factory=list
    )


_SYSTEM = f"""
You build a knowledge graph from workplace documents (wiki pages, chat threads, notes).
For every numbered chunk, list the named entities it mentions and the relations it states.

Entity types: {", ".join(ENTITY_TYPES)}. PERSON is a named individual; ORGANIZATION a company,
team or department; PRODUCT a named product, service or project; TECHNOLOGY a language,
framework, database or tool; EVENT a named meeting, launch, incident or release; CONCEPT a
named method, policy or topic; LOCATION a place or office.
Use the name exactly as written in the chunk. Skip pronouns and generic words.

Relation types: {", ".join(RELATION_TYPES)}. Use RELATED_TO only when none fits.
A relation goes from source to target ("Dana leads Atlas": source Dana, LEADS, target Atlas).
Both ends must be entities you listed for the same chunk. "sentence" is the sentence of the
chunk that states it, copied verbatim. valid_from / valid_until: the date or period the text
gives for when the relation started or ended ("since March 2024" -> valid_from "March 2024"),
or null when the text gives none.

Report only what the chunk says; never invent. A chunk with nothing gets empty lists.
Answer with JSON: {{"chunks": [{{"chunk": <number>, "entities": [...], "relations": [...]}}]}}.
"""


def render(data: Input) -> list[ChatMessage]:
    parts = []
    for chunk in data.chunks:
        dated = f" (written {chunk.reference_date})" if chunk.reference_date else ""
        parts.append(f"### Chunk {chunk.index}{dated}\n{chunk.text.strip()}")
    return [system(_SYSTEM), user("\n\n".join(parts))]
