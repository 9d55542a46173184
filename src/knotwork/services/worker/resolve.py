"""RESOLVE_ENTITY tasks: deferred entity resolution, handled idempotently by a worker.

Ingestion resolves a mention by name and type only (a chunk gives no embedding of a mention).
When the two best candidates are tied it cannot choose: the mention becomes a new entity and
a review item (decision ``new``). The worker that ingested the batch then enqueues one
RESOLVE_ENTITY task per such entity (:func:`deferred_tasks`, HIGH priority) and a worker
re-resolves it (:func:`handle_resolve`) against the tenant's other entities — now with the
embedding cosine of the mention in its source chunk, as the API's resolve does:

* a confident match (``auto_merge``: at or above the auto threshold, no close runner-up):
  the entity is merged into the match (:class:`~knotwork.resolution.merge.Merger`, lineage
  kept, undoable) and its pending review items are closed as ``merged``;
* anything else (still tied, a plain or flagged ``merge``, ``new``): nothing changes — the
  review item ingestion filed stays for a reviewer.

A task without ``entity.entity_id`` resolves the display name only (the decision is recorded
in the audit log). Idempotent: an entity already merged away (a redelivery) is a no-op, the
same decision is not audited twice for one task (task ids are deterministic: one per entity
and review), and a review item is closed once.

Resumable: a worker may die in the middle of a merge (lineage row written, graph partly
rewritten, mention rows or vectors not yet moved). The redelivered task finds the live merge
that absorbs its entity and, unless the merge wrote its last row (the ``entity.merge``
audit), finishes it (:meth:`Merger.resume`) before closing the review items and auditing —
the end state equals that of an uninterrupted merge.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from knotwork.domain.ids import stable_id
from knotwork.domain.models import AuditEvent, EntityType
from knotwork.domain.tasks import EntityToResolve, Priority, ResolveEntityTask
from knotwork.infra.sql.resolution_store import SqlResolutionStore
from knotwork.resolution.lookup import candidates_for, resolve_mention
from knotwork.resolution.merge import Merger
from knotwork.resolution.models import MergeRecord, ReviewItem, ReviewStatus
from knotwork.resolution.resolver import Decision, DecisionKind, Resolver
from knotwork.resolution.scoring import MentionQuery, rank
from knotwork.resolution.service import resolution_sql
from knotwork.runtime import Runtime

ACTOR = "worker"
AUDIT_ACTION = "entity.resolution"


class Outcome(StrEnum):
    RESOLVED = "resolved"  # a name-only task: the decision was audited
    MERGED = "merged"
    KEPT = "kept"  # no confident match: the entity (and its review item) stay
    GONE = "gone"  # the entity no longer exists (merged or retired meanwhile)


@dataclass(frozen=True)
class ResolveOutcome:
    outcome: Outcome
    entity_id: str | None
    target_id: str | None = None
    decision: str = ""
    confidence: float = 0.0


def _entity_type(value: str) -> EntityType | None:
    try:
        return EntityType(value)
    except ValueError:
        return None


def deferred_tasks(group_id: str, deferred: Sequence[ReviewItem]) -> list[ResolveEntityTask]:
    """One RESOLVE_ENTITY task per entity of the deferred (tied) decisions of a batch."""
    resolver = Resolver()
    tasks: dict[str, ResolveEntityTask] = {}
    first: dict[str, str] = {}  # entity id -> its first review id: the task id's seed
    for item in sorted(deferred, key=lambda r: r.id):
        if item.entity_id is not None:
            first.setdefault(item.entity_id, item.id)
    for item in deferred:
        if item.entity_id is None or item.entity_id in tasks:
            continue
        etype = _entity_type(item.entity_type)
        keys = resolver.keys(MentionQuery(item.mention, etype))
        tasks[item.entity_id] = ResolveEntityTask(
            task_id=stable_id(group_id, "resolve-entity", item.entity_id, first[item.entity_id]),
            group_id=group_id, priority=Priority.HIGH, blocking_keys=keys,
            entity=EntityToResolve(display_name=item.mention, entity_type=etype,
                                   entity_id=item.entity_id,
                                   source_chunk_id=item.episode_ids[0] if item.episode_ids
                                   else None))
    return list(tasks.values())


def _audited(rt: Runtime, group_id: str, entity_id: str | None, task_id: str) -> bool:
    sql = resolution_sql(rt)
    if sql is None or entity_id is None:
        return False
    return sql.has_audit(group_id, entity_id, AUDIT_ACTION, task_id)


def _audit(rt: Runtime, task: ResolveEntityTask, entity_id: str | None, detail: str) -> None:
    if _audited(rt, task.group_id, entity_id, task.task_id):
        return
    rt.documents.record_audit(AuditEvent(group_id=task.group_id, action=AUDIT_ACTION,
                                         entity_id=entity_id, detail=detail))


def _context(rt: Runtime, group_id: str, chunk_id: str | None) -> str:
    if not chunk_id:
        return ""
    episodes = rt.graph.get_episodes(group_id, [chunk_id])
    return episodes[0].content if episodes else ""


def _decide(rt: Runtime, group_id: str, entity_id: str, name: str, etype: EntityType,
            aliases: Sequence[str], context: str) -> Decision:
    """The entity against every other candidate (itself excluded), embedding included."""
    query, store, resolver = candidates_for(rt, group_id, name, etype, context)
    query = MentionQuery(query.text, etype, type_confidence=1.0, context=query.context,
                         embedding=query.embedding, aliases=tuple(aliases))
    records, read = resolver.candidates(query, [store])
    others = [r for r in records if r.id != entity_id]
    return resolver.decide(rank(resolver.config, query, others), read, len(others))


def handle_resolve(rt: Runtime, task: ResolveEntityTask) -> ResolveOutcome:
    """Call under the store-writer lock (reads the entity vectors, may merge)."""
    group = task.group_id
    wanted = task.entity
    if wanted.entity_id is None:
        result = resolve_mention(rt, group, wanted.display_name, wanted.entity_type)
        _audit(rt, task, result.entity_id,
               f"{wanted.display_name!r} -> {result.name!r} "
               f"(confidence {result.confidence:.2f}, task {task.task_id})")
        return ResolveOutcome(Outcome.RESOLVED, result.entity_id, result.entity_id,
                              result.decision, result.confidence)
    found = rt.graph.get_entities(group, [wanted.entity_id])
    sql = resolution_sql(rt)
    absorbed = sql.live_merge_absorbing(group, wanted.entity_id) if sql is not None else None
    if sql is not None and absorbed is not None \
            and (not found or not Merger(rt, group, sql).finished(absorbed)):
        return _finish_merge(rt, task, sql, absorbed)  # a redelivery (or merged meanwhile)
    if not found:
        return ResolveOutcome(Outcome.GONE, wanted.entity_id)
    entity = found[0]
    decision = _decide(rt, group, entity.id, entity.name, entity.type, entity.aliases,
                       _context(rt, group, wanted.source_chunk_id))
    target = decision.entity_id
    detail = {"task": task.task_id, "mention": wanted.display_name, "entity": entity.name,
              "decision": decision.kind.value, "score": decision.confidence,
              "candidates": [[s.entity_id, s.name, s.score] for s in decision.scored[:3]]}
    if decision.kind is not DecisionKind.AUTO_MERGE or decision.flagged or target is None:
        _audit(rt, task, entity.id, json.dumps(detail | {"outcome": "kept"}))
        return ResolveOutcome(Outcome.KEPT, entity.id, target, decision.kind.value,
                              decision.confidence)
    if sql is None:
        raise ValueError("merging needs the SQL document store")
    record = Merger(rt, group, sql).merge(target, [entity.id], actor=ACTOR,
                                          confidence=decision.confidence)
    _close_reviews(rt, group, entity.id, wanted.display_name, target)
    # last: this task's audit row marks it done (see _finish_merge)
    rt.documents.record_audit(AuditEvent(
        group_id=group, action=AUDIT_ACTION, entity_id=target,
        detail=json.dumps(detail | {"outcome": "merged", "merge_id": record.id,
                                    "source": entity.id})))
    return ResolveOutcome(Outcome.MERGED, entity.id, target, decision.kind.value,
                          decision.confidence)


def _finish_merge(rt: Runtime, task: ResolveEntityTask, sql: SqlResolutionStore,
                  record: MergeRecord) -> ResolveOutcome:
    """The entity of the task was absorbed by ``record``: finish that merge if a crash
    interrupted it, then this task's own last steps (review items, audit) unless done."""
    group, wanted = task.group_id, task.entity
    Merger(rt, group, sql).resume(record)  # nothing to do when it was finished
    target = record.target_id
    if record.actor != ACTOR or _audited(rt, group, target, task.task_id):
        return ResolveOutcome(Outcome.GONE, wanted.entity_id, target)  # done, or not ours
    confidence = float(str(record.snapshot["merged"][0].get("resolution_confidence") or 0.0))
    _close_reviews(rt, group, str(wanted.entity_id), wanted.display_name, target)
    rt.documents.record_audit(AuditEvent(
        group_id=group, action=AUDIT_ACTION, entity_id=target,
        detail=json.dumps({"task": task.task_id, "mention": wanted.display_name,
                           "decision": DecisionKind.AUTO_MERGE.value, "score": confidence,
                           "outcome": "merged", "merge_id": record.id,
                           "source": wanted.entity_id, "resumed": True})))
    return ResolveOutcome(Outcome.MERGED, wanted.entity_id, target,
                          DecisionKind.AUTO_MERGE.value, confidence)


def _close_reviews(rt: Runtime, group_id: str, entity_id: str, mention: str,
                   target_id: str) -> None:
    sql = resolution_sql(rt)
    if sql is None:
        return
    for item in sql.list_reviews(group_id, ReviewStatus.PENDING, query=mention, limit=500):
        if item.entity_id == entity_id:
            sql.decide_review(group_id, item.id, ReviewStatus.MERGED, ACTOR,
                              f"merged into {target_id} on re-resolution")
