"""Resolve a free-text mention to an existing entity (API/CLI ``entities resolve``).

Candidates: the exact-name keys in the graph, the stored blocking keys (SQL) and the nearest
entity vectors (ANN top-k on the mention, plus its context when given). The embedding cosine
enters the score only when a context is given: a bare name embeds no more than its spelling,
which the name comparison already scores (the other weights are renormalised).
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict

from knotwork.domain.models import Entity, EntityType
from knotwork.domain.ports import Collection
from knotwork.resolution.cannot_link import load_cannot_link
from knotwork.resolution.exact import lookup_keys
from knotwork.resolution.ingest import StoredResolutionIndex, record_of
from knotwork.resolution.normalize import name_key
from knotwork.resolution.resolver import Decision, DecisionKind, MemoryCandidates, Resolver
from knotwork.resolution.scoring import MentionQuery
from knotwork.resolution.service import resolution_config
from knotwork.runtime import Runtime

ANN_TOP_K = 10


class Alternative(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entity_id: str
    name: str
    type: str
    confidence: float
    name_score: float | None = None
    embedding_score: float | None = None
    type_score: float | None = None


class ResolveResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entity_id: str | None
    name: str | None
    type: str | None
    confidence: float
    alternatives: list[Alternative]
    decision: str = ""  # auto_merge | merge | merge_flagged | new
    candidates_compared: int = 0


def candidates_for(rt: Runtime, group_id: str, mention: str, etype: EntityType | None,
                   context: str = "", properties: dict[str, str] | None = None
                   ) -> tuple[MentionQuery, MemoryCandidates, Resolver]:
    key = name_key(mention)
    if not key:
        raise ValueError("the mention is empty")
    resolver = Resolver(resolution_config(rt.settings))
    resolver.cannot_link = load_cannot_link(rt, group_id)
    vec = rt.embedder.embed([f"{mention}. {context}" if context.strip() else mention])[0]
    query = MentionQuery(mention, etype, type_confidence=1.0 if etype else 0.0, context=context,
                         embedding=np.asarray(vec, dtype=np.float32) if context.strip() else None,
                         properties=dict(properties or {}))
    keys = lookup_keys(key, etype or EntityType.PERSON)
    found: dict[str, Entity] = {e.id: e for e in rt.graph.find_entities_by_keys(group_id, keys)}
    for e in StoredResolutionIndex(rt, group_id).lookup(resolver.keys(query)):
        found.setdefault(e.id, e)
    hits = rt.vectors.search(Collection.ENTITIES, vec, group_id=group_id, limit=ANN_TOP_K)
    cosine = {h.id: h.score for h in hits}
    for e in rt.graph.get_entities(group_id, [h.id for h in hits if h.id not in found]):
        found[e.id] = e
    store = MemoryCandidates(resolver.rules)
    for entity in found.values():
        record = record_of(entity)
        record.similarity = cosine.get(entity.id)
        store.add(record)
    return query, store, resolver


def to_result(decision: Decision) -> ResolveResult:
    chosen = decision.entity_id
    best = next((s for s in decision.scored if s.entity_id == chosen), None)
    alternatives = [
        Alternative(entity_id=s.entity_id, name=s.name, type=s.type.value, confidence=s.score,
                    name_score=s.name_score, embedding_score=s.embedding_score,
                    type_score=s.type_score)
        for s in decision.scored if s.entity_id != chosen][:5]
    return ResolveResult(entity_id=chosen, name=best.name if best else None,
                         type=best.type.value if best else None,
                         confidence=round(best.score if best else decision.confidence, 3),
                         alternatives=alternatives, decision=decision.kind.value,
                         candidates_compared=decision.candidates_scored)


def resolve_mention(rt: Runtime, group_id: str, mention: str, etype: EntityType | None,
                    context: str = "") -> ResolveResult:
    query, store, resolver = candidates_for(rt, group_id, mention, etype, context)
    decision = resolver.resolve(query, [store])
    if decision.kind is DecisionKind.NEW:
        decision.entity_id = None
    return to_result(decision)
