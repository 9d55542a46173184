"""Row <-> model mapping for the Cypher graph adapters.

Times are stored as fixed-width ISO strings (:func:`to_iso`); ``None`` is stored as a missing
property. Lists are stored as lists of strings. No map-valued properties.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

from knotwork.domain.evidence import aligned_confidences, aligned_valid_at, evidence_confidence
from knotwork.domain.models import (
    Community,
    CommunityState,
    Entity,
    Episode,
    EpisodeSource,
    Fact,
    PropertyValue,
)
from knotwork.domain.timeutil import from_iso, to_iso

Row = dict[str, Any]
T = TypeVar("T")

GROUP_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
BATCH_SIZE = 1000


def validate_group_id(group_id: str) -> str:
    """Return ``group_id`` or raise ValueError: 1-64 of ``[A-Za-z0-9_-]``."""
    if not isinstance(group_id, str) or not GROUP_ID_PATTERN.fullmatch(group_id):
        raise ValueError(f"invalid group id {group_id!r}: expected 1-64 of [A-Za-z0-9_-]")
    return group_id


def batches(items: Sequence[T], size: int = BATCH_SIZE) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def unique(values: Iterable[str]) -> list[str]:
    """Distinct values in first-seen order."""
    return list(dict.fromkeys(values))


def _time(value: Any) -> datetime | None:
    return from_iso(value) if isinstance(value, str) else None


def _required_time(value: Any, field: str) -> datetime:
    parsed = _time(value)
    if parsed is None:
        raise ValueError(f"stored record lacks {field}")
    return parsed


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(item) for item in value]


# --------------------------------------------------------------------------- entity


def entity_to_row(entity: Entity) -> Row:
    return {
        "id": entity.id,
        "group_id": entity.group_id,
        "name": entity.name,
        "canonical_name": entity.canonical_name,
        "type": entity.type.value,
        "subtype": entity.subtype,
        "aliases": list(entity.aliases),
        "name_keys": list(entity.name_keys),
        "summary": entity.summary,
        "confidence": float(entity.confidence),
        "evidence_count": int(entity.evidence_count),
        "created_at": to_iso(entity.created_at),
        "updated_at": to_iso(entity.updated_at),
        # resolution tracking; properties as JSON text (no map-valued properties)
        "properties_json": json.dumps({k: [v.model_dump() for v in vs]
                                       for k, vs in sorted(entity.properties.items())})
        if entity.properties else None,
        "merged_from": list(entity.merged_from),
        "canonical_entity_id": entity.canonical_entity_id,
        "resolution_confidence": entity.resolution_confidence,
        "version": int(entity.version),
    }


def _properties(value: Any) -> dict[str, list[PropertyValue]]:
    if not isinstance(value, str) or not value:
        return {}
    data = json.loads(value)
    return {str(k): [PropertyValue.model_validate(v) for v in vs] for k, vs in data.items()}


def row_to_entity(row: Mapping[str, Any]) -> Entity:
    return Entity(
        id=row["id"],
        group_id=row["group_id"],
        name=row["name"],
        canonical_name=row["canonical_name"],
        type=row["type"],
        subtype=row.get("subtype"),
        aliases=_strings(row.get("aliases")),
        name_keys=_strings(row.get("name_keys")),
        summary=row.get("summary") or "",
        confidence=float(row["confidence"]) if row.get("confidence") is not None else 1.0,
        evidence_count=int(row["evidence_count"]) if row.get("evidence_count") is not None else 1,
        created_at=_required_time(row.get("created_at"), "created_at"),
        updated_at=_required_time(row.get("updated_at"), "updated_at"),
        properties=_properties(row.get("properties_json")),
        merged_from=_strings(row.get("merged_from")),
        canonical_entity_id=row.get("canonical_entity_id"),
        resolution_confidence=float(row["resolution_confidence"])
        if row.get("resolution_confidence") is not None else None,
        version=int(row["version"]) if row.get("version") is not None else 1,
    )


# --------------------------------------------------------------------------- fact


def fact_to_row(fact: Fact) -> Row:
    """The stored confidence is always the one the fact's evidence gives (``domain.evidence``)."""
    per_episode = aligned_confidences(fact.confidence, fact.episodes, fact.episode_confidences)
    starts = aligned_valid_at(fact.valid_at, fact.episodes, fact.episode_valid_at)
    return {
        "id": fact.id,
        "group_id": fact.group_id,
        "source_id": fact.source_id,
        "target_id": fact.target_id,
        "type": fact.type.value,
        "fact": fact.fact,
        "confidence": evidence_confidence(per_episode, float(fact.confidence)),
        "episodes": list(fact.episodes),
        "episode_confidences": per_episode,
        # "" for an episode that gives no start (graph lists hold no nulls)
        "episode_valid_at": [to_iso(v) or "" for v in starts],
        "valid_at": to_iso(fact.valid_at),
        "invalid_at": to_iso(fact.invalid_at),
        "created_at": to_iso(fact.created_at),
        "expired_at": to_iso(fact.expired_at),
        "extraction_method": fact.extraction_method,
        "invalidated_by": fact.invalidated_by,
    }


def row_to_fact(row: Mapping[str, Any]) -> Fact:
    confidence = float(row["confidence"]) if row.get("confidence") is not None else 1.0
    episodes = _strings(row.get("episodes"))
    per_episode = [float(c) for c in row.get("episode_confidences") or []]
    valid_at = _time(row.get("valid_at"))
    starts = [from_iso(str(v)) if v else None for v in row.get("episode_valid_at") or []]
    return Fact(
        id=row["id"],
        group_id=row["group_id"],
        source_id=row["source_id"],
        target_id=row["target_id"],
        type=row["type"],
        fact=row.get("fact") or "",
        confidence=confidence,
        episodes=episodes,
        episode_confidences=aligned_confidences(confidence, episodes, per_episode),
        episode_valid_at=aligned_valid_at(valid_at, episodes, starts),
        valid_at=valid_at,
        invalid_at=_time(row.get("invalid_at")),
        created_at=_required_time(row.get("created_at"), "created_at"),
        expired_at=_time(row.get("expired_at")),
        extraction_method=row.get("extraction_method") or "rule",
        invalidated_by=row.get("invalidated_by") or None,
    )


# --------------------------------------------------------------------------- episode


def episode_to_row(episode: Episode) -> Row:
    return {
        "id": episode.id,
        "group_id": episode.group_id,
        "name": episode.name,
        "content": episode.content,
        "source": episode.source.value,
        "source_description": episode.source_description,
        "document_id": episode.document_id,
        "valid_at": to_iso(episode.valid_at),
        "created_at": to_iso(episode.created_at),
    }


def row_to_episode(row: Mapping[str, Any]) -> Episode:
    return Episode(
        id=row["id"],
        group_id=row["group_id"],
        name=row.get("name") or "",
        content=row.get("content") or "",
        source=EpisodeSource(row.get("source") or EpisodeSource.TEXT),
        source_description=row.get("source_description") or "",
        document_id=row["document_id"],
        valid_at=_required_time(row.get("valid_at"), "valid_at"),
        created_at=_required_time(row.get("created_at"), "created_at"),
    )


# --------------------------------------------------------------------------- community


def community_to_row(community: Community) -> Row:
    """Every property except the members (those are HAS_MEMBER edges)."""
    return {
        "id": community.id,
        "group_id": community.group_id,
        "level": int(community.level),
        "name": community.name,
        "parent_id": community.parent_id,
        "child_ids": list(community.child_ids),
        "entity_count": int(community.entity_count),
        "summary": community.summary,
        "key_topics": list(community.key_topics),
        "central_entities": list(community.central_entities),
        "representative_entities": list(community.representative_entities),
        "key_facts": list(community.key_facts),
        "citations": list(community.citations),
        "modularity_contribution": float(community.modularity_contribution),
        "internal_density": float(community.internal_density),
        "external_connectivity": float(community.external_connectivity),
        "summary_stale": bool(community.summary_stale),
        "summary_version": int(community.summary_version),
        "summarizer": community.summarizer,
        "created_at": to_iso(community.created_at),
        "updated_at": to_iso(community.updated_at),
        "last_summarized_at": to_iso(community.last_summarized_at),
    }


def _float(value: Any) -> float:
    return float(value) if value is not None else 0.0


def row_to_community(row: Mapping[str, Any]) -> Community:
    return Community(
        id=row["id"],
        group_id=row["group_id"],
        level=int(row["level"]),
        name=row.get("name") or "",
        parent_id=row.get("parent_id"),
        child_ids=sorted(_strings(row.get("child_ids"))),
        entity_ids=sorted(_strings(row.get("entity_ids"))),
        entity_count=int(row.get("entity_count") or 0),
        summary=row.get("summary") or "",
        key_topics=_strings(row.get("key_topics")),
        central_entities=_strings(row.get("central_entities")),
        representative_entities=_strings(row.get("representative_entities")),
        key_facts=_strings(row.get("key_facts")),
        citations=_strings(row.get("citations")),
        modularity_contribution=_float(row.get("modularity_contribution")),
        internal_density=_float(row.get("internal_density")),
        external_connectivity=_float(row.get("external_connectivity")),
        summary_stale=bool(row.get("summary_stale")),
        summary_version=int(row.get("summary_version") or 0),
        summarizer=row.get("summarizer") or "",
        created_at=_required_time(row.get("created_at"), "created_at"),
        updated_at=_required_time(row.get("updated_at"), "updated_at"),
        last_summarized_at=_time(row.get("last_summarized_at")),
    )


def state_to_row(state: CommunityState) -> Row:
    return {
        "built_at": to_iso(state.built_at),
        "entity_count": int(state.entity_count),
        "fact_count": int(state.fact_count),
        "community_count": int(state.community_count),
        "levels": int(state.levels),
        "modularity": float(state.modularity),
        "total_weight": float(state.total_weight),
        "resolution": float(state.resolution),
        "max_size": int(state.max_size),
        "seed": int(state.seed),
        "changed_entities": int(state.changed_entities),
        "changed_facts": int(state.changed_facts),
        "updated_at": to_iso(state.updated_at),
    }


def row_to_state(row: Mapping[str, Any]) -> CommunityState:
    return CommunityState(
        group_id=row["group_id"],
        built_at=_required_time(row.get("built_at"), "built_at"),
        entity_count=int(row.get("entity_count") or 0),
        fact_count=int(row.get("fact_count") or 0),
        community_count=int(row.get("community_count") or 0),
        levels=int(row.get("levels") or 0),
        modularity=_float(row.get("modularity")),
        total_weight=_float(row.get("total_weight")),
        resolution=_float(row.get("resolution")) or 1.0,
        max_size=int(row.get("max_size") or 0),
        seed=int(row.get("seed") or 0),
        changed_entities=int(row.get("changed_entities") or 0),
        changed_facts=int(row.get("changed_facts") or 0),
        updated_at=_required_time(row.get("updated_at"), "updated_at"),
    )
