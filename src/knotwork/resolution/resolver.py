"""The resolver (design doc 003, "Entity Resolution Algorithm"): blocking keys → candidates
(capped per key and in total) → cheap prefilter → full scoring → decision.

Decisions: ``auto_merge`` (best ≥ auto threshold, no close runner-up), ``merge`` (best ≥ match
threshold, no close runner-up), ``merge_flagged`` (best ≥ match threshold and the runner-up ≥
the ambiguity threshold: merged, and queued for review), ``new`` (below the match threshold;
also when the two best are tied, flagged, since picking one would be a coin toss).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from rapidfuzz import process
from rapidfuzz.distance import JaroWinkler

from knotwork.resolution.blocking import (
    DEFAULT_RULES,
    BlockingRule,
    InMemoryBlockingIndex,
    blocking_keys,
)
from knotwork.resolution.cannot_link import CannotLink
from knotwork.resolution.normalize import normalize_name
from knotwork.resolution.scoring import (
    CandidateRecord,
    MentionQuery,
    ResolutionConfig,
    ScoredCandidate,
    rank,
)


class DecisionKind(StrEnum):
    AUTO_MERGE = "auto_merge"
    MERGE = "merge"
    MERGE_FLAGGED = "merge_flagged"
    NEW = "new"


@dataclass(slots=True)
class Decision:
    kind: DecisionKind
    entity_id: str | None
    confidence: float
    scored: list[ScoredCandidate] = field(default_factory=list)
    candidates_read: int = 0  # postings read from the blocking index
    candidates_scored: int = 0
    flagged: bool = False
    reason: str = ""

    @property
    def best(self) -> ScoredCandidate | None:
        return self.scored[0] if self.scored else None


class CandidateSource(Protocol):
    def lookup(self, keys: Sequence[str], per_key: int, total: int) -> tuple[list[CandidateRecord], int]:
        """Records filed under any key, in key order, at most ``per_key`` per key and ``total``
        overall; and how many postings were read."""
        ...


class MemoryCandidates:
    """An in-memory candidate source: records + :class:`InMemoryBlockingIndex`."""

    def __init__(self, rules: Sequence[BlockingRule] = DEFAULT_RULES) -> None:
        self.rules = tuple(rules)
        self.records: list[CandidateRecord] = []
        self._index = InMemoryBlockingIndex()
        self._slot: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._slot)

    def add(self, record: CandidateRecord) -> None:
        record.normalized = tuple(normalize_name(n) for n in record.names)
        keys = blocking_keys(record.names, record.type, self.rules, record.embedding,
                             self._identifiers(record.properties), record.properties)
        slot = self._slot.get(record.id)
        if slot is not None:  # keys are recomputed rather than kept: a third of the memory
            old = self.records[slot]
            self._index.remove(slot, blocking_keys(old.names, old.type, self.rules, old.embedding,
                                                   self._identifiers(old.properties),
                                                   old.properties))
            self.records[slot] = record
        else:
            slot = len(self.records)
            self.records.append(record)
            self._slot[record.id] = slot
        self._index.add(slot, keys)

    def _identifiers(self, properties: dict[str, str]) -> dict[str, str]:
        wanted = ResolutionConfig().identifier_properties
        return {k: v for k, v in properties.items() if k in wanted}

    def get(self, entity_id: str) -> CandidateRecord | None:
        slot = self._slot.get(entity_id)
        return self.records[slot] if slot is not None else None

    def lookup(self, keys: Sequence[str], per_key: int, total: int) -> tuple[list[CandidateRecord], int]:
        self._index.per_key, self._index.total = per_key, total
        slots, read = self._index.lookup(keys)
        return [self.records[s] for s in slots], read


def _prefilter(query: MentionQuery, records: list[CandidateRecord], keep: int) -> list[CandidateRecord]:
    """The first records (filed under the most selective keys) plus the best by a cheap
    Jaro-Winkler over all their names (rapidfuzz, in C)."""
    if len(records) <= keep:
        return records
    head = records[: keep // 2]
    names: list[str] = []
    owner: list[int] = []
    for i, rec in enumerate(records):
        for n in rec.normalized or tuple(normalize_name(x) for x in rec.names):
            names.append(n)
            owner.append(i)
    q = normalize_name(query.text)
    best: dict[int, float] = {}
    for _, score, pos in process.extract(q, names, scorer=JaroWinkler.similarity, limit=keep * 2):
        i = owner[pos]
        if score > best.get(i, -1.0):
            best[i] = score
    tail = [records[i] for i, _ in sorted(best.items(), key=lambda kv: -kv[1])]
    out: dict[str, CandidateRecord] = {r.id: r for r in head}
    for rec in tail:
        if len(out) >= keep:
            break
        out.setdefault(rec.id, rec)
    return list(out.values())


class Resolver:
    def __init__(self, config: ResolutionConfig | None = None,
                 rules: Sequence[BlockingRule] = DEFAULT_RULES) -> None:
        self.config = config or ResolutionConfig()
        self.rules = (*rules, *(r for r in self.config.blocking_rules if r not in rules))
        self.cannot_link = CannotLink()  # names a reviewer split off an entity

    def keys(self, query: MentionQuery) -> list[str]:
        ids = {k: v for k, v in query.properties.items() if k in self.config.identifier_properties}
        return blocking_keys(query.names, query.type, self.rules, query.embedding, ids,
                             query.properties)

    def candidates(self, query: MentionQuery, sources: Iterable[CandidateSource]
                   ) -> tuple[list[CandidateRecord], int]:
        cfg = self.config
        keys = self.keys(query)
        found: dict[str, CandidateRecord] = {}
        read = 0
        for source in sources:
            records, n = source.lookup(keys, cfg.max_candidates_per_key, cfg.max_candidates)
            read += n
            for rec in records:
                found.setdefault(rec.id, rec)
        records = list(found.values())[: cfg.max_candidates]
        if query.type is not None and query.type_confidence > cfg.type_filter_confidence:
            records = [r for r in records if r.type is query.type]
        return records, read

    def resolve(self, query: MentionQuery, sources: Iterable[CandidateSource],
                extra: Sequence[CandidateRecord] = ()) -> Decision:
        records, read = self.candidates(query, sources)
        if extra:
            ids = {e.id for e in extra}
            records = [*extra, *(r for r in records if r.id not in ids)]
        if self.cannot_link:
            records = [r for r in records if self.cannot_link.allows(r.id, query.names)]
        shortlist = _prefilter(query, records, self.config.max_scored)
        scored = rank(self.config, query, shortlist)
        return self.decide(scored, read, len(shortlist))

    def decide(self, scored: list[ScoredCandidate], read: int = 0, compared: int = 0) -> Decision:
        cfg = self.config
        if not scored or scored[0].score < cfg.match_threshold:
            top = scored[0].score if scored else 0.0
            return Decision(DecisionKind.NEW, None, round(1.0 - top, 4) if scored else 1.0,
                            scored[:5], read, compared, reason="below match threshold")
        best = scored[0]
        runner = scored[1].score if len(scored) > 1 else 0.0
        if runner >= cfg.ambiguity_threshold and best.score - runner < cfg.tie_margin:
            tied = [s for s in scored if best.score - s.score < cfg.tie_margin]
            exact = [s for s in tied if s.exact]
            if len(exact) == 1:  # an exact name or alias wins a tie with "X team" / "X Ltd"
                return Decision(DecisionKind.MERGE_FLAGGED, exact[0].entity_id, exact[0].score,
                                [exact[0], *(s for s in scored[:5] if s is not exact[0])],
                                read, compared, flagged=True, reason="exact name among tied")
            return Decision(DecisionKind.NEW, None, round(best.score, 4), scored[:5], read,
                            compared, flagged=True, reason="tied candidates")
        if runner >= cfg.ambiguity_threshold:
            return Decision(DecisionKind.MERGE_FLAGGED, best.entity_id, best.score, scored[:5],
                            read, compared, flagged=True, reason="close runner-up")
        kind = DecisionKind.AUTO_MERGE if best.score >= cfg.auto_threshold else DecisionKind.MERGE
        return Decision(kind, best.entity_id, best.score, scored[:5], read, compared)
