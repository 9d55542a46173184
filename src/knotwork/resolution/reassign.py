"""Move mentions of an entity to another entity or to a new one (a split), with the facts they
evidence, and undo such a move exactly.

A move takes stored mention rows of a *source* entity. Their episodes (chunks) are where the
source was named by the moved surface forms; a fact of the source follows the mention when its
evidence is one of those episodes and it names a moved form (or names none of the source's
remaining names while the source keeps no other mention in that episode). A fact whose whole
evidence follows is re-pointed; one with evidence on both sides is split in two, each keeping
its own episodes. Aliases, evidence counts, extractive summaries, MENTIONS edges, mention rows,
blocking keys and vectors follow. A split leaves *cannot-link* names: the moved forms may never
again resolve to the source, at ingest, in ``resolve``, in consolidation or in re-resolution.

Every action stores the prior state of everything it touches (:class:`ActionSnapshot`) before
writing; :meth:`Reassigner.undo` restores it, so the graph, vectors and SQL equal the state
before the action. Actions are undone newest first where they touch the same entities.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from knotwork.domain.evidence import earliest, evidence_confidence
from knotwork.domain.ids import stable_id
from knotwork.domain.models import AuditEvent, Entity, EntityType, Fact
from knotwork.domain.ports import Collection
from knotwork.domain.timeutil import utcnow
from knotwork.infra.sql.action_store import SqlActionStore
from knotwork.infra.sql.resolution_store import SqlResolutionStore
from knotwork.ingestion.embedding_text import entity_point, entity_text, fact_point
from knotwork.ingestion.summary_text import summary_with, summary_without
from knotwork.resolution.exact import entity_keys
from knotwork.resolution.ingest import entity_block_keys
from knotwork.resolution.merge import MergeError, NotFoundError
from knotwork.resolution.models import (
    ActionKind,
    ActionSnapshot,
    EntityAction,
    EpisodeLinks,
    MentionRow,
)
from knotwork.resolution.normalize import normalize_name
from knotwork.resolution.service import resolution_config
from knotwork.runtime import Runtime

_SUMMARY_SENTENCES = 5
_SUMMARY_CHARS = 1200


# --------------------------------------------------------------------------- pure logic
def _names(text: str, keys: Iterable[str]) -> bool:
    """Whether ``text`` names any of these normalised names as whole words."""
    norm = f" {normalize_name(text)} "
    return any(k and f" {k} " in norm for k in keys)


@dataclass
class FactPlan:
    """What a move does to the source's facts."""

    changed: list[Fact] = field(default_factory=list)  # re-pointed, or keeping part of their evidence
    created: list[Fact] = field(default_factory=list)  # the part of a split fact that moved
    deleted: list[str] = field(default_factory=list)  # would join the target to itself
    moved: list[str] = field(default_factory=list)  # ids of facts (wholly or partly) moved


def _part(fact: Fact, keep: Sequence[int], **update: object) -> Fact:
    episodes = [fact.episodes[i] for i in keep]
    confidences = [fact.episode_confidences[i] for i in keep]
    starts = [fact.episode_valid_at[i] for i in keep]
    return fact.model_copy(update={
        "episodes": episodes, "episode_confidences": confidences, "episode_valid_at": starts,
        "confidence": evidence_confidence(confidences, fact.confidence),
        "valid_at": earliest(starts) if any(starts) else fact.valid_at, **update})


def follow_evidence(facts: Sequence[Fact], source_id: str, target_id: str,
                    moved: dict[str, set[str]], kept: set[str], remaining: set[str]) -> FactPlan:
    """Which evidence of the source's facts follows the moved mentions.

    ``moved``: episode -> normalised surface forms moved out of it; ``kept``: episodes where
    the source keeps a mention; ``remaining``: the source's normalised names after the move.
    """
    plan = FactPlan()
    for fact in facts:
        if source_id not in (fact.source_id, fact.target_id):
            continue
        # evidence follows from a moved episode when the sentence names a moved form there (and
        # no other name of the source), or names none of the source's names and the source
        # keeps no mention in that episode
        follows = [i for i, ep in enumerate(fact.episodes) if ep in moved
                   and not _names(fact.fact, remaining - moved[ep])
                   and (_names(fact.fact, moved[ep]) or ep not in kept)]
        if not follows:
            continue
        plan.moved.append(fact.id)
        ends = {"source_id": target_id if fact.source_id == source_id else fact.source_id,
                "target_id": target_id if fact.target_id == source_id else fact.target_id}
        stays = [i for i in range(len(fact.episodes)) if i not in follows]
        if not stays:
            if ends["source_id"] == ends["target_id"]:
                plan.deleted.append(fact.id)
            else:
                plan.changed.append(fact.model_copy(update=ends))
            continue
        plan.changed.append(_part(fact, stays))
        if ends["source_id"] != ends["target_id"]:
            plan.created.append(_part(fact, follows, id=stable_id(fact.group_id, "fact", fact.id,
                                                                  target_id), **ends))
    return plan


# --------------------------------------------------------------------------- the operation
@dataclass
class Reassigner:
    rt: Runtime
    group_id: str
    sql: SqlResolutionStore
    actions: SqlActionStore

    # ------------------------------------------------------------------ helpers
    def _entity(self, entity_id: str) -> Entity:
        found = self.rt.graph.get_entities(self.group_id, [entity_id])
        if not found:
            raise NotFoundError(f"no entity {entity_id!r} in group {self.group_id!r}")
        return found[0]

    def _facts_of(self, ids: Sequence[str]) -> list[Fact]:
        hits = self.rt.graph.expand_facts(self.group_id, list(ids), depth=1, include_invalid=True,
                                          limit=1_000_000)
        return sorted({h.fact.id: h.fact for h in hits}.values(), key=lambda f: f.id)

    def _write_entities(self, entities: Sequence[Entity]) -> None:
        if not entities:
            return
        self.rt.graph.upsert_entities(list(entities))
        config = resolution_config(self.rt.settings)
        self.sql.replace_keys(self.group_id, {e.id: entity_block_keys(e, config) for e in entities})
        vectors = self.rt.embedder.embed([entity_text(e) for e in entities])
        self.rt.vectors.upsert(Collection.ENTITIES, [entity_point(e, v) for e, v in
                                                     zip(entities, vectors, strict=True)])

    def _write_facts(self, facts: Sequence[Fact]) -> None:
        if not facts:
            return
        self.rt.graph.upsert_facts(list(facts))
        vectors = self.rt.embedder.embed([f.fact for f in facts])
        self.rt.vectors.upsert(Collection.FACTS, [fact_point(f, v) for f, v in
                                                  zip(facts, vectors, strict=True)])

    def _audit(self, action: str, entity_ids: Iterable[str], **detail: object) -> None:
        self.sql.record_audits([AuditEvent(group_id=self.group_id, action=action, entity_id=e,
                                           detail=json.dumps(detail))
                                for e in dict.fromkeys(entity_ids)])

    # ------------------------------------------------------------------ move / split
    def move(self, source_id: str, mention_ids: Sequence[str], *, target_id: str | None = None,
             name: str | None = None, entity_type: EntityType | None = None, actor: str,
             kind: ActionKind | None = None, review_id: str | None = None,
             cannot_link: bool = True) -> EntityAction:
        """Move these mention rows of ``source_id`` (and the facts they evidence) to
        ``target_id``, or to a new entity named ``name`` (default: the most frequent moved
        form) when ``target_id`` is None. Returns the stored, undoable action."""
        source = self._entity(source_id)
        target = self._entity(target_id) if target_id is not None else None
        if target_id == source_id:
            raise MergeError("the mentions are already on that entity")
        rows = {r.id: r for r in self.actions.mention_rows(self.group_id, source_id)}
        chosen = [rows[m] for m in dict.fromkeys(mention_ids) if m in rows]
        if not chosen:
            raise MergeError(f"none of the given mentions belongs to entity {source_id!r}")
        now = utcnow()
        taken = action_time()
        action_id = stable_id(self.group_id, "action", source_id, *sorted(r.id for r in chosen),
                              taken.isoformat())
        forms = _forms(chosen)
        if target is None:
            display = " ".join((name or forms[0]).split())
            key = normalize_name(display)
            if not key:
                raise ValueError("the new entity's name is empty")
            etype = entity_type or source.type
            new_id = stable_id(self.group_id, "entity", key, action_id)
            target = Entity(id=new_id, group_id=self.group_id, name=display, canonical_name=key,
                            type=etype, name_keys=entity_keys(key, [], etype), evidence_count=0,
                            canonical_entity_id=new_id, created_at=now, updated_at=now)
            created: str | None = new_id
        else:
            created = None
        graph = self.rt.graph
        moved_keys = {normalize_name(r.text) for r in chosen}
        left = [r for r in rows.values() if r.id not in {c.id for c in chosen}]
        left_keys = {normalize_name(r.text) for r in left}
        remaining = ({source.canonical_name, *(normalize_name(a) for a in source.aliases)}
                     - (moved_keys - left_keys))
        by_episode: dict[str, set[str]] = {}
        for r in chosen:
            by_episode.setdefault(r.chunk_id, set()).add(normalize_name(r.text))
        kept = {r.chunk_id for r in left}
        facts = self._facts_of([source_id])
        plan = follow_evidence(facts, source_id, target.id, by_episode, kept, remaining)
        before_ids = [source_id, *([target.id] if created is None else [])]
        snapshot = ActionSnapshot(
            entities=[e.model_dump(mode="json") for e in graph.get_entities(self.group_id,
                                                                            before_ids)],
            created_entity=created,
            facts=[f.model_dump(mode="json") for f in facts if f.id in set(plan.moved)],
            created_facts=[f.id for f in plan.created],
            episodes=[EpisodeLinks(entity_id=e, ids=graph.entity_episode_ids(self.group_id, e))
                      for e in before_ids],
            mentions=[EpisodeLinks(entity_id=source_id, ids=sorted(r.id for r in chosen))],
            review_id=review_id, moved_mentions=len(chosen), moved_facts=plan.moved)
        block = [(source_id, k) for k in sorted(moved_keys - left_keys)
                 if k != source.canonical_name] if cannot_link else []
        action = EntityAction(
            id=action_id, group_id=self.group_id,
            kind=kind or (ActionKind.SPLIT if created else ActionKind.MOVE), review_id=review_id,
            entity_ids=[source_id, target.id], snapshot=snapshot, actor=actor,
            created_at=taken)
        # the prior state first: a crash after this leaves an action that undo can restore
        snapshot.cannot_links = block
        self.actions.add_action(action)
        self.actions.add_cannot_links(self.group_id, block, action_id)
        # entities: aliases, evidence counts, summaries
        gone_forms = [r.text for r in chosen if normalize_name(r.text) not in left_keys]
        src_aliases = [a for a in source.aliases if normalize_name(a) not in
                       {normalize_name(x) for x in gone_forms}]
        moved_sentences = [f.fact for f in facts if f.id in set(plan.moved)]
        changed_src = {f.id for f in plan.changed if source_id in (f.source_id, f.target_id)}
        lost = [f.fact for f in facts if f.id in set(plan.moved) and f.id not in changed_src]
        new_source = source.model_copy(update={
            "aliases": src_aliases, "updated_at": now,
            "evidence_count": max(1, source.evidence_count - len(chosen)),
            "summary": summary_without(source.summary, lost),
            "name_keys": entity_keys(source.canonical_name,
                                     [normalize_name(a) for a in src_aliases], source.type)})
        tgt_aliases = list(target.aliases)
        for form in forms:
            if normalize_name(form) != target.canonical_name and form not in tgt_aliases:
                tgt_aliases.append(form)
        new_target = target.model_copy(update={
            "aliases": tgt_aliases, "updated_at": now,
            "evidence_count": target.evidence_count + len(chosen),
            "summary": summary_with(target.summary, moved_sentences, _SUMMARY_SENTENCES,
                                    _SUMMARY_CHARS),
            "name_keys": entity_keys(target.canonical_name,
                                     [normalize_name(a) for a in tgt_aliases], target.type)})
        self._write_entities([new_source, new_target])
        # facts, MENTIONS edges, mention rows
        self._write_facts([*plan.changed, *plan.created])
        if plan.deleted:
            graph.delete_facts(self.group_id, plan.deleted)
            self.rt.vectors.delete(Collection.FACTS, plan.deleted)
        graph.upsert_mentions(self.group_id, [(ep, target.id) for ep in by_episode])
        graph.delete_mentions(self.group_id, [(ep, source_id) for ep in by_episode if ep not in kept])
        self.sql.repoint_mentions(self.group_id, [r.id for r in chosen], target.id)
        self._audit(f"entity.{action.kind.value}", [source_id, target.id], action_id=action_id,
                    actor=actor, source=source_id, target=target.id, forms=forms,
                    mentions=len(chosen), facts=len(plan.moved), review_id=review_id)
        return action

    # ------------------------------------------------------------------ undo
    def undo(self, action_id: str, actor: str) -> EntityAction:
        action = self.actions.get_action(self.group_id, action_id)
        if action is None:
            raise NotFoundError(f"no action {action_id!r} in group {self.group_id!r}")
        if action.undone_at is not None:
            raise MergeError(f"action {action_id!r} was already undone")
        later = [a for a in self.actions.live_actions_since(self.group_id, action)
                 if set(a.entity_ids) & set(action.entity_ids)]
        if later:
            raise MergeError(f"undo the later action {later[0].id!r} on the same entities first")
        snap = action.snapshot
        if snap.merge_id is not None:
            from knotwork.resolution.merge import Merger

            record = self.sql.get_merge(self.group_id, snap.merge_id)
            if record is not None and record.undone_at is None:  # not unmerged by hand since
                Merger(self.rt, self.group_id, self.sql).unmerge(snap.merge_id, actor=actor)
        else:
            self._restore(snap)
        if snap.review_id is not None:
            self.actions.reopen_review(self.group_id, snap.review_id)
        self.actions.mark_undone(self.group_id, action_id)
        self._audit("entity.undo", action.entity_ids, action_id=action_id, kind=action.kind.value,
                    actor=actor)
        return self.actions.get_action(self.group_id, action_id) or action

    def _restore(self, snap: ActionSnapshot) -> None:
        graph, group = self.rt.graph, self.group_id
        if snap.created_facts:
            graph.delete_facts(group, snap.created_facts)
            self.rt.vectors.delete(Collection.FACTS, snap.created_facts)
        self._write_facts([Fact.model_validate(f) for f in snap.facts])
        for links in snap.mentions:
            self.sql.repoint_mentions(group, links.ids, links.entity_id)
        for links in snap.episodes:
            now = set(graph.entity_episode_ids(group, links.entity_id))
            graph.delete_mentions(group, [(ep, links.entity_id) for ep in sorted(now - set(links.ids))])
            graph.upsert_mentions(group, [(ep, links.entity_id) for ep in links.ids])
        if snap.created_entity is not None:
            created = snap.created_entity
            graph.delete_mentions(group, [(ep, created) for ep in
                                          graph.entity_episode_ids(group, created)])
            graph.delete_entities(group, [created])
            self.sql.delete_keys(group, [created])
            self.rt.vectors.delete(Collection.ENTITIES, [created])
        self._write_entities([Entity.model_validate(e) for e in snap.entities])
        self.actions.remove_cannot_links(group, snap.cannot_links)


def action_time() -> datetime:
    """When an action was taken, to the microsecond: actions are undone in this order."""
    return datetime.now(UTC)


def _forms(rows: Sequence[MentionRow]) -> list[str]:
    """The moved surface forms, the most frequent first."""
    counts: dict[str, int] = {}
    for r in rows:
        text = " ".join(r.text.split())
        counts[text] = counts.get(text, 0) + 1
    return sorted(counts, key=lambda t: (-counts[t], t))

