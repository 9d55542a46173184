"""What gets embedded, and under which vector ids: shared by ingestion and lineage upkeep."""

from __future__ import annotations

from knotwork.domain.ids import stable_id
from knotwork.domain.models import Entity
from knotwork.domain.ports import VectorPoint
from knotwork.ingestion.chunking import chunk_text


def passage_texts(text: str, tokens: int) -> list[str]:
    """A chunk's vector passages (no overlap): MiniLM reads only its first 256 word pieces."""
    spans = chunk_text(text, tokens, 0) if text.strip() else []
    return [s.text for s in spans] or [text]


def passage_id(chunk_id: str, index: int) -> str:
    return stable_id(chunk_id, "passage", str(index))


def chunk_passage_ids(chunk_id: str, content: str, tokens: int) -> list[str]:
    """The vector ids of a stored chunk's passages (same settings, same ids)."""
    return [passage_id(chunk_id, i) for i in range(len(passage_texts(content, tokens)))]


def entity_text(entity: Entity) -> str:
    kind = entity.subtype.lower() if entity.subtype else entity.type.value.lower()
    return f"{entity.name} ({kind}). {entity.summary}".strip()


def entity_point(entity: Entity, vector: list[float]) -> VectorPoint:
    return VectorPoint(id=entity.id, vector=vector, group_id=entity.group_id,
                       payload={"name": entity.name, "entity_type": entity.type.value,
                                "confidence": entity.confidence})
