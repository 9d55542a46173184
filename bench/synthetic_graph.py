"""A synthetic company graph written straight through the stores (no extraction).

People, teams, projects, services and cities with unique pronounceable names; typed facts
between them (reports to, member of, leads, maintains, depends on, uses, located in) rendered
as sentences; chunks that state a few facts each (documents of 50 chunks), MENTIONS edges,
SQL mentions, and vectors for entities, facts and chunk passages. Deterministic per seed.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from knotwork.domain.models import (
    Chunk,
    Document,
    Entity,
    EntityMention,
    EntityType,
    Episode,
    Fact,
    RelationType,
    SourceSystem,
)
from knotwork.domain.ports import Collection
from knotwork.ingestion.embedding_text import entity_point, entity_text, fact_point, passage_point
from knotwork.resolution.normalize import normalize_name
from knotwork.retrieval.evidence_text import evidence_texts, sentence_point
from knotwork.runtime import Runtime

_ONSETS = ["b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br",
           "st", "tr", "gr", "kl", "sh", "ch", "th"]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "ou"]
_CODAS = ["", "", "n", "r", "l", "s", "x", "th"]
_KINDS: list[tuple[str, EntityType, str | None, float]] = [  # (kind, type, subtype, share)
    ("person", EntityType.PERSON, None, 0.6), ("team", EntityType.ORGANIZATION, "team", 0.1),
    ("project", EntityType.PRODUCT, "project", 0.12), ("service", EntityType.PRODUCT, "service", 0.15),
    ("city", EntityType.LOCATION, None, 0.03)]
_RELATIONS: list[tuple[RelationType, str, str, str, float]] = [  # (type, source kind, target kind, verb, share)
    (RelationType.REPORTS_TO, "person", "person", "reports to", 0.2),
    (RelationType.MEMBER_OF, "person", "team", "is a member of", 0.2),
    (RelationType.LEADS, "person", "project", "leads", 0.12),
    (RelationType.LOCATED_IN, "person", "city", "is based in", 0.1),
    (RelationType.MAINTAINS, "team", "service", "maintains", 0.13),
    (RelationType.DEPENDS_ON, "service", "service", "depends on", 0.13),
    (RelationType.USES, "project", "service", "uses", 0.12),
]
QUESTION = {RelationType.REPORTS_TO: ("Who does {s} report to?", "t"),
            RelationType.MEMBER_OF: ("Which team is {s} a member of?", "t"),
            RelationType.LEADS: ("Who leads {t}?", "s"),
            RelationType.LOCATED_IN: ("Where is {s} based?", "t"),
            RelationType.MAINTAINS: ("Which team maintains {t}?", "s"),
            RelationType.DEPENDS_ON: ("What does {s} depend on?", "t"),
            RelationType.USES: ("What does {s} use?", "t")}


@dataclass
class SyntheticGraph:
    entities: list[Entity] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    chunks: int = 0

    def questions(self, n: int, seed: int) -> list[tuple[str, str]]:
        """(question, expected answer name) from facts whose answer is unique."""
        rng = random.Random(seed)
        names = {e.id: e.name for e in self.entities}
        picked: list[tuple[str, str]] = []
        seen: set[tuple[str, str]] = set()
        arity: dict[tuple[str, str], int] = {}
        for f in self.facts:
            ask_side = QUESTION[f.type][1]
            anchor = f.source_id if ask_side == "t" else f.target_id
            arity[(f.type.value, anchor)] = arity.get((f.type.value, anchor), 0) + 1
        pool = [f for f in self.facts
                if arity[(f.type.value, f.source_id if QUESTION[f.type][1] == "t" else f.target_id)] == 1]
        for f in rng.sample(pool, min(n, len(pool))):
            template, side = QUESTION[f.type]
            q = template.format(s=names[f.source_id], t=names[f.target_id])
            if (q, side) not in seen:
                seen.add((q, side))
                picked.append((q, names[f.target_id] if side == "t" else names[f.source_id]))
        return picked


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)
                   for _ in range(rng.choice((2, 2, 3)))).capitalize()


def _name(kind: str, rng: random.Random) -> str:
    if kind == "person":
        return f"{_word(rng)} {_word(rng)}"
    if kind == "team":
        return f"{_word(rng)} Team"
    if kind == "project":
        return f"Project {_word(rng)}"
    if kind == "service":
        return f"{_word(rng)} Service"
    return _word(rng)


def _id(*parts: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(parts)))


def _batches(items: Sequence[object], size: int) -> Iterator[Sequence[object]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def generate(group: str, n_entities: int, n_facts: int, seed: int = 7) -> tuple[SyntheticGraph, list[tuple[str, list[Fact]]]]:
    rng = random.Random(seed)
    now = datetime(2025, 6, 1, tzinfo=UTC)
    graph = SyntheticGraph()
    by_kind: dict[str, list[Entity]] = {}
    used: set[str] = set()
    for kind, etype, subtype, share in _KINDS:
        for _ in range(max(2, int(n_entities * share))):
            name = _name(kind, rng)
            while normalize_name(name) in used:
                name = _name(kind, rng)
            used.add(normalize_name(name))
            entity = Entity(id=_id(group, "e", name), group_id=group, name=name,
                            canonical_name=normalize_name(name), type=etype, subtype=subtype,
                            name_keys=[normalize_name(name)], created_at=now, updated_at=now)
            by_kind.setdefault(kind, []).append(entity)
            graph.entities.append(entity)
    keys: set[tuple[str, str, str]] = set()
    chunk_facts: list[tuple[str, list[Fact]]] = []
    pending: list[Fact] = []
    for rtype, skind, tkind, verb, share in _RELATIONS:
        count = int(n_facts * share)
        made = 0
        while made < count:
            s, t = rng.choice(by_kind[skind]), rng.choice(by_kind[tkind])
            if s.id == t.id or (s.id, rtype.value, t.id) in keys:
                continue
            keys.add((s.id, rtype.value, t.id))
            when = now - timedelta(days=rng.randint(0, 700))
            fid = _id(group, "f", s.id, rtype.value, t.id)
            chunk_id = _id(group, "c", str(len(chunk_facts)))
            fact = Fact(id=fid, group_id=group, source_id=s.id, target_id=t.id, type=rtype,
                        fact=f"{s.name} {verb} {t.name}.", confidence=round(rng.uniform(0.6, 1.0), 2),
                        episodes=[chunk_id], valid_at=when, created_at=when)
            graph.facts.append(fact)
            pending.append(fact)
            made += 1
            if len(pending) >= 3:
                chunk_facts.append((chunk_id, pending))
                pending = []
    if pending:
        chunk_facts.append((_id(group, "c", str(len(chunk_facts))), pending))
    # facts list the chunk that states them
    for chunk_id, facts in chunk_facts:
        for f in facts:
            f.episodes[:] = [chunk_id]
    graph.chunks = len(chunk_facts)
    return graph, chunk_facts


def write(rt: Runtime, group: str, graph: SyntheticGraph, chunk_facts: list[tuple[str, list[Fact]]],
          progress: Callable[[str, int], None] = lambda _s, _n: None, batch: int = 1000) -> None:
    rt.graph.ensure_schema(group)
    embed = rt.embedder.embed
    names = {e.id: e.name for e in graph.entities}
    for part in _batches(graph.entities, batch):
        ents = list(part)  # type: ignore[arg-type]
        rt.graph.upsert_entities(ents)
        rt.vectors.upsert(Collection.ENTITIES, [entity_point(e, v) for e, v in
                                                zip(ents, embed([entity_text(e) for e in ents]), strict=True)])
        progress("entities", len(ents))
    now = datetime(2025, 6, 1, tzinfo=UTC)
    for d, part in enumerate(_batches(chunk_facts, 50)):
        doc_id = _id(group, "d", str(d))
        items = list(part)  # type: ignore[arg-type]
        texts = [" ".join(f.fact for f in facts) for _, facts in items]
        document = Document(id=doc_id, group_id=group, source_system=SourceSystem.FILE,
                            source_id=f"synthetic-{d}", title=f"Synthetic page {d}", content_hash=doc_id,
                            created_at=now)
        chunks = [Chunk(id=cid, document_id=doc_id, group_id=group, index=i, content=text,
                        start_offset=0, end_offset=len(text), token_count=len(text.split()))
                  for i, ((cid, _), text) in enumerate(zip(items, texts, strict=True))]
        rt.documents.save_document(document, chunks)
        episodes = [Episode(id=c.id, group_id=group, name=document.title, content=c.content,
                            document_id=doc_id, valid_at=now, created_at=now) for c in chunks]
        rt.graph.upsert_episodes(episodes)
        if rt.settings.evidence_vectors:  # what ingestion stores for local search (issue 23)
            rows = [(e, t) for e in episodes for t in evidence_texts(e)]
            rt.vectors.upsert(Collection.SENTENCES, [
                sentence_point(e, t, v) for (e, t), v in
                zip(rows, embed([t for _, t in rows]), strict=True)])
        pairs = list(dict.fromkeys((cid, x) for cid, facts in items for f in facts
                                   for x in (f.source_id, f.target_id)))
        rt.graph.upsert_mentions(group, pairs)
        rt.documents.add_mentions([EntityMention(
            id=_id(cid, eid), group_id=group, chunk_id=cid, entity_id=eid, span_start=0, span_end=1,
            text=names[eid], extractor="synthetic", confidence=1.0) for cid, eid in pairs])
        facts = [f for _, fs in items for f in fs]
        rt.graph.upsert_facts(facts)
        vectors = embed([f.fact for f in facts] + [f"{document.title}\n{t}" for t in texts])
        rt.vectors.upsert(Collection.FACTS, [fact_point(f, v) for f, v in zip(facts, vectors, strict=False)])
        rt.vectors.upsert(Collection.CHUNKS, [
            passage_point(c.id, doc_id, "file:synthetic", 0, group, v)
            for c, v in zip(chunks, vectors[len(facts):], strict=True)])
        progress("facts", len(facts))
