"""What gets embedded, and under which vector ids: shared by ingestion and lineage upkeep."""

from __future__ import annotations

from knotwork.domain.ids import stable_id
from knotwork.domain.models import Entity, Fact
from knotwork.domain.ports import VectorPoint
from knotwork.domain.timeutil import to_iso
from knotwork.ingestion.chunking import chunk_text
from knotwork.ingestion.summary_text import SENTENCE_END  # how summaries are split


def passage_texts(text: str, tokens: int) -> list[str]:
    """A chunk's vector passages (no overlap): MiniLM reads only its first 256 word pieces."""
    spans = chunk_text(text, tokens, 0) if text.strip() else []
    return [s.text for s in spans] or [text]


def passage_id(chunk_id: str, index: int) -> str:
    return stable_id(chunk_id, "passage", str(index))


def chunk_passage_ids(chunk_id: str, content: str, tokens: int) -> list[str]:
    """The vector ids of a stored chunk's passages (same settings, same ids)."""
    return [passage_id(chunk_id, i) for i in range(len(passage_texts(content, tokens)))]


# an entity's vector reads its first summary sentences only: the summary grows as facts
# arrive, and re-embedding at every new sentence cost most of ingestion's embedding work
# (issue 9: bench.query_eval unchanged; entity embeds over 100 documents of a 1k-entity
# world ~318 -> 220; one sentence would give 112 but fails the unmerge export round trip
# in tests/integration/test_resolution_merge.py, not yet understood)
ENTITY_TEXT_SENTENCES = 2


def lead_sentences(text: str, count: int = ENTITY_TEXT_SENTENCES) -> str:
    return " ".join(s for s in SENTENCE_END.split(text.strip(), maxsplit=count)[:count] if s)


def entity_text(entity: Entity) -> str:
    """What an entity's vector encodes: "<name> (<kind>). <first summary sentences>"."""
    kind = entity.subtype.lower() if entity.subtype else entity.type.value.lower()
    return f"{entity.name} ({kind}). {lead_sentences(entity.summary)}".strip()


def entity_point(entity: Entity, vector: list[float]) -> VectorPoint:
    return VectorPoint(id=entity.id, vector=vector, group_id=entity.group_id,
                       payload={"name": entity.name, "entity_type": entity.type.value,
                                "confidence": entity.confidence})


def fact_point(fact: Fact, vector: list[float]) -> VectorPoint:
    """A fact's vector (its sentence, ``fact.fact``) with the payload search filters on."""
    return VectorPoint(id=fact.id, vector=vector, group_id=fact.group_id,
                       payload={"type": fact.type.value, "source_id": fact.source_id,
                                "target_id": fact.target_id, "valid": fact.invalid_at is None,
                                "valid_at": to_iso(fact.valid_at),
                                "invalid_at": to_iso(fact.invalid_at)})


def passage_text(title: str, text: str) -> str:
    """What a chunk passage's vector encodes: the document title, then the passage."""
    return f"{title}\n{text}"


def passage_point(chunk_id: str, document_id: str, source_description: str, index: int,
                  group_id: str, vector: list[float]) -> VectorPoint:
    return VectorPoint(id=passage_id(chunk_id, index), vector=vector, group_id=group_id,
                       payload={"chunk_id": chunk_id, "document_id": document_id,
                                "source_system": source_description.split(":", 1)[0]})
