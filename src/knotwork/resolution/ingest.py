"""The resolver inside ingestion: one :class:`BatchResolution` per batch of chunks.

Candidates come from the exact-name lookup (``name_keys`` in the graph) plus the stored
blocking keys (:class:`ResolutionIndex`, SQL table ``entity_block_keys``).

Scoring is name + embedding + type (design doc 003). The embedding cosine compares the
mention in its chunk ("<name> (<kind>). <the first sentences mentioning it>", the shape of
``entity_text``, as many sentences as it reads of the summary) with the candidate's stored
entity vector (the one written for the vector store, read back in one call per batch).
Mentions are embedded in one call per batch, and only those with a stored candidate to compare
(one with a summary: a bare name vector says nothing the name comparison does not) and no
exact-name candidate: an exact normalised name is the entity's key (its id is derived from
it), so the name decides those. Every decision becomes an audit row, flagged ones a review item.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from knotwork.domain.ids import stable_id
from knotwork.domain.models import AuditEvent, Entity
from knotwork.domain.timeutil import utcnow
from knotwork.ingestion.embedding_text import ENTITY_TEXT_SENTENCES
from knotwork.resolution.blocking import DEFAULT_RULES, blocking_keys
from knotwork.resolution.cannot_link import load_cannot_link
from knotwork.resolution.given_context import is_lone_given_name, pick_person
from knotwork.resolution.models import ReviewCandidate, ReviewItem
from knotwork.resolution.normalize import normalize_name
from knotwork.resolution.resolver import Decision, DecisionKind, MemoryCandidates, Resolver
from knotwork.resolution.scoring import CandidateRecord, MentionQuery, ResolutionConfig

if TYPE_CHECKING:
    from knotwork.domain.models import Episode
    from knotwork.ingestion.extraction.types import ChunkExtraction, LocalEntity


class ResolutionIndex(Protocol):
    @property
    def config(self) -> ResolutionConfig: ...

    def lookup(self, keys: Sequence[str]) -> list[Entity]:
        """Stored entities filed under the blocking keys (capped per key and in total)."""
        ...

    def lookup_many(self, key_lists: Sequence[Sequence[str]]) -> list[Entity]:
        """:meth:`lookup` for several mentions at once (the caps apply per mention)."""
        ...

    def record(self, entities: Iterable[Entity], resolution: BatchResolution) -> None:
        """Store the entities' blocking keys, the review items and the audit rows."""
        ...


@runtime_checkable
class EmbeddingSource(Protocol):
    """Optional part of a :class:`ResolutionIndex`: the embedding component at ingestion."""

    def entity_vectors(self, entity_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored entity vectors (unit length) by id; ids without one are left out."""
        ...

    def embed_texts(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Unit vectors of the texts, in one model call."""
        ...


_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")
_CONTEXT_CHARS = 600


def mention_text(ent: LocalEntity, content: str) -> str:
    """What a mention's vector encodes: like ``entity_text`` (name, kind, then the sentences
    about it), with the chunk's sentences that mention it standing in for the summary."""
    kind = ent.subtype.lower() if ent.subtype else ent.type.value.lower()
    spans = [(m.start, m.end) for m in ent.mentions]
    picked: list[str] = []
    for sentence in _SENTENCE.finditer(content):
        if any(sentence.start() < end and start < sentence.end() for start, end in spans):
            text = " ".join(sentence.group().split())
            if text and text not in picked:
                picked.append(text)
    context = " ".join(picked[:ENTITY_TEXT_SENTENCES])[:_CONTEXT_CHARS]  # as many as entity_text
    return f"{ent.name} ({kind}). {context}".strip()


def _unit(vector: Sequence[float] | np.ndarray) -> np.ndarray:
    vec = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm else vec


def record_of(entity: Entity) -> CandidateRecord:
    return CandidateRecord(id=entity.id, name=entity.name, type=entity.type,
                           aliases=tuple(entity.aliases), summary=entity.summary,
                           evidence_count=entity.evidence_count,
                           properties={k: v[0].value for k, v in entity.properties.items() if v})


def entity_block_keys(entity: Entity, config: ResolutionConfig | None = None) -> list[str]:
    """The stored blocking keys: names, identifiers and (with attribute blocking rules in
    ``config``) the entity's property values."""
    cfg = config or ResolutionConfig()
    values = {k: v[0].value for k, v in entity.properties.items() if v}
    ids = {k: v for k, v in values.items() if k in cfg.identifier_properties}
    return blocking_keys([entity.name, *entity.aliases], entity.type,
                         (*DEFAULT_RULES, *cfg.blocking_rules), identifiers=ids,
                         attributes=values if cfg.blocking_rules else None)


def review_candidates(decision: Decision) -> list[ReviewCandidate]:
    return [ReviewCandidate(entity_id=s.entity_id, name=s.name, type=s.type.value, score=s.score,
                            name_score=s.name_score, embedding_score=s.embedding_score,
                            type_score=s.type_score, name_level=s.name_level)
            for s in decision.scored[:3]]


@dataclass
class BatchResolution:
    reviews: list[ReviewItem] = field(default_factory=list)
    audits: list[AuditEvent] = field(default_factory=list)
    decisions: int = 0
    _group: str = ""
    _resolver: Resolver = field(default_factory=Resolver)
    _store: MemoryCandidates = field(default_factory=MemoryCandidates)
    _known: dict[str, Entity] = field(default_factory=dict)
    _pending: dict[tuple[int, str], Decision] = field(default_factory=dict)
    _vectors: dict[str, np.ndarray] = field(default_factory=dict)  # stored entity vectors
    _mention_vectors: dict[tuple[int, str], np.ndarray] = field(default_factory=dict)
    # normalised full names of the people each document of the batch mentions, by episode
    _context: dict[str, set[str]] = field(default_factory=dict)
    embedded_mentions: int = 0

    def start(self, group_id: str, config: ResolutionConfig, index: ResolutionIndex | None) -> None:
        self._group = group_id
        self._resolver = Resolver(config)
        self._index = index
        if isinstance(index, StoredResolutionIndex):
            self._resolver.cannot_link = load_cannot_link(index.runtime, group_id)

    def block(self, items: Sequence[tuple[Episode, ChunkExtraction]],
              exact: Sequence[Entity]) -> list[Entity]:
        """Candidates of the whole batch: the exact-name ones plus the blocked ones."""
        found = list(exact)
        self._note_context(items)
        if self._index is not None:
            key_lists = [self._resolver.keys(MentionQuery(ent.name, ent.type,
                                                          aliases=tuple(ent.aliases)))
                         for _, ex in items for ent in ex.entities]
            seen = {e.id for e in found}
            found += [e for e in self._index.lookup_many(key_lists) if e.id not in seen]
        source = self._index if isinstance(self._index, EmbeddingSource) else None
        if source is not None and found:
            self._vectors = source.entity_vectors([e.id for e in found])
        for entity in found:
            self._known[entity.id] = entity
            self._store.add(self._record(entity))
        if source is not None and self._vectors:
            self._embed_mentions(source, items, {e.id for e in exact})
        return found

    def _note_context(self, items: Sequence[tuple[Episode, ChunkExtraction]]) -> None:
        by_document: dict[str, set[str]] = {}
        for episode, ex in items:
            names = by_document.setdefault(episode.document_id or episode.id, set())
            names.update(k for ent in ex.entities if ent.type.value == "PERSON"
                         for k in (ent.key, *(normalize_name(a) for a in ent.aliases)) if " " in k)
        for episode, _ in items:
            self._context[episode.id] = by_document[episode.document_id or episode.id]

    def _given_name(self, ent: LocalEntity, episode_id: str, batch: dict[str, Entity],
                    decision: Decision) -> Decision:
        """A lone given name the resolver left new, or gave to a given-name-only entity,
        goes to the one full-name person the document's context points at (see
        :mod:`knotwork.resolution.given_context`)."""
        if not is_lone_given_name(ent.key, ent.type):
            return decision
        if decision.entity_id is not None:
            chosen = batch.get(decision.entity_id) or self._known.get(decision.entity_id)
            if chosen is None or " " in chosen.canonical_name:
                return decision
        people = {**self._known, **batch}.values()
        pick = pick_person(ent.key, people, self._context.get(episode_id, set()))
        if pick is None or not self._resolver.cannot_link.allows(pick.entity.id, [ent.name]):
            return decision
        return Decision(DecisionKind.MERGE, pick.entity.id, pick.confidence, decision.scored,
                        decision.candidates_read, decision.candidates_scored, reason=pick.reason)

    def _record(self, entity: Entity) -> CandidateRecord:
        """The stored vector is compared only when it encodes a context (a summary): a bare
        "<name> (<kind>)." embeds no more than the spelling the name comparison scores."""
        record = record_of(entity)
        if entity.summary.strip():
            record.embedding = self._vectors.get(entity.id)
        return record

    def _embed_mentions(self, source: EmbeddingSource,
                        items: Sequence[tuple[Episode, ChunkExtraction]], exact: set[str]) -> None:
        """One model call for the batch's mentions that have a stored candidate with a vector
        and no exact-name candidate (the name decides those)."""
        wanted: list[tuple[tuple[int, str], str]] = []
        for episode, ex in items:
            for ent in ex.entities:
                records, _ = self._resolver.candidates(
                    MentionQuery(ent.name, ent.type, type_confidence=ent.confidence,
                                 aliases=tuple(sorted(ent.aliases))), [self._store])
                if any(r.id in exact and ent.key in self._known[r.id].name_keys for r in records):
                    continue
                if any(r.embedding is not None for r in records):
                    wanted.append(((id(ent), episode.id), mention_text(ent, episode.content)))
        if not wanted:
            return
        vectors = source.embed_texts([text for _, text in wanted])
        self.embedded_mentions += len(wanted)
        for (key, _), vec in zip(wanted, vectors, strict=True):
            self._mention_vectors[key] = vec

    def decide(self, ent: LocalEntity, episode_id: str, batch: dict[str, Entity]) -> Entity | None:
        query = MentionQuery(ent.name, ent.type, type_confidence=ent.confidence,
                             aliases=tuple(sorted(ent.aliases)),
                             embedding=self._mention_vectors.get((id(ent), episode_id)))
        decision = self._given_name(ent, episode_id, batch,
                                    self._resolver.resolve(query, [self._store]))
        self._pending[(id(ent), episode_id)] = decision
        if decision.entity_id is None:
            return None
        return batch.get(decision.entity_id) or self._known.get(decision.entity_id)

    def attached(self, ent: LocalEntity, entity: Entity, episode_id: str,
                 aliases_before: set[str] | None) -> None:
        self._known[entity.id] = entity
        self._store.add(self._record(entity))
        decision = self._pending.pop((id(ent), episode_id), None)
        if decision is None:
            return  # same name already decided in this batch
        self.decisions += 1
        best = decision.best
        detail = {"mention": ent.name, "type": ent.type.value, "decision": decision.kind.value,
                  "score": decision.confidence, "episode_id": episode_id,
                  "candidates": [[s.entity_id, s.name, s.score] for s in decision.scored[:3]]}
        self.audits.append(AuditEvent(group_id=self._group, action=f"resolution.{decision.kind.value}",
                                      entity_id=entity.id, detail=json.dumps(detail)))
        if not decision.flagged:
            return
        added = ent.name if aliases_before is not None and ent.name not in aliases_before \
            and ent.name != entity.name else None
        self.reviews.append(ReviewItem(
            id=stable_id(self._group, "review", episode_id, ent.key), group_id=self._group,
            mention=ent.name, entity_type=ent.type.value,
            entity_id=entity.id, decision=decision.kind.value,
            score=best.score if best else 0.0, candidates=review_candidates(decision),
            episode_ids=[episode_id], alias_added=added, created_at=utcnow()))


class StoredResolutionIndex:
    """Blocking keys in SQL (``entity_block_keys``), entities from the graph."""

    def __init__(self, rt: object, group_id: str) -> None:
        from knotwork.resolution.service import resolution_config, resolution_sql
        from knotwork.runtime import Runtime

        assert isinstance(rt, Runtime)
        self._rt = rt
        self._group = group_id
        self._config = resolution_config(rt.settings)
        self._sql = resolution_sql(rt)

    @property
    def runtime(self) -> object:
        return self._rt

    @property
    def config(self) -> ResolutionConfig:
        return self._config

    def lookup(self, keys: Sequence[str]) -> list[Entity]:
        return self.lookup_many([keys])

    def lookup_many(self, key_lists: Sequence[Sequence[str]]) -> list[Entity]:
        if self._sql is None or not key_lists:
            return []
        cfg = self._config
        found = self._sql.lookup_keys(self._group, [k for ks in key_lists for k in ks],
                                      cfg.max_candidates_per_key)
        ids: dict[str, None] = {}
        for keys in key_lists:
            mine: dict[str, None] = {}
            for key in keys:
                for entity_id in sorted(found.get(key[:255], [])):
                    mine.setdefault(entity_id, None)
            ids.update(dict.fromkeys(list(mine)[: cfg.max_candidates]))
        return self._rt.graph.get_entities(self._group, list(ids)) if ids else []

    def entity_vectors(self, entity_ids: Sequence[str]) -> dict[str, np.ndarray]:
        vectors_of = getattr(self._rt.vectors, "vectors_of", None)  # both Qdrant backends
        if vectors_of is None or not entity_ids:
            return {}
        from knotwork.domain.ports import Collection

        found: dict[str, list[float]] = vectors_of(Collection.ENTITIES, self._group,
                                                   list(entity_ids))
        return {k: _unit(v) for k, v in found.items()}

    def embed_texts(self, texts: Sequence[str]) -> list[np.ndarray]:
        return [_unit(v) for v in self._rt.embedder.embed(list(texts))] if texts else []

    def record(self, entities: Iterable[Entity], resolution: BatchResolution) -> None:
        if self._sql is None:
            return
        self._sql.replace_keys(self._group, {e.id: entity_block_keys(e, self._config)
                                             for e in entities})
        self._sql.add_reviews(resolution.reviews)
        self._sql.record_audits(resolution.audits)


def is_merge(kind: DecisionKind) -> bool:
    return kind is not DecisionKind.NEW
