"""Entity fields that are functions of the current evidence (issue 18).

An entity's evidence count is the number of episodes that mention it, its ``created_at`` the
earliest of those episodes' times (never later than now), and its extractive summary the
sentences of its current facts (``summary_text.resummarized``: a summary a person or an LLM
wrote is kept, less what ended). They are recomputed
from the stores after every write that changes the evidence (a batch, a withdrawal, a
rollback), never accumulated: a batch counted once per batch, a withdrawal never gave back
what it had added and a summary grew in the order batches came, so a worker killed and
restarted (other batches), an edit or a rollback ended with other values than a clean ingest
of the same files.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from knotwork.domain.models import Entity, EntityEvidence, Fact
from knotwork.domain.ports import Collection
from knotwork.domain.timeutil import utcnow
from knotwork.ingestion.embedding_text import entity_point, entity_text
from knotwork.ingestion.summary_text import resummarized

if TYPE_CHECKING:
    from knotwork.runtime import Runtime

_FACT_LIMIT = 10_000


def with_evidence(entity: Entity, evidence: EntityEvidence | None, now: datetime) -> Entity:
    """The entity with its evidence count and first-seen time as the mentions say (an entity
    no episode mentions, e.g. one a fact alone holds, keeps what it has)."""
    if evidence is None or evidence.episodes == 0:
        return entity
    update: dict[str, object] = {}
    if entity.evidence_count != evidence.episodes:
        update["evidence_count"] = evidence.episodes
    first = min(evidence.first_seen, now) if evidence.first_seen is not None else None
    if first is not None and entity.created_at != first:
        update["created_at"] = first
    return entity.model_copy(update=update) if update else entity


def facts_by_entity(facts: Iterable[Fact], ids: Iterable[str]) -> dict[str, list[Fact]]:
    wanted = set(ids)
    out: dict[str, list[Fact]] = {i: [] for i in wanted}
    for fact in {f.id: f for f in facts}.values():
        for endpoint in {fact.source_id, fact.target_id} & wanted:
            out[endpoint].append(fact)
    return out


def refreshed(entity: Entity, evidence: EntityEvidence | None, facts: list[Fact], now: datetime,
              gone: Iterable[str] = ()) -> Entity:
    """``facts``: all the entity's facts; ``gone``: sentences of facts just retired."""
    entity = with_evidence(entity, evidence, now)
    summary = resummarized(entity.summary, facts, gone)
    return entity if summary == entity.summary else entity.model_copy(update={"summary": summary})


def refresh_entities(rt: Runtime, group: str, ids: Iterable[str],
                     gone: Mapping[str, str] | None = None) -> list[Entity]:
    """Recompute the evidence fields of these stored entities; write (and re-embed, when the
    summary changed) the ones that differ. ``gone``: retired facts, id -> sentence."""
    wanted = sorted(set(ids))
    if not wanted:
        return []
    graph, now = rt.graph, utcnow()
    entities = graph.get_entities(group, wanted)
    evidence = graph.entity_evidence(group, wanted)
    hits = graph.expand_facts(group, wanted, depth=1, include_invalid=True, limit=_FACT_LIMIT)
    own = facts_by_entity((h.fact for h in hits), wanted)
    changed: list[Entity] = []
    resummarized: list[Entity] = []
    for entity in entities:
        new = refreshed(entity, evidence.get(entity.id), own.get(entity.id, []), now,
                        gone=(gone or {}).values())
        if new != entity:
            changed.append(new.model_copy(update={"updated_at": now}))
            if new.summary != entity.summary:
                resummarized.append(new)
    if changed:
        graph.upsert_entities(changed)
    if resummarized:
        vectors = rt.embedder.embed([entity_text(e) for e in resummarized])
        rt.vectors.upsert(Collection.ENTITIES, [
            entity_point(e, v) for e, v in zip(resummarized, vectors, strict=True)])
    return changed
