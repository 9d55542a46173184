"""Turn chunk extractions into resolved entities, deduplicated facts and mentions.

Pure apart from two read callbacks, so it is unit-testable with in-memory data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from knotwork.domain.ids import stable_id
from knotwork.domain.models import Entity, EntityMention, EntityType, Episode, Fact, RelationType
from knotwork.ingestion.endings import ended_facts, ends_of, with_end
from knotwork.ingestion.extraction.change import relation_ended
from knotwork.ingestion.extraction.departure import end_events
from knotwork.ingestion.extraction.temporal import held_until_then, interim_end, validity
from knotwork.ingestion.extraction.types import ChunkExtraction, LocalEntity
from knotwork.ingestion.facts import contradictions, fact_id, merge_into, same_fact
from knotwork.ingestion.summary_text import resummarized
from knotwork.ingestion.team_lines import team_lines
from knotwork.resolution.exact import entity_keys, lookup_keys
from knotwork.resolution.ingest import BatchResolution, ResolutionIndex
from knotwork.resolution.normalize import normalize_name
from knotwork.resolution.scoring import ResolutionConfig

EntityLookup = Callable[[Sequence[str]], list[Entity]]
FactLookup = Callable[[Sequence[str]], list[Fact]]


@dataclass
class BatchResult:
    entities: dict[str, Entity] = field(default_factory=dict)
    facts: dict[str, Fact] = field(default_factory=dict)
    graph_mentions: list[tuple[str, str]] = field(default_factory=list)
    mentions: list[EntityMention] = field(default_factory=list)
    entities_per_episode: dict[str, set[str]] = field(default_factory=dict)
    # the stored versions this batch started from (to skip re-embedding what did not change)
    previous_entities: dict[str, Entity] = field(default_factory=dict)
    previous_facts: dict[str, Fact] = field(default_factory=dict)
    # resolution decisions of this batch (flagged ones go to the review queue)
    resolution: BatchResolution = field(default_factory=BatchResolution)


class BatchBuilder:
    """``index``: the stored blocking keys (candidate lookup beyond exact names); it also
    records the batch's keys, review items and audit rows once the batch is built."""

    def __init__(self, group_id: str, now: datetime, find_entities: EntityLookup,
                 facts_of: FactLookup, index: ResolutionIndex | None = None,
                 config: ResolutionConfig | None = None,
                 entities_of: EntityLookup | None = None) -> None:
        self._group = group_id
        self._entities_of = entities_of  # by id: the kinds of facts' endpoints (issue 4)
        self._now = now
        self._find = find_entities
        self._facts_of = facts_of
        self._index = index
        self._config = config or (index.config if index is not None else ResolutionConfig())

    def build(self, items: Sequence[tuple[Episode, ChunkExtraction]]) -> BatchResult:
        result = BatchResult()
        local_ids = self._resolve_all(items, result)
        self._end_events(items, local_ids, result)
        known = self._facts(items, local_ids, result)
        self._apply_ends(known, result)
        self._summaries(result, known)
        self._team_lines(known, result)
        if self._index is not None:
            self._index.record(result.entities.values(), result.resolution)
        return result

    # ------------------------------------------------------------------ entities
    def _resolve_all(self, items: Sequence[tuple[Episode, ChunkExtraction]],
                     result: BatchResult) -> list[list[str]]:
        wanted = {k for _, ex in items for ent in ex.entities for k in lookup_keys(ent.key, ent.type)}
        wanted |= {normalize_name(a) for _, ex in items for ent in ex.entities for a in ent.aliases}
        candidates = self._find(sorted(wanted)) if wanted else []
        resolution = result.resolution
        resolution.start(self._group, self._config, self._index)
        for entity in resolution.block(items, candidates):
            if entity.id not in {c.id for c in candidates}:
                candidates.append(entity)
        result.previous_entities.update((c.id, c) for c in candidates)
        by_key: dict[str, Entity] = {}
        local_ids: list[list[str]] = []
        for episode, ex in items:
            ids: list[str] = []
            seen_here: set[str] = set()
            for ent in ex.entities:
                entity = self._resolve_one(ent, by_key, result, episode)
                ids.append(entity.id)
                if entity.id not in seen_here:
                    seen_here.add(entity.id)
                    result.graph_mentions.append((episode.id, entity.id))
                for m in ent.mentions:
                    result.mentions.append(EntityMention(
                        id=stable_id(episode.id, "mention", str(m.start), str(m.end)),
                        group_id=self._group, chunk_id=episode.id, entity_id=entity.id,
                        span_start=m.start, span_end=m.end, text=m.text, extractor=m.extractor,
                        confidence=m.confidence))
            result.entities_per_episode[episode.id] = seen_here
            local_ids.append(ids)
        return local_ids

    def _resolve_one(self, ent: LocalEntity, by_key: dict[str, Entity],
                     result: BatchResult, episode: Episode) -> Entity:
        entity = by_key.get(ent.key)
        alias_before: set[str] | None = None
        if entity is None:
            entity = result.resolution.decide(ent, episode.id, result.entities)
            alias_before = set(entity.aliases) if entity is not None else None
        if entity is not None:
            entity = result.entities.get(entity.id, entity)
            aliases = list(entity.aliases)
            for name in {ent.name, *ent.aliases}:
                if normalize_name(name) != entity.canonical_name and name not in aliases:
                    aliases.append(name)
            keys = entity_keys(entity.canonical_name, [normalize_name(a) for a in aliases], entity.type)
            first_in_batch = entity.id not in result.entities
            entity = entity.model_copy(update={
                "aliases": aliases,
                "name_keys": list(dict.fromkeys([*entity.name_keys, *keys])),
                "evidence_count": entity.evidence_count + (1 if first_in_batch else 0),
                "confidence": max(entity.confidence, ent.confidence),
                "updated_at": self._now,
            })
        else:
            aliases = sorted(a for a in ent.aliases if normalize_name(a) != ent.key)
            entity = Entity(
                id=stable_id(self._group, "entity", ent.key), group_id=self._group,
                name=ent.name, canonical_name=ent.key, type=ent.type, subtype=ent.subtype,
                aliases=aliases,
                name_keys=entity_keys(ent.key, [normalize_name(a) for a in aliases], ent.type),
                confidence=ent.confidence, evidence_count=1,
                created_at=min(self._now, episode.valid_at),
                updated_at=self._now)
        result.entities[entity.id] = entity
        result.resolution.attached(ent, entity, episode.id, alias_before)
        for key in entity.name_keys:
            if not key.startswith("first:"):
                by_key.setdefault(key, entity)
        by_key[ent.key] = entity
        return entity

    # ------------------------------------------------------------------ facts
    def _facts(self, items: Sequence[tuple[Episode, ChunkExtraction]], local_ids: list[list[str]],
               result: BatchResult) -> _KnownFacts | None:
        """The facts of every endpoint this batch proposes a fact for, as they stand after it."""
        proposed: list[Fact] = []
        for (episode, ex), ids in zip(items, local_ids, strict=True):
            for rel in ex.relations:
                src, tgt = ids[rel.source], ids[rel.target]
                if src == tgt:
                    continue
                valid_at, invalid_at = validity(rel.fact, episode.valid_at)
                stand_in_end = None if invalid_at else interim_end(rel.fact, episode.valid_at)
                if stand_in_end is not None:  # "interim lead while Bo is out (back in June)"
                    invalid_at = stand_in_end
                    if valid_at is not None and valid_at >= stand_in_end:
                        valid_at = None  # the date was the return's, not the start's
                if relation_ended(episode.content, rel, ex.entities):
                    # "moves from the Fraud Team to …", "replacing Katarina": held until then
                    if valid_at is not None and invalid_at is None and held_until_then(rel.fact):
                        invalid_at = episode.valid_at  # "ran it from 2021 until then"
                    else:
                        valid_at, invalid_at = None, invalid_at or valid_at or episode.valid_at
                elif valid_at is None and invalid_at is not None and invalid_at <= episode.valid_at:
                    valid_at = None  # "worked there until 2023": the start is unknown
                else:
                    valid_at = valid_at or episode.valid_at
                proposed.append(Fact(
                    id=fact_id(self._group, src, tgt, rel.type, rel.fact), group_id=self._group,
                    source_id=src, target_id=tgt, type=rel.type, fact=rel.fact,
                    confidence=rel.confidence, episodes=[episode.id],
                    episode_confidences=[rel.confidence], episode_valid_at=[valid_at],
                    valid_at=valid_at, invalid_at=invalid_at,
                    created_at=self._now, extraction_method=rel.method))
        if not proposed:
            return None
        involved = sorted({f.source_id for f in proposed} | {f.target_id for f in proposed})
        known = _KnownFacts(self._facts_of(involved), involved)
        result.previous_facts.update(known.by_id)
        same_kind = self._kinds(known.by_id.values(), result)
        for new in sorted(proposed, key=lambda f: f.valid_at or self._now):
            match = known.same_as(new)
            merged = merge_into(match, new) if match is not None else new
            merged = self._superseded(merged, known, same_kind)
            known.put(merged)
            result.facts[merged.id] = merged
            if match is not None and merged.valid_at != match.valid_at:
                for ended in known.ended_by(merged):  # they ended when it began
                    known.put(ended)
                    result.facts[ended.id] = ended
            for ended in contradictions(merged, known.sharing_endpoint(merged), self._now,
                                        same_kind):
                known.put(ended)
                result.facts[ended.id] = ended
        self._recheck_ends(known, result, same_kind)
        return known

    def _end_events(self, items: Sequence[tuple[Episode, ChunkExtraction]],
                    local_ids: list[list[str]], result: BatchResult) -> None:
        """Departures and office closures the batch states, kept on their entities."""
        for (episode, ex), ids in zip(items, local_ids, strict=True):
            for event in end_events(episode.content, ex.entities, episode.valid_at, ex.speaker):
                entity = result.entities.get(ids[event.entity])
                if entity is not None:
                    result.entities[entity.id] = with_end(entity, event.kind, event.at,
                                                          event.stated, episode.id)

    def _apply_ends(self, known: _KnownFacts | None, result: BatchResult) -> None:
        """End the open facts of the batch's entities that left or closed (``endings``)."""
        ends = ends_of(result.entities.values())
        if not ends:
            return
        facts = dict(known.by_id) if known is not None else {}
        complete = known.endpoints() if known is not None else set()
        missing = sorted(set(ends) - complete)
        if missing:
            for fact in self._facts_of(missing):
                result.previous_facts.setdefault(fact.id, fact)
                facts.setdefault(fact.id, fact)
        facts.update(result.facts)
        pool = {**result.previous_entities, **result.entities}
        wanted = {f.source_id for f in facts.values() if f.target_id in ends} - set(pool)
        if wanted and self._entities_of is not None:
            pool.update((e.id, e) for e in self._entities_of(sorted(wanted)))

        def kind(entity_id: str) -> tuple[EntityType, str | None] | None:
            entity = pool.get(entity_id)
            return None if entity is None else (entity.type, entity.subtype)

        for fact in ended_facts(facts.values(), ends, kind, self._now):
            if known is not None:
                known.put(fact)
            result.facts[fact.id] = fact

    def _team_lines(self, known: _KnownFacts | None, result: BatchResult) -> None:
        """The ended reporting lines of the units whose leads or members this batch touched
        (``team_lines``), from all the facts of those units, of their parts and parents, and
        of their people."""
        units = {f.target_id for f in result.facts.values()
                 if f.type in (RelationType.LEADS, RelationType.MEMBER_OF)}
        if not units:
            return
        facts = dict(known.by_id) if known is not None else {}
        read = known.endpoints() if known is not None else set()
        facts.update((f.id, f) for f in self._facts_of(sorted(units - read)))
        facts.update(result.facts)
        nested = {i for f in facts.values() if f.type is RelationType.MEMBER_OF
                  and (f.source_id in units or f.target_id in units)
                  for i in (f.source_id, f.target_id)} - units - read
        for fact in self._facts_of(sorted(nested)):
            facts.setdefault(fact.id, fact)
        units |= nested
        people = {f.source_id for f in facts.values() if f.target_id in units} - read - units
        if people:  # their reporting lines (a stated one is kept as it is) and derived ones
            for fact in self._facts_of(sorted(people)):
                facts.setdefault(fact.id, fact)
        pool = {**result.previous_entities, **result.entities}
        wanted = {i for f in facts.values() if f.target_id in units
                  for i in (f.source_id, f.target_id)} - set(pool)
        if wanted and self._entities_of is not None:
            pool.update((e.id, e) for e in self._entities_of(sorted(wanted)))

        def kind(entity_id: str) -> tuple[EntityType, str | None] | None:
            entity = pool.get(entity_id)
            return None if entity is None else (entity.type, entity.subtype)

        for fact in team_lines(self._group, facts.values(), kind, self._now):
            stored = facts.get(fact.id)
            if stored is not None:
                if (stored.valid_at, stored.invalid_at, stored.episodes) == (
                        fact.valid_at, fact.invalid_at, fact.episodes):
                    continue
                fact = fact.model_copy(update={"created_at": stored.created_at})
                result.previous_facts.setdefault(stored.id, stored)
            result.facts[fact.id] = fact

    def _recheck_ends(self, known: _KnownFacts, result: BatchResult,
                      same_kind: Callable[[str, str], bool]) -> None:
        """An end a newer fact gave holds only while that fact, with the evidence it has now,
        still ends it (a page may now state both in one passage: no change, as in a fresh
        ingest); otherwise the fact holds again, unless another newer fact ends it."""
        for fact in list(result.facts.values()):
            if fact.invalidated_by is None:
                continue
            by = known.by_id.get(fact.invalidated_by)
            held = fact.model_copy(update={"invalid_at": None, "expired_at": None,
                                           "invalidated_by": None})
            if by is None or (by.episodes and contradictions(by, [held], self._now, same_kind)):
                continue  # (a retired one: the sweep gives the fact back its validity)
            held = self._superseded(held, known, same_kind)
            known.put(held)
            result.facts[held.id] = held

    def _superseded(self, fact: Fact, known: _KnownFacts,
                    same_kind: Callable[[str, str], bool]) -> Fact:
        """``fact`` ended by a stored newer one that supersedes it: a page stating an older
        fact, (re-)added after the newer one, ends as it would in a fresh ingest (where the
        older is processed first and the newer ends it)."""
        if fact.invalid_at is not None or fact.valid_at is None:
            return fact
        for other in known.sharing_endpoint(fact):
            if other.id == fact.id or other.invalid_at is not None or not other.episodes \
                    or other.valid_at is None or other.valid_at <= fact.valid_at:
                continue
            ended = contradictions(other, [fact], self._now, same_kind)
            if ended:
                return ended[0]
        return fact

    def _kinds(self, facts: Iterable[Fact], result: BatchResult) -> Callable[[str, str], bool]:
        """Same kind of holder: same entity type, and a team is not a company (issue 4)."""
        pool = {**result.previous_entities, **result.entities}
        wanted = {i for f in facts for i in (f.source_id, f.target_id)} - set(pool)
        if wanted and self._entities_of is not None:
            pool.update((e.id, e) for e in self._entities_of(sorted(wanted)))

        def kind(entity_id: str) -> tuple[str, bool] | None:
            entity = pool.get(entity_id)
            return None if entity is None else (entity.type.value, entity.subtype == "TEAM")

        return lambda a, b: kind(a) is not None and kind(a) == kind(b)

    # ------------------------------------------------------------------ summaries
    def _summaries(self, result: BatchResult, known: _KnownFacts | None) -> None:
        """Extractive summary of every entity whose facts changed: its most confident current
        fact sentences, recomputed from all its facts (issue 18: not appended batch by batch,
        so any batch order ends with the same summary). An endpoint the batch does not
        mention (the other end of a fact it ended) is updated too."""
        touched = {e for f in result.facts.values() for e in (f.source_id, f.target_id)}
        if not touched:
            return
        facts = dict(known.by_id) if known is not None else {}
        complete = known.endpoints() if known is not None else set()
        if touched - complete:
            facts.update((f.id, f) for f in self._facts_of(sorted(touched - complete)))
        facts.update(result.facts)
        by_entity: dict[str, list[Fact]] = {}
        for fact in facts.values():
            for endpoint in (fact.source_id, fact.target_id):
                if endpoint in touched:
                    by_entity.setdefault(endpoint, []).append(fact)
        absent = sorted(touched - result.entities.keys())
        if absent and self._entities_of is not None:
            for entity in self._entities_of(absent):
                result.previous_entities.setdefault(entity.id, entity)
                result.entities[entity.id] = entity
        for entity_id in sorted(touched):
            entity = result.entities.get(entity_id)
            if entity is None:
                continue
            summary = resummarized(entity.summary, by_entity.get(entity_id, []))
            if summary != entity.summary:
                result.entities[entity_id] = entity.model_copy(
                    update={"summary": summary, "updated_at": self._now})


class _KnownFacts:
    """The facts a batch is checked against, indexed by endpoint and type: a hub entity's
    thousands of facts are not scanned once per new fact."""

    def __init__(self, facts: Iterable[Fact], complete: Iterable[str] = ()) -> None:
        self._complete = frozenset(complete)
        self.by_id: dict[str, Fact] = {}
        self._by_end: dict[tuple[str, str], dict[str, None]] = {}
        for fact in facts:
            self.put(fact)

    def endpoints(self) -> set[str]:
        """The entities all of whose facts were read (the far ends of their facts are not)."""
        return set(self._complete)

    def put(self, fact: Fact) -> None:
        self.by_id[fact.id] = fact
        for endpoint in (fact.source_id, fact.target_id):
            self._by_end.setdefault((endpoint, fact.type.value), {})[fact.id] = None

    def sharing_endpoint(self, fact: Fact) -> list[Fact]:
        """Facts of the same type with the same source or the same target, in insertion order."""
        ids = dict.fromkeys([*self._by_end.get((fact.source_id, fact.type.value), {}),
                             *self._by_end.get((fact.target_id, fact.type.value), {})])
        return [self.by_id[i] for i in ids]

    def ended_by(self, fact: Fact) -> list[Fact]:
        """Facts ``fact`` ended, with their end moved to its (changed) start."""
        if fact.valid_at is None:
            return []
        return [f.model_copy(update={"invalid_at": fact.valid_at})
                for f in self.sharing_endpoint(fact)
                if f.invalidated_by == fact.id and f.invalid_at != fact.valid_at]

    def same_as(self, fact: Fact) -> Fact | None:
        found = self.by_id.get(fact.id)
        if found is not None and same_fact(found, fact):
            return found
        # (a line derived from a team's facts is no sighting of a stated one: kept apart)
        return next((f for f in self.sharing_endpoint(fact)
                     if same_fact(f, fact) and f.derived == fact.derived), None)
