"""Resolve a free-text mention to an existing entity (API/CLI ``entities resolve``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from rapidfuzz.distance import JaroWinkler

from knotwork.domain.models import EntityType
from knotwork.domain.ports import Collection
from knotwork.resolution.exact import lookup_keys, resolve
from knotwork.resolution.normalize import normalize_name
from knotwork.runtime import Runtime

FUZZY_MATCH = 0.92


class Alternative(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entity_id: str
    name: str
    type: str
    confidence: float


class ResolveResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entity_id: str | None
    name: str | None
    type: str | None
    confidence: float
    alternatives: list[Alternative]


def resolve_mention(rt: Runtime, group_id: str, mention: str, etype: EntityType | None) -> ResolveResult:
    key = normalize_name(mention)
    if not key:
        raise ValueError("the mention is empty")
    wanted = etype or EntityType.PERSON
    candidates = rt.graph.find_entities_by_keys(group_id, lookup_keys(key, wanted))
    decision = resolve(key, etype or (candidates[0].type if candidates else wanted), candidates)
    vec = rt.embedder.embed([mention])[0]
    hits = rt.vectors.search(Collection.ENTITIES, vec, group_id=group_id, limit=10)
    near = {e.id: e for e in rt.graph.get_entities(group_id, [h.id for h in hits])}
    scored: dict[str, tuple[float, str, str]] = {}
    for hit in hits:
        entity = near.get(hit.id)
        if entity is None:
            continue
        jw = max(JaroWinkler.similarity(key, k) for k in entity.name_keys if not k.startswith("first:"))
        type_score = 1.0 if etype is None or entity.type is etype else 0.3
        score = 0.4 * jw + 0.4 * max(hit.score, 0.0) + 0.2 * type_score
        scored[entity.id] = (round(score, 3), entity.name, entity.type.value)
    best = decision.entity
    confidence = decision.confidence if best else 0.0
    if best is None and scored:
        top_id, (top_score, _, _) = max(scored.items(), key=lambda kv: kv[1][0])
        if top_score >= FUZZY_MATCH * 0.9 and (etype is None or near[top_id].type is etype):
            best, confidence = near[top_id], top_score
    alternatives = [
        Alternative(entity_id=eid, name=name, type=t, confidence=s)
        for eid, (s, name, t) in sorted(scored.items(), key=lambda kv: -kv[1][0])
        if best is None or eid != best.id
    ][:5]
    return ResolveResult(entity_id=best.id if best else None, name=best.name if best else None,
                         type=best.type.value if best else None, confidence=round(confidence, 3),
                         alternatives=alternatives)
