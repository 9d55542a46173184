"""Entity operations behind the API, the admin UI and the CLI: create (resolving first), read,
search, the review queue (approve / reject / merge into another) and merge / unmerge.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.ids import stable_id
from knotwork.domain.models import AuditEvent, Entity, EntityType, Fact, PropertyValue
from knotwork.domain.ports import Collection
from knotwork.domain.timeutil import utcnow
from knotwork.infra.sql.action_store import SqlActionStore
from knotwork.infra.sql.resolution_store import SqlResolutionStore
from knotwork.ingestion.embedding_text import entity_point, entity_text
from knotwork.resolution.exact import entity_keys
from knotwork.resolution.ingest import entity_block_keys
from knotwork.resolution.lookup import ResolveResult, candidates_for, resolve_mention
from knotwork.resolution.merge import MergeError, Merger, NotFoundError
from knotwork.resolution.models import (
    ActionKind,
    ActionSnapshot,
    AuditEntry,
    EntityAction,
    MentionExample,
    MentionRow,
    MergeRecord,
    ReviewFilter,
    ReviewItem,
    ReviewPage,
    ReviewStatus,
)
from knotwork.resolution.normalize import name_key, normalize_name, readable_name
from knotwork.resolution.reassign import Reassigner, action_time
from knotwork.resolution.resolver import DecisionKind
from knotwork.resolution.scoring import rank
from knotwork.resolution.service import resolution_config, resolution_sql
from knotwork.runtime import Runtime


class CreateResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entity_id: str
    canonical_entity_id: str
    created: bool
    confidence: float


class EntityView(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entity: Entity
    relationships: list[Fact]
    mentions_count: int
    examples: list[MentionExample]
    merges: list[MergeRecord]


class SearchHit(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entity: Entity
    score: float


class BulkDecision(BaseModel):
    model_config = ConfigDict(extra="forbid")
    decided: list[str]  # review item ids
    failed: list[str]  # decided meanwhile, or their entity is gone
    remaining: int  # pending items the filter still selects


class ReviewView(BaseModel):
    """A review item with both sides' details, for the admin UI."""

    model_config = ConfigDict(extra="forbid")
    item: ReviewItem
    entities: list[EntityView]


class EntityChanges(BaseModel):
    """Editable fields of an entity; None leaves a field as it is."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    entity_type: EntityType | None = None
    aliases: list[str] | None = None
    summary: str | None = None


class SplitRequest(BaseModel):
    """Which mentions of an entity to move (any of: ids, documents, surface forms) and where:
    ``into`` an existing entity, else a new one named ``name`` (default: the commonest moved
    form) of ``entity_type`` (default: the source's)."""

    model_config = ConfigDict(extra="forbid")
    mention_ids: list[str] = Field(default_factory=list, max_length=5000)
    document_ids: list[str] = Field(default_factory=list, max_length=1000)
    surface_forms: list[str] = Field(default_factory=list, max_length=100)
    into: str | None = None
    name: str | None = Field(default=None, max_length=300)
    entity_type: EntityType | None = None


class VersionConflictError(MergeError):
    """The entity changed since the caller read it (optimistic locking)."""

    def __init__(self, entity_id: str, current: int) -> None:
        super().__init__(f"entity {entity_id!r} is at version {current}; re-read it and retry")
        self.current = current


@dataclass
class EntityWorkflow:
    rt: Runtime
    group_id: str

    @property
    def actions_sql(self) -> SqlActionStore:
        return SqlActionStore(self.sql.documents)

    @property
    def reassigner(self) -> Reassigner:
        return Reassigner(self.rt, self.group_id, self.sql, self.actions_sql)

    @property
    def sql(self) -> SqlResolutionStore:
        sql = resolution_sql(self.rt)
        if sql is None:
            raise MergeError("entity resolution needs the SQL document store")
        return sql

    def _audit(self, action: str, entity_id: str | None, **detail: object) -> None:
        self.sql.record_audits([AuditEvent(group_id=self.group_id, action=action,
                                           entity_id=entity_id, detail=json.dumps(detail))])

    def _write(self, entities: list[Entity]) -> None:
        self.rt.graph.upsert_entities(entities)
        config = resolution_config(self.rt.settings)
        self.sql.replace_keys(self.group_id, {e.id: entity_block_keys(e, config)
                                              for e in entities})
        vectors = self.rt.embedder.embed([entity_text(e) for e in entities])
        self.rt.vectors.upsert(Collection.ENTITIES, [entity_point(e, v) for e, v in
                                                     zip(entities, vectors, strict=True)])

    # ------------------------------------------------------------------ resolve / create
    def resolve(self, mention: str, etype: EntityType | None, context: str = "") -> ResolveResult:
        return resolve_mention(self.rt, self.group_id, mention, etype, context)

    def create(self, display_name: str, etype: EntityType, properties: dict[str, str],
               source_chunk_id: str | None = None, actor: str = "api") -> CreateResult:
        name = readable_name(display_name)
        key = name_key(name)
        if not key:
            raise ValueError("display_name is empty")
        query, store, resolver = candidates_for(self.rt, self.group_id, name, etype,
                                                properties=properties)
        decision = resolver.resolve(query, [store])
        source = source_chunk_id or f"api:{actor}"
        values = {k: [PropertyValue(value=str(v), source=source)] for k, v in properties.items()}
        now = utcnow()
        if decision.kind is not DecisionKind.NEW and decision.entity_id:
            [entity] = self.rt.graph.get_entities(self.group_id, [decision.entity_id])
            props = {k: list(v) for k, v in entity.properties.items()}
            for k, vs in values.items():
                props.setdefault(k, [])
                props[k] += [v for v in vs if v.value not in {x.value for x in props[k]}]
            aliases = list(entity.aliases)
            if name != entity.name and name not in aliases:
                aliases.append(name)
            updated = entity.model_copy(update={
                "aliases": aliases, "properties": props, "updated_at": now,
                "evidence_count": entity.evidence_count + 1,
                "name_keys": list(dict.fromkeys([*entity.name_keys, *entity_keys(
                    entity.canonical_name, [normalize_name(a) for a in aliases], entity.type)]))})
            self._write([updated])
            self._audit(f"resolution.{decision.kind.value}", entity.id, mention=name,
                        score=decision.confidence, actor=actor)
            return CreateResult(entity_id=entity.id, canonical_entity_id=entity.id, created=False,
                                confidence=decision.confidence)
        entity_id = stable_id(self.group_id, "entity", key)
        if self.rt.graph.get_entities(self.group_id, [entity_id]):
            entity_id = stable_id(self.group_id, "entity", key, etype.value)
        entity = Entity(id=entity_id, group_id=self.group_id, name=name, canonical_name=key,
                        type=etype, name_keys=entity_keys(key, [], etype), properties=values,
                        canonical_entity_id=entity_id, created_at=now, updated_at=now)
        self._write([entity])
        self._audit("entity.create", entity_id, name=name, actor=actor)
        return CreateResult(entity_id=entity_id, canonical_entity_id=entity_id, created=True,
                            confidence=1.0)

    # ------------------------------------------------------------------ edit (optimistic locking)
    def update(self, entity_id: str, expected_version: int, changes: EntityChanges,
               actor: str = "api") -> Entity:
        """Apply ``changes`` if the entity is still at ``expected_version``; else
        ``VersionConflictError`` (HTTP 409) naming the current version."""
        found = self.rt.graph.get_entities(self.group_id, [entity_id])
        if not found:
            raise NotFoundError(f"no entity {entity_id!r} in group {self.group_id!r}")
        entity = found[0]
        if entity.version != expected_version:
            raise VersionConflictError(entity_id, entity.version)
        if not changes.model_dump(exclude_none=True):
            return entity  # nothing to change: the entity as read, version unchanged
        name = readable_name(changes.name) if changes.name is not None else entity.name
        if not name_key(name):
            raise ValueError("name is empty")
        etype = changes.entity_type or entity.type
        aliases = list(changes.aliases) if changes.aliases is not None else list(entity.aliases)
        if name != entity.name and entity.name not in aliases:
            aliases.append(entity.name)  # a renamed entity is still found by its old name
        aliases = [a for a in dict.fromkeys(aliases) if a != name]
        key = name_key(name)
        updated = entity.model_copy(update={
            "name": name, "canonical_name": key, "type": etype, "aliases": aliases,
            "summary": changes.summary if changes.summary is not None else entity.summary,
            "name_keys": entity_keys(key, [normalize_name(a) for a in aliases], etype),
            "updated_at": utcnow(), "version": expected_version + 1})
        if not self.rt.graph.update_entity(updated, expected_version):
            current = self.rt.graph.get_entities(self.group_id, [entity_id])
            if not current:
                raise NotFoundError(f"no entity {entity_id!r} in group {self.group_id!r}")
            raise VersionConflictError(entity_id, current[0].version)
        self.sql.replace_keys(self.group_id, {updated.id: entity_block_keys(
            updated, resolution_config(self.rt.settings))})
        [vector] = self.rt.embedder.embed([entity_text(updated)])
        self.rt.vectors.upsert(Collection.ENTITIES, [entity_point(updated, vector)])
        self._audit("entity.update", entity_id, actor=actor, version=updated.version,
                    changed=sorted(changes.model_dump(exclude_none=True)))
        return updated

    # ------------------------------------------------------------------ read / search
    def canonical_id(self, entity_id: str) -> str | None:
        """The live entity an id names: itself, or the entity it was merged into."""
        seen: set[str] = set()
        current = entity_id
        while current not in seen:
            seen.add(current)
            if self.rt.graph.get_entities(self.group_id, [current]):
                return current
            target = self.sql.merged_into(self.group_id, current)
            if target is None:
                return None
            current = target
        return None

    def view(self, entity_id: str) -> EntityView:
        canonical = self.canonical_id(entity_id)
        if canonical is None:
            raise NotFoundError(f"no entity {entity_id!r} in group {self.group_id!r}")
        [entity] = self.rt.graph.get_entities(self.group_id, [canonical])
        hits = self.rt.graph.expand_facts(self.group_id, [canonical], depth=1,
                                          include_invalid=True, limit=100)
        return EntityView(entity=entity, relationships=[h.fact for h in hits],
                          mentions_count=len(self.sql.mention_ids(self.group_id, canonical)),
                          examples=self.sql.mention_examples(self.group_id, canonical),
                          merges=self.sql.merges_of(self.group_id, canonical))

    def search(self, query: str, types: list[EntityType], min_confidence: float, limit: int,
               include_aliases: bool = True) -> tuple[list[SearchHit], int]:
        q, store, resolver = candidates_for(self.rt, self.group_id, query,
                                            types[0] if len(types) == 1 else None)
        records = [r for r in store.records if not types or r.type in types]
        if not include_aliases:
            for r in records:
                r.aliases = ()
        scored = [s for s in rank(resolver.config, q, records) if s.name_score >= 0.6]
        entities = {e.id: e for e in self.rt.graph.get_entities(
            self.group_id, [s.entity_id for s in scored])}
        hits = [SearchHit(entity=entities[s.entity_id], score=s.score) for s in scored
                if s.entity_id in entities and entities[s.entity_id].confidence >= min_confidence]
        return hits[:limit], len(hits)

    def audit_trail(self, entity_id: str) -> list[AuditEntry]:
        return self.sql.audit_trail(self.group_id, entity_id)

    # ------------------------------------------------------------------ reviews
    def reviews(self, status: ReviewStatus | None, query: str = "", limit: int = 50) -> list[ReviewItem]:
        return self.sql.list_reviews(self.group_id, status, query, limit)

    def review_page(self, flt: ReviewFilter, offset: int = 0, limit: int = 50) -> ReviewPage:
        return self.sql.review_page(self.group_id, flt, offset, limit)

    def bulk_decide(self, flt: ReviewFilter, approve: bool, actor: str, limit: int = 500
                    ) -> BulkDecision:
        """Approve (keep) or reject (split off) up to ``limit`` pending items ``flt`` selects,
        each exactly as one click would, each audited with ``actor``."""
        pending = flt.model_copy(update={"status": ReviewStatus.PENDING})
        decided: list[str] = []
        failed: list[str] = []
        for item in self.sql.review_page(self.group_id, pending, 0, limit).items:
            try:
                (self.approve if approve else self.reject)(item.id, actor)
                decided.append(item.id)
            except (MergeError, NotFoundError):  # decided meanwhile, or its entity is gone
                failed.append(item.id)
        remaining = self.sql.review_page(self.group_id, pending, 0, 1).total
        return BulkDecision(decided=decided, failed=failed, remaining=remaining)

    def review_views(self, items: Sequence[ReviewItem]) -> list[ReviewView]:
        """The queue's cards for a page of items, read in a few batched queries: each side's
        entity, mention count and first mentions (no facts or merges: a card shows none)."""
        wanted = list(dict.fromkeys(x for item in items
                                    for x in (item.entity_id, *(c.entity_id for c in item.candidates))
                                    if x))
        live = {e.id: e for e in self.rt.graph.get_entities(self.group_id, wanted)}
        canonical = {x: x if x in live else self.canonical_id(x) for x in wanted}
        missing = [c for c in set(canonical.values()) if c is not None and c not in live]
        live.update((e.id, e) for e in self.rt.graph.get_entities(self.group_id, missing))
        counts = self.sql.mention_counts(self.group_id, list(live))
        examples = self.sql.mention_examples_of(self.group_id, list(live))
        cards = {x: EntityView(entity=e, relationships=[], mentions_count=counts.get(x, 0),
                               examples=examples.get(x, []), merges=[]) for x, e in live.items()}
        views = []
        for item in items:
            ids = [item.entity_id or "", *(c.entity_id for c in item.candidates)]
            sides = dict.fromkeys(c for c in (canonical.get(x) for x in ids if x) if c in cards)
            views.append(ReviewView(item=item, entities=[cards[c] for c in sides]))
        return views

    def _review(self, review_id: str) -> ReviewItem:
        item = self.sql.get_review(self.group_id, review_id)
        if item is None:
            raise NotFoundError(f"no review item {review_id!r} in group {self.group_id!r}")
        if item.status is not ReviewStatus.PENDING:
            raise MergeError(f"review item {review_id!r} is already {item.status.value}")
        return item

    def approve(self, review_id: str, actor: str) -> ReviewItem:
        item = self._review(review_id)
        self._record(ActionKind.APPROVE, item, actor, ActionSnapshot(review_id=review_id))
        self.sql.decide_review(self.group_id, review_id, ReviewStatus.APPROVED, actor, "kept")
        self._audit("review.approve", item.entity_id, review_id=review_id, actor=actor)
        return self.sql.get_review(self.group_id, review_id) or item

    def reject(self, review_id: str, actor: str) -> ReviewItem:
        """The mention is not that entity: it is split off into an entity of its own."""
        item = self._review(review_id)
        if item.decision == DecisionKind.NEW.value:  # already apart: nothing to undo
            outcome = "kept apart"
            self._record(ActionKind.REJECT, item, actor, ActionSnapshot(review_id=review_id))
            self._audit("review.reject", item.entity_id, review_id=review_id, actor=actor)
        else:
            outcome = f"split into {self._split_off(item, None, actor, ActionKind.REJECT)}"
        self.sql.decide_review(self.group_id, review_id, ReviewStatus.REJECTED, actor, outcome)
        return self.sql.get_review(self.group_id, review_id) or item

    def merge_into(self, review_id: str, target_id: str, actor: str) -> ReviewItem:
        item = self._review(review_id)
        target = self.canonical_id(target_id)
        if target is None:
            raise NotFoundError(f"no entity {target_id!r} in group {self.group_id!r}")
        if target != item.entity_id:
            self._split_off(item, target, actor, ActionKind.MERGE_INTO)
        else:
            self._record(ActionKind.MERGE_INTO, item, actor, ActionSnapshot(review_id=review_id))
        self.sql.decide_review(self.group_id, review_id, ReviewStatus.MERGED, actor,
                               f"merged into {target}")
        return self.sql.get_review(self.group_id, review_id) or item

    def _record(self, kind: ActionKind, item: ReviewItem, actor: str, snapshot: ActionSnapshot,
                entity_ids: list[str] | None = None) -> EntityAction:
        """An undoable action that changes only the review item (or a whole-entity merge)."""
        now = action_time()
        action = EntityAction(id=stable_id(self.group_id, "action", item.id, now.isoformat()),
                              group_id=self.group_id, kind=kind, review_id=item.id,
                              entity_ids=entity_ids or [x for x in [item.entity_id] if x],
                              snapshot=snapshot,
                              actor=actor, created_at=now)
        self.actions_sql.add_action(action)
        return action

    def _split_off(self, item: ReviewItem, target_id: str | None, actor: str,
                   kind: ActionKind) -> str:
        """Move the review's mention (its mention rows in the item's episodes, the facts they
        evidence, the alias) off the entity it was attached to, into ``target_id`` or a new
        entity; returns that id. Undoable (:meth:`undo`)."""
        source_id = self.canonical_id(item.entity_id) if item.entity_id else None
        if source_id is None:
            raise MergeError("the entity of this review item no longer exists")
        if item.decision == DecisionKind.NEW.value and target_id is not None:
            record = Merger(self.rt, self.group_id, self.sql).merge(target_id, [source_id],
                                                                     actor=actor)
            self._record(kind, item, actor, ActionSnapshot(review_id=item.id, merge_id=record.id),
                         [source_id, target_id])
            return target_id
        mention_key = normalize_name(item.mention)
        moved = [r.id for r in self.actions_sql.mention_rows(self.group_id, source_id)
                 if r.chunk_id in set(item.episode_ids) and normalize_name(r.text) == mention_key]
        if not moved:
            raise MergeError(f"no stored mention {item.mention!r} of this review item is left "
                             "on its entity")
        action = self.reassigner.move(
            source_id, moved, target_id=target_id, name=item.mention,
            entity_type=EntityType(item.entity_type) if target_id is None else None,
            actor=actor, kind=kind, review_id=item.id)
        self._community_upkeep(action)
        return action.entity_ids[1]

    # ------------------------------------------------------------------ split / undo
    def mentions(self, entity_id: str) -> list[MentionRow]:
        canonical = self.canonical_id(entity_id)
        if canonical is None:
            raise NotFoundError(f"no entity {entity_id!r} in group {self.group_id!r}")
        return self.actions_sql.mention_rows(self.group_id, canonical)

    def split(self, entity_id: str, request: SplitRequest, actor: str) -> EntityAction:
        """Move the mentions the request selects (by id, document or surface form) to
        ``request.into`` or to a new entity; facts follow their evidence."""
        source = self.canonical_id(entity_id)
        if source is None:
            raise NotFoundError(f"no entity {entity_id!r} in group {self.group_id!r}")
        target = None
        if request.into is not None:
            target = self.canonical_id(request.into)
            if target is None:
                raise NotFoundError(f"no entity {request.into!r} in group {self.group_id!r}")
        rows = self.actions_sql.mention_rows(self.group_id, source)
        forms = {normalize_name(f) for f in request.surface_forms}
        chosen = [r.id for r in rows if r.id in set(request.mention_ids)
                  or r.document_id in set(request.document_ids)
                  or normalize_name(r.text) in forms]
        if not chosen:
            raise MergeError("the selection matches no mention of this entity")
        if len(chosen) == len(rows) and target is None:
            raise MergeError("that selects every mention: rename the entity instead of splitting")
        action = self.reassigner.move(source, chosen, target_id=target, name=request.name,
                                      entity_type=request.entity_type, actor=actor)
        self._community_upkeep(action)
        return action

    def actions(self, limit: int = 50) -> list[EntityAction]:
        return self.actions_sql.actions(self.group_id, limit)

    def undo(self, action_id: str, actor: str) -> EntityAction:
        action = self.reassigner.undo(action_id, actor)
        self._community_upkeep(action)
        return action

    def _community_upkeep(self, action: EntityAction) -> None:
        """Communities follow the moved facts as after an ingest batch: the entities' leaf
        communities (and their parents) are marked stale, a new entity is assigned to one, and
        past the rebuild threshold the communities are rebuilt (no-op before a first build)."""
        if not action.snapshot.moved_facts:
            return
        from knotwork.communities.service import CommunityService

        live = [e.id for e in self.rt.graph.get_entities(self.group_id, action.entity_ids)]
        hits = self.rt.graph.expand_facts(self.group_id, live, depth=1, include_invalid=True,
                                          limit=10_000) if live else []
        CommunityService(self.rt, self.group_id).after_ingest([h.fact for h in hits])

    # ------------------------------------------------------------------ merge / unmerge
    def merge(self, target_id: str, source_ids: list[str], actor: str) -> MergeRecord:
        return Merger(self.rt, self.group_id, self.sql).merge(target_id, source_ids, actor=actor)

    def unmerge(self, merge_id: str, actor: str) -> MergeRecord:
        return Merger(self.rt, self.group_id, self.sql).unmerge(merge_id, actor=actor)
