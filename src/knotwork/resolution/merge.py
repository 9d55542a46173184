"""Merge entities into one (with lineage) and undo a merge exactly.

Merge: the target gains the sources' names as aliases, their evidence counts, properties (each
value keeps its provenance) and ``merged_from``; facts and MENTIONS (graph) and mention rows
(SQL) are re-pointed to it; facts that would join the target to itself are removed. The prior
state of every touched entity, fact, MENTIONS edge and mention row is stored in
``entity_merges`` so :func:`unmerge` puts it back: an export before the merge equals an export
after merge + unmerge.

Resumable: that lineage row is written first and the ``entity.merge`` audit row last; the
writes between are idempotent, so a merge interrupted by a crash is finished by
:meth:`Merger.resume` (a worker's redelivered RESOLVE_ENTITY task does this).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

from knotwork.domain.ids import stable_id
from knotwork.domain.models import AuditEvent, Entity, Fact
from knotwork.domain.ports import Collection
from knotwork.domain.timeutil import utcnow
from knotwork.infra.sql.resolution_store import SqlResolutionStore
from knotwork.ingestion.embedding_text import entity_point, entity_text, fact_point
from knotwork.resolution.ingest import entity_block_keys
from knotwork.resolution.models import MergeRecord
from knotwork.resolution.normalize import normalize_name
from knotwork.resolution.parallel_facts import collapse, parallel_key, unabsorbed
from knotwork.resolution.scoring import ResolutionConfig
from knotwork.resolution.service import resolution_config
from knotwork.runtime import Runtime


class MergeError(ValueError):
    """A merge or unmerge that cannot be done (unknown entity, already undone ...)."""


class NotFoundError(MergeError):
    pass


@dataclass
class Merger:
    rt: Runtime
    group_id: str
    sql: SqlResolutionStore

    # ------------------------------------------------------------------ helpers
    def _entities(self, ids: list[str]) -> list[Entity]:
        found = self.rt.graph.get_entities(self.group_id, ids)
        missing = sorted(set(ids) - {e.id for e in found})
        if missing:
            raise NotFoundError(f"no entity {missing[0]!r} in group {self.group_id!r}")
        return found

    def _facts_touching(self, ids: list[str]) -> list[Fact]:
        hits = self.rt.graph.expand_facts(self.group_id, ids, depth=1, include_invalid=True,
                                          limit=1_000_000)
        return sorted({h.fact.id: h.fact for h in hits}.values(), key=lambda f: f.id)

    def _parallels(self, target_id: str, sources: list[str], facts: list[Fact]) -> list[Fact]:
        """The target's facts that a re-pointed fact of the sources would duplicate."""
        moved, _ = _repointed(facts, target_id, set(sources))
        keys = {parallel_key(f) for f in moved}
        have = {f.id for f in facts}
        return [f for f in self._facts_touching([target_id])
                if f.id not in have and parallel_key(f) in keys]

    def _config(self) -> ResolutionConfig:
        return resolution_config(self.rt.settings)

    def _memberships(self, ids: list[str]) -> dict[str, list[str]]:
        """entity id -> the communities (every level) it is a member of (HAS_MEMBER)."""
        out: dict[str, list[str]] = {}
        state = self.rt.graph.get_community_state(self.group_id)
        levels = state.levels if state is not None else 0
        for level in range(max(levels, 0) + 1):
            found = self.rt.graph.community_of(self.group_id, ids, level)
            if not found and level >= levels:
                break
            for entity_id, community_id in found.items():
                out.setdefault(entity_id, []).append(community_id)
        return out

    def _embed(self, entities: list[Entity]) -> None:
        if not entities:
            return
        vectors = self.rt.embedder.embed([entity_text(e) for e in entities])
        self.rt.vectors.upsert(Collection.ENTITIES,
                               [entity_point(e, v) for e, v in zip(entities, vectors, strict=True)])

    def _audit(self, action: str, entity_id: str, detail: dict[str, object]) -> None:
        self.sql.record_audits([AuditEvent(group_id=self.group_id, action=action,
                                           entity_id=entity_id, detail=json.dumps(detail))])

    # ------------------------------------------------------------------ merge
    def merge(self, target_id: str, source_ids: list[str], actor: str = "system",
              confidence: float | None = None) -> MergeRecord:
        sources = list(dict.fromkeys(s for s in source_ids if s != target_id))
        if not sources:
            raise MergeError("nothing to merge: give at least one entity other than the target")
        target, *rest = self._entities([target_id, *sources])
        by_id = {e.id: e for e in rest}
        srcs = [by_id[s] for s in sources]
        facts = self._facts_touching(sources)
        facts += self._parallels(target_id, sources, facts)
        graph = self.rt.graph
        episodes = {e.id: graph.entity_episode_ids(self.group_id, e.id) for e in [target, *srcs]}
        sql_mentions = {s.id: self.sql.mention_ids(self.group_id, s.id) for s in srcs}
        members = self._memberships(sources)  # HAS_MEMBER edges go with the deleted sources
        now = utcnow()
        merged = _combine(target, srcs, now, confidence)
        snapshot: dict[str, list[dict[str, object]]] = {
            "entities": [e.model_dump(mode="json") for e in [target, *srcs]],
            "facts": [f.model_dump(mode="json") for f in facts],
            "episodes": [{"entity_id": k, "ids": v} for k, v in episodes.items()],
            "sql_mentions": [{"entity_id": k, "ids": v} for k, v in sql_mentions.items()],
            "merged": [merged.model_dump(mode="json")],
            "communities": [{"entity_id": k, "ids": v} for k, v in members.items()],
            # parallel facts the merge folds into one (unmerge takes the evidence back out)
            "collapsed": [{"id": k, "ids": v} for k, v in collapse(
                _repointed(facts, target_id, set(sources))[0])[1].items()],
        }
        # the id's time to the microsecond: the same pair may be merged again within a second
        # (a twin re-created by a document's new version and consolidated again)
        taken = datetime.now(UTC).isoformat()
        record = MergeRecord(id=stable_id(self.group_id, "merge", target_id, *sources, taken),
                             group_id=self.group_id, target_id=target_id, source_ids=sources,
                             snapshot=snapshot, actor=actor, created_at=now)
        self.sql.add_merge(record)  # lineage first: a crash later is finished by resume()
        mention_ids = [m for ids in sql_mentions.values() for m in ids]
        self._apply(record, merged, facts, episodes, mention_ids)
        return record

    def finished(self, record: MergeRecord) -> bool:
        """Whether the merge got to its last write (its ``entity.merge`` audit row)."""
        return self.sql.has_audit(self.group_id, record.target_id, "entity.merge", record.id)

    def resume(self, record: MergeRecord) -> bool:
        """Finish a merge that a crash interrupted after its lineage row was written.

        Every step is redone against the current state, idempotently: the target is
        combined with the sources only if it does not carry them in ``merged_from`` yet (as
        recorded when unchanged since the snapshot, else combined anew, so later writes to it
        are kept); facts, MENTIONS, mention rows and blocking keys of the sources — the
        snapshot's and any added since — are re-pointed; the sources are deleted. Returns
        False (nothing done) when the merge was finished or undone.
        """
        if record.undone_at is not None or self.finished(record):
            return False
        graph, group = self.rt.graph, self.group_id
        snap = record.snapshot
        before = [Entity.model_validate(e) for e in snap["entities"]]
        recorded = Entity.model_validate(snap["merged"][0])
        found = {e.id: e for e in graph.get_entities(group, [record.target_id, *record.source_ids])}
        target = found.get(record.target_id)
        if target is None:
            raise NotFoundError(f"the target {record.target_id!r} of merge {record.id!r} is gone")
        present = [s for s in record.source_ids if s in found]
        merged: Entity | None = None
        if not set(record.source_ids) <= set(target.merged_from):  # not combined yet
            merged = recorded if target.updated_at == before[0].updated_at else _combine(
                target, [found.get(s.id, s) for s in before[1:]], utcnow(),
                recorded.resolution_confidence)
        facts = {f.id: f for f in self._facts_touching(present)} if present else {}
        snapshot_facts = [str(f["id"]) for f in snap["facts"]]
        for fact in graph.get_facts(group, snapshot_facts):  # those not deleted meanwhile
            facts.setdefault(fact.id, fact)
        for fact in self._parallels(record.target_id, record.source_ids, list(facts.values())):
            facts.setdefault(fact.id, fact)
        episodes = {str(x["entity_id"]): [str(e) for e in x["ids"]]  # type: ignore[attr-defined]
                    for x in snap["episodes"]}
        for source in present:
            episodes[source] = sorted({*episodes.get(source, []),
                                       *graph.entity_episode_ids(group, source)})
        mention_ids = {str(m) for x in snap["sql_mentions"] for m in x["ids"]}  # type: ignore[attr-defined]
        for source in record.source_ids:
            mention_ids.update(self.sql.mention_ids(group, source))
        self._apply(record, merged, sorted(facts.values(), key=lambda f: f.id), episodes,
                    sorted(mention_ids))
        return True

    def _apply(self, record: MergeRecord, merged: Entity | None, facts: list[Fact],
               episodes: dict[str, list[str]], mention_ids: list[str]) -> None:
        """The writes of a merge after its lineage row; each one idempotent. ``merged``:
        the combined target to write (``None``: written already)."""
        graph, group = self.rt.graph, self.group_id
        target_id, sources = record.target_id, list(record.source_ids)
        moved, loops = _repointed(facts, target_id, set(sources))
        kept, absorbed = collapse(moved)  # no two facts for one relation between two entities
        folded = [i for ids in absorbed.values() for i in ids]
        if merged is not None:
            graph.upsert_entities([merged])
        graph.upsert_facts(kept)
        gone = [f.id for f in loops] + folded  # a fact between two merged ones is a loop
        graph.delete_facts(group, gone)
        if gone:
            self.rt.vectors.delete(Collection.FACTS, gone)
        graph.upsert_mentions(group, [(ep, target_id) for s in sources for ep in episodes.get(s, [])])
        graph.delete_entities(group, sources)
        self.sql.repoint_mentions(group, mention_ids, target_id)
        self.sql.delete_keys(group, sources)
        final = merged or self._entities([target_id])[0]
        self.sql.replace_keys(group, {target_id: entity_block_keys(final, self._config())})
        self.rt.vectors.delete(Collection.ENTITIES, sources)
        self._embed([final])
        names = [str(e["name"]) for e in record.snapshot["entities"][1:]]
        self._audit("entity.merge", target_id, {"merge_id": record.id, "sources": sources,
                                                "names": names, "actor": record.actor})

    # ------------------------------------------------------------------ unmerge
    def unmerge(self, merge_id: str, actor: str = "system") -> MergeRecord:
        record = self.sql.get_merge(self.group_id, merge_id)
        if record is None:
            raise NotFoundError(f"no merge {merge_id!r} in group {self.group_id!r}")
        if record.undone_at is not None:
            raise MergeError(f"merge {merge_id!r} was already undone")
        snap = record.snapshot
        before = [Entity.model_validate(e) for e in snap["entities"]]
        merged_then = Entity.model_validate(snap["merged"][0])
        graph = self.rt.graph
        current = {e.id: e for e in graph.get_entities(self.group_id, [record.target_id])}
        target = before[0]
        now_target = current.get(record.target_id)
        if now_target is not None and now_target.updated_at != merged_then.updated_at:
            # changed since the merge: keep what was added later (aliases, evidence)
            later = [a for a in now_target.aliases if a not in merged_then.aliases]
            target = target.model_copy(update={
                "aliases": [*target.aliases, *later],
                "evidence_count": target.evidence_count
                + max(0, now_target.evidence_count - merged_then.evidence_count),
                "updated_at": now_target.updated_at})
        restored = [target, *before[1:]]
        graph.upsert_entities(restored)
        facts = [Fact.model_validate(f) for f in snap["facts"]]
        now_facts = {f.id: f for f in graph.get_facts(self.group_id, [f.id for f in facts])}
        folded = {str(x["id"]): [str(i) for i in x["ids"]]  # type: ignore[attr-defined]
                  for x in snap.get("collapsed", [])}
        then = {f.id: f for f in facts}
        graph.upsert_facts([
            unabsorbed(f, now_facts.get(f.id), [e for i in folded[f.id] if i in then
                                                for e in then[i].episodes])
            if f.id in folded else
            now_facts[f.id].model_copy(update={"source_id": f.source_id, "target_id": f.target_id})
            if f.id in now_facts else f for f in facts])
        # the absorbed facts and the loops: their vectors went with them at the merge
        back = [f for f in facts if f.id not in now_facts and not f.derived]
        if back:
            vectors = self.rt.embedder.embed([f.fact for f in back])
            self.rt.vectors.upsert(Collection.FACTS, [
                fact_point(f, v) for f, v in zip(back, vectors, strict=True)])
        episodes = {str(x["entity_id"]): list(x["ids"]) for x in snap["episodes"]}  # type: ignore[call-overload]
        target_eps = set(episodes.get(record.target_id, []))
        for source in record.source_ids:
            graph.upsert_mentions(self.group_id, [(ep, source) for ep in episodes.get(source, [])])
        extra = sorted({ep for s in record.source_ids for ep in episodes.get(s, [])} - target_eps)
        graph.delete_mentions(self.group_id, [(ep, record.target_id) for ep in extra])
        memberships = [(str(c), str(item["entity_id"])) for item in snap.get("communities", [])
                       for c in item["ids"]]  # type: ignore[attr-defined]
        alive = {c for c in {c for c, _ in memberships}  # a rebuild may have replaced them
                 if graph.get_community(self.group_id, c) is not None}
        graph.add_community_members(self.group_id, [p for p in memberships if p[0] in alive])
        for item in snap["sql_mentions"]:
            self.sql.repoint_mentions(self.group_id, list(item["ids"]),  # type: ignore[call-overload]
                                      str(item["entity_id"]))
        self.sql.replace_keys(self.group_id, {e.id: entity_block_keys(e, self._config())
                                             for e in restored})
        self._embed(restored)
        self.sql.mark_undone(self.group_id, merge_id)
        self._audit("entity.unmerge", record.target_id, {"merge_id": merge_id, "actor": actor,
                                                         "restored": record.source_ids})
        for source in record.source_ids:
            self._audit("entity.unmerge", source, {"merge_id": merge_id, "actor": actor})
        return record


def _repointed(facts: list[Fact], target_id: str, gone: set[str]) -> tuple[list[Fact], list[Fact]]:
    """The facts with the sources replaced by the target: (moved, loops joining it to itself)."""
    moved: list[Fact] = []
    loops: list[Fact] = []
    for fact in facts:
        src = target_id if fact.source_id in gone else fact.source_id
        tgt = target_id if fact.target_id in gone else fact.target_id
        (loops if src == tgt else moved).append(
            fact.model_copy(update={"source_id": src, "target_id": tgt}))
    return moved, loops


def _combine(target: Entity, sources: list[Entity], now: object, confidence: float | None) -> Entity:
    aliases = list(target.aliases)
    keys = list(target.name_keys)
    props = {k: list(v) for k, v in target.properties.items()}
    merged_from = list(target.merged_from)
    for src in sources:
        for name in (src.name, *src.aliases):
            if name not in aliases and normalize_name(name) != target.canonical_name:
                aliases.append(name)
        keys += [k for k in src.name_keys if k not in keys]
        for key, values in src.properties.items():
            have = props.setdefault(key, [])
            have += [v for v in values if v not in have]
        merged_from += [src.id, *src.merged_from]
    return target.model_copy(update={
        "aliases": aliases, "name_keys": keys, "properties": props,
        "evidence_count": target.evidence_count + sum(s.evidence_count for s in sources),
        "confidence": max([target.confidence, *(s.confidence for s in sources)]),
        "merged_from": list(dict.fromkeys(merged_from)), "canonical_entity_id": target.id,
        "resolution_confidence": confidence if confidence is not None else target.resolution_confidence,
        "updated_at": now})
