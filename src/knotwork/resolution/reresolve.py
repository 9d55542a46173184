"""Bulk re-resolution of a tenant (after threshold or rule changes).

Every entity's blocking keys are rebuilt; then each entity, least evidenced first, is resolved
against the others (itself excluded). A confident match is merged into the better-evidenced
entity through :class:`Merger` (lineage kept, so each merge can be undone); a flagged one goes
to the review queue. Re-resolution only joins entities: splitting one needs a reviewer.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.ids import stable_id
from knotwork.domain.timeutil import utcnow
from knotwork.resolution.cannot_link import load_cannot_link
from knotwork.resolution.consolidate import consolidate
from knotwork.resolution.ingest import entity_block_keys, record_of, review_candidates
from knotwork.resolution.merge import Merger
from knotwork.resolution.models import ReviewItem
from knotwork.resolution.resolver import DecisionKind, MemoryCandidates, Resolver
from knotwork.resolution.scoring import MentionQuery, rank
from knotwork.resolution.service import resolution_config, resolution_sql
from knotwork.runtime import Runtime


class PlannedMerge(BaseModel):
    model_config = ConfigDict(extra="forbid")
    target_id: str
    target: str
    source_id: str
    source: str
    score: float
    merge_id: str | None = None


class ReresolveReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entities: int
    keys_rebuilt: int
    merges: list[PlannedMerge] = Field(default_factory=list)
    flagged: int = 0
    dry_run: bool = False
    consolidated: int = 0  # entities joined to a twin by the consolidation pass


def reresolve(rt: Runtime, group_id: str, *, dry_run: bool = False,
              progress: Callable[[int], None] | None = None) -> ReresolveReport:
    sql = resolution_sql(rt)
    if sql is None:
        raise ValueError("re-resolution needs the SQL document store")
    resolver = Resolver(resolution_config(rt.settings))
    cannot = load_cannot_link(rt, group_id)
    joined = consolidate(rt, group_id, dry_run=dry_run)  # twins on strong name evidence first
    entities = {e.id: e for e in rt.graph.list_entities(group_id)}
    if not dry_run:
        sql.replace_keys(group_id, {e.id: entity_block_keys(e, resolver.config)
                                   for e in entities.values()})
    store = MemoryCandidates(resolver.rules)
    for entity in entities.values():
        store.add(record_of(entity))
    report = ReresolveReport(entities=len(entities), keys_rebuilt=0 if dry_run else len(entities),
                             dry_run=dry_run, consolidated=joined.merged_entities)
    merged: set[str] = set()
    reviews: list[ReviewItem] = []
    order = sorted(entities.values(), key=lambda e: (e.evidence_count, e.name, e.id))
    merger = Merger(rt, group_id, sql)
    for entity in order:
        if progress:
            progress(1)
        if entity.id in merged:
            continue
        query = MentionQuery(entity.name, entity.type, aliases=tuple(entity.aliases))
        records, _ = resolver.candidates(query, [store])
        others = [r for r in records if r.id != entity.id and r.id not in merged
                  and (r.id not in entities or cannot.allows_pair(entity, entities[r.id]))]
        decision = resolver.decide(rank(resolver.config, query, others), 0, len(others))
        target_id = decision.entity_id
        if decision.flagged:
            reviews.append(ReviewItem(
                id=stable_id(group_id, "review", "reresolve", entity.id), group_id=group_id,
                mention=entity.name, entity_type=entity.type.value, entity_id=entity.id,
                decision=DecisionKind.NEW.value,  # kept apart; "merge into" joins the two
                score=decision.confidence, candidates=review_candidates(decision),
                created_at=utcnow()))
            continue
        if target_id is None or decision.kind is DecisionKind.NEW:
            continue
        target = entities[target_id]
        plan = PlannedMerge(target_id=target_id, target=target.name, source_id=entity.id,
                            source=entity.name, score=decision.confidence)
        if not dry_run:
            plan.merge_id = merger.merge(target_id, [entity.id], actor="reresolve",
                                         confidence=decision.confidence).id
        merged.add(entity.id)
        report.merges.append(plan)
    report.flagged = len(reviews)
    if not dry_run:
        sql.add_reviews(reviews)
    return report

