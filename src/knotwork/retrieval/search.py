"""Per-layer hybrid search: facts, entities, chunks, communities (design doc 000 ``search``).

Per layer, each configured method yields a ranking of candidates:

- ``cosine``: the vector store's top-k in the layer's collection (tenant-filtered);
- ``bfs``: graph breadth-first search from the origin entities (given, else the entities the
  query names), depth 1-3: facts within the depth, their endpoint entities, the chunks that
  mention the origins, the origins' communities;
- ``bm25``: BM25 over the texts of every candidate the other sources produced, plus the facts
  touching entities the query names (so exact wording wins even where embeddings miss).

The layer's reranker then orders the union (RRF, MMR, node distance from a center entity,
episode mentions, doc 004 entity scoring, or an LLM relevance judgement). Everything goes
through the ports, so the same search runs on the embedded and the production stack.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Generic, TypeVar

from pydantic import BaseModel, Field

from knotwork.domain.models import DERIVED_METHODS, Chunk, Community, Entity, Fact
from knotwork.domain.ports import CacheLayer, ChatMessage, ChatRole, Collection
from knotwork.domain.timeutil import holds_at
from knotwork.retrieval import rerankers as rr
from knotwork.retrieval.graph_ops import EdgeFilter, GraphOps
from knotwork.retrieval.lexical import bm25_scores
from knotwork.retrieval.local import question_keys
from knotwork.retrieval.search_config import LayerConfig, Method, Reranker, SearchConfig
from knotwork.runtime import Runtime

T = TypeVar("T")


@dataclass(frozen=True)
class Scored(Generic[T]):
    item: T
    score: float


@dataclass
class SearchResults:
    facts: list[Scored[Fact]] = field(default_factory=list)
    entities: list[Scored[Entity]] = field(default_factory=list)
    chunks: list[Scored[Chunk]] = field(default_factory=list)
    communities: list[Scored[Community]] = field(default_factory=list)


class _Cached(BaseModel):
    """SearchResults as JSON for the cache's search layer."""

    facts: list[tuple[Fact, float]]
    entities: list[tuple[Entity, float]]
    chunks: list[tuple[Chunk, float]]
    communities: list[tuple[Community, float]]

    @classmethod
    def of(cls, r: SearchResults) -> _Cached:
        return cls(facts=[(s.item, s.score) for s in r.facts],
                   entities=[(s.item, s.score) for s in r.entities],
                   chunks=[(s.item, s.score) for s in r.chunks],
                   communities=[(s.item, s.score) for s in r.communities])

    def results(self) -> SearchResults:
        return SearchResults(facts=[Scored(i, s) for i, s in self.facts],
                             entities=[Scored(i, s) for i, s in self.entities],
                             chunks=[Scored(i, s) for i, s in self.chunks],
                             communities=[Scored(i, s) for i, s in self.communities])


class _Relevance(BaseModel):
    scores: list[int] = Field(description="0-10 relevance per passage, in order", max_length=100)


@dataclass
class _Layer(Generic[T]):
    """Candidates of one layer: id -> item, and one ranking per method."""

    items: dict[str, T] = field(default_factory=dict)
    rankings: list[list[str]] = field(default_factory=list)
    cosine: dict[str, float] = field(default_factory=dict)

    def add(self, ranking: list[tuple[str, T]]) -> None:
        for key, item in ranking:
            self.items.setdefault(key, item)
        self.rankings.append([k for k, _ in ranking])


class HybridSearch:
    def __init__(self, runtime: Runtime, group_id: str) -> None:
        self._rt = runtime
        self._group = group_id
        self._ops = GraphOps(runtime.graph, group_id)

    def search(self, query: str, config: SearchConfig, *, origin_entity_ids: Sequence[str] = (),
               center_entity_id: str | None = None) -> SearchResults:
        """Cached in the search layer (15 min) when a cache is configured."""
        query = query.strip()
        if not query:
            raise ValueError("the query is empty")
        cache = self._rt.cache
        key = json.dumps([query, config.model_dump_json(), sorted(origin_entity_ids), center_entity_id])
        if cache is not None and (hit := cache.get(CacheLayer.SEARCH, self._group, key)) is not None:
            return _Cached.model_validate_json(hit).results()
        out = self._search(query, config, origin_entity_ids, center_entity_id)
        if cache is not None:
            ids = {s.item.id for s in out.entities} | {
                x for s in out.facts for x in (s.item.source_id, s.item.target_id)}
            cache.set(CacheLayer.SEARCH, self._group, key, _Cached.of(out).model_dump_json(),
                      entity_ids=sorted(ids))
        return out

    def _search(self, query: str, config: SearchConfig, origin_entity_ids: Sequence[str],
                center_entity_id: str | None) -> SearchResults:
        qvec = self._rt.embedder.embed([query])[0]
        origins = list(origin_entity_ids)
        if not origins:
            keys = sorted(question_keys(query))
            origins = [e.id for e in self._rt.graph.find_entities_by_keys(self._group, keys)
                       if any(not k.startswith("first:") and k in keys for k in e.name_keys)]
        distance: dict[str, int] = {}
        if center_entity_id:
            self._ops.require([center_entity_id])
        out = SearchResults()
        flt = EdgeFilter(as_of=config.as_of, include_invalid=config.include_invalid)
        needs_distance = any(c is not None and c.reranker is Reranker.NODE_DISTANCE
                             for c in (config.facts, config.entities))
        if needs_distance:
            if not center_entity_id:
                raise ValueError("the node_distance reranker needs a center entity")
            depth = max(c.bfs_depth for c in (config.facts, config.entities) if c is not None)
            distance = self._ops._bfs([center_entity_id], depth, flt, 5000)[0]
        if config.facts:
            out.facts = self._facts(query, qvec, config.facts, origins, config, distance)
        if config.entities:
            out.entities = self._entities(query, qvec, config.entities, origins, flt, distance)
        if config.chunks:
            out.chunks = self._chunks(query, qvec, config.chunks, origins)
        if config.communities:
            out.communities = self._communities(query, qvec, config.communities, origins)
        return out

    # ------------------------------------------------------------------ layers
    def _facts(self, query: str, qvec: Sequence[float], cfg: LayerConfig, origins: list[str],
               config: SearchConfig, distance: dict[str, int]) -> list[Scored[Fact]]:
        layer: _Layer[Fact] = _Layer()
        ok = (lambda f: True) if config.include_invalid and config.as_of is None else \
            (lambda f: holds_at(f.valid_at, f.invalid_at, config.as_of))
        graph_facts: list[Fact] = []
        if origins and (Method.BFS in cfg.methods or Method.BM25 in cfg.methods):
            depth = cfg.bfs_depth if Method.BFS in cfg.methods else 1
            hits = self._rt.graph.expand_facts(self._group, origins, depth=depth, as_of=config.as_of,
                                               include_invalid=config.include_invalid,
                                               limit=cfg.candidates * 4,
                                               skip_methods=DERIVED_METHODS)
            graph_facts = [h.fact for h in hits]
            if Method.BFS in cfg.methods:
                layer.add([(f.id, f) for f in graph_facts[: cfg.candidates]])
        if Method.COSINE in cfg.methods:
            hits = self._rt.vectors.search(Collection.FACTS, qvec, group_id=self._group,
                                           limit=cfg.candidates, min_score=cfg.sim_min_score)
            by_id = {f.id: f for f in self._rt.graph.get_facts(self._group, [h.id for h in hits])}
            ranking = [(h.id, by_id[h.id]) for h in hits if h.id in by_id and ok(by_id[h.id])]
            layer.cosine.update({h.id: h.score for h in hits})
            layer.add(ranking)
        if Method.BM25 in cfg.methods:
            pool = {f.id: f for f in [*layer.items.values(), *graph_facts]}
            layer.add(_bm25(query, pool, lambda f: f.fact, cfg.candidates))
        ranked = self._rerank(query, qvec, cfg, layer, lambda f: f.fact,
                              distance=lambda f: min(distance.get(f.source_id, 99), distance.get(f.target_id, 99)),
                              mentions=lambda f: len(f.episodes))
        return ranked

    def _entities(self, query: str, qvec: Sequence[float], cfg: LayerConfig, origins: list[str],
                  flt: EdgeFilter, distance: dict[str, int]) -> list[Scored[Entity]]:
        layer: _Layer[Entity] = _Layer()
        named = self._rt.graph.get_entities(self._group, origins) if origins else []
        if Method.BFS in cfg.methods and origins:
            depth = self._ops._bfs(origins, cfg.bfs_depth, flt, cfg.candidates)[0]
            ids = sorted(depth, key=lambda i: (depth[i], i))
            by_id = {e.id: e for e in self._rt.graph.get_entities(self._group, ids)}
            layer.add([(i, by_id[i]) for i in ids if i in by_id])
        if Method.COSINE in cfg.methods or cfg.reranker in (Reranker.ENTITY_SCORE, Reranker.MMR):
            hits = self._rt.vectors.search(Collection.ENTITIES, qvec, group_id=self._group,
                                           limit=cfg.candidates, min_score=cfg.sim_min_score)
            by_id = {e.id: e for e in self._rt.graph.get_entities(self._group, [h.id for h in hits])}
            layer.cosine.update({h.id: h.score for h in hits})
            if Method.COSINE in cfg.methods:
                layer.add([(h.id, by_id[h.id]) for h in hits if h.id in by_id])
        if Method.BM25 in cfg.methods:
            pool = {e.id: e for e in [*layer.items.values(), *named]}
            layer.add(_bm25(query, pool, _entity_text, cfg.candidates))
        if cfg.reranker is Reranker.ENTITY_SCORE:
            return self._scored_entities(cfg, layer)
        return self._rerank(query, qvec, cfg, layer, _entity_text,
                            distance=lambda e: distance.get(e.id, 99),
                            mentions=lambda e: e.evidence_count)

    def _chunks(self, query: str, qvec: Sequence[float], cfg: LayerConfig,
                origins: list[str]) -> list[Scored[Chunk]]:
        layer: _Layer[Chunk] = _Layer()
        if Method.COSINE in cfg.methods:
            hits = self._rt.vectors.search(Collection.CHUNKS, qvec, group_id=self._group,
                                           limit=cfg.candidates, min_score=cfg.sim_min_score)
            ids = [str(h.payload.get("chunk_id") or h.id) for h in hits]
            layer.cosine.update({cid: h.score for cid, h in zip(ids, hits, strict=True)})
            by_id = {c.id: c for c in self._rt.documents.get_chunks(ids)}
            layer.add([(i, by_id[i]) for i in ids if i in by_id])
        if Method.BFS in cfg.methods and origins:
            ids = self._rt.documents.chunks_mentioning(self._group, origins, limit=cfg.candidates)
            by_id = {c.id: c for c in self._rt.documents.get_chunks(ids)}
            layer.add([(i, by_id[i]) for i in ids if i in by_id])
        if Method.BM25 in cfg.methods:
            layer.add(_bm25(query, dict(layer.items), lambda c: c.content, cfg.candidates))
        return self._rerank(query, qvec, cfg, layer, lambda c: c.content)

    def _communities(self, query: str, qvec: Sequence[float], cfg: LayerConfig,
                     origins: list[str]) -> list[Scored[Community]]:
        layer: _Layer[Community] = _Layer()
        if Method.COSINE in cfg.methods:
            hits = self._rt.vectors.search(Collection.COMMUNITIES, qvec, group_id=self._group,
                                           limit=cfg.candidates, min_score=cfg.sim_min_score)
            found = [self._rt.graph.get_community(self._group, h.id) for h in hits]
            layer.cosine.update({h.id: h.score for h in hits})
            layer.add([(c.id, c) for c in found if c is not None])
        if Method.BFS in cfg.methods and origins:
            cids = sorted(set(self._rt.graph.community_of(self._group, origins).values()))
            found = [self._rt.graph.get_community(self._group, c) for c in cids]
            layer.add([(c.id, c) for c in found if c is not None])
        if Method.BM25 in cfg.methods:
            layer.add(_bm25(query, dict(layer.items), _community_text, cfg.candidates))
        return self._rerank(query, qvec, cfg, layer, _community_text,
                            mentions=lambda c: c.entity_count)

    # ------------------------------------------------------------------ reranking
    def _rerank(self, query: str, qvec: Sequence[float], cfg: LayerConfig, layer: _Layer[T],
                text: Callable[[T], str], *, distance: Callable[[T], int] | None = None,
                mentions: Callable[[T], int] | None = None) -> list[Scored[T]]:
        fused = rr.rrf(layer.rankings, cfg.rrf_k)
        ids = [i for i, _ in fused]
        if cfg.reranker is Reranker.MMR:
            vectors = self._rt.embedder.embed([text(layer.items[i]) for i in ids]) if ids else []
            ranked = rr.mmr(qvec, list(zip(ids, vectors, strict=True)), cfg.mmr_lambda, cfg.min_score,
                            cfg.limit)
        elif cfg.reranker is Reranker.NODE_DISTANCE and distance is not None:
            ranked = rr.node_distance(ids, {i: distance(layer.items[i]) for i in ids
                                            if distance(layer.items[i]) < 99})
        elif cfg.reranker is Reranker.EPISODE_MENTIONS and mentions is not None:
            ranked = rr.episode_mentions(ids, {i: mentions(layer.items[i]) for i in ids})
        elif cfg.reranker is Reranker.CROSS_ENCODER and self._rt.llm is not None:
            ranked = self._llm_rerank(query, ids[: cfg.candidates], layer, text)
        else:
            ranked = [(i, s) for i, s in fused if s >= cfg.min_score]
        return [Scored(layer.items[i], s) for i, s in ranked[: cfg.limit]]

    def _scored_entities(self, cfg: LayerConfig, layer: _Layer[Entity]) -> list[Scored[Entity]]:
        ids = list(layer.items)
        facts = [f for f in self._rt.graph.facts_between(self._group, ids) if not f.derived] \
            if ids else []
        degree = {i: 0 for i in ids}
        for f in facts:
            for end in (f.source_id, f.target_id):
                if end in degree:
                    degree[end] += 1
        sal = rr.salience({i: degree[i] + layer.items[i].evidence_count for i in ids})
        scoring = rr.EntityScoring(cfg.semantic_weight, cfg.time_weight, cfg.salience_weight,
                                   cfg.decay_per_day)
        ranked = rr.entity_scores([(i, layer.cosine.get(i, 0.0), layer.items[i].updated_at, sal[i])
                                   for i in ids], datetime.now(UTC), scoring)
        return [Scored(layer.items[i], s) for i, s in ranked[: cfg.limit]]

    def _llm_rerank(self, query: str, ids: list[str], layer: _Layer[T],
                    text: Callable[[T], str]) -> list[tuple[str, float]]:
        llm = self._rt.llm
        assert llm is not None
        passages = "\n".join(f"[{n}] {text(layer.items[i])[:400]}" for n, i in enumerate(ids))
        result = llm.complete([
            ChatMessage(role=ChatRole.SYSTEM, content="Rate how well each passage answers the question, "
                        "0 (irrelevant) to 10 (answers it). Return one integer per passage, in order."),
            ChatMessage(role=ChatRole.USER, content=f"Question: {query}\n\nPassages:\n{passages}")],
            _Relevance, name="rerank-v1")
        if result.value is None or len(result.value.scores) != len(ids):
            return [(i, 1.0 / (n + 1)) for n, i in enumerate(ids)]  # the fused order stands
        scored = [(i, s / 10.0) for i, s in zip(ids, result.value.scores, strict=True)]
        return sorted(scored, key=lambda t: -t[1])


def _entity_text(e: Entity) -> str:
    return " ".join([e.name, *e.aliases, e.summary])


def _community_text(c: Community) -> str:
    return f"{c.name} {c.summary} {' '.join(c.key_topics)}"


def _bm25(query: str, pool: dict[str, T], text: Callable[[T], str], limit: int) -> list[tuple[str, T]]:
    keys = list(pool)
    scores = bm25_scores(query, [text(pool[k]) for k in keys])
    ranked = sorted((s, n) for n, s in enumerate(scores) if s > 0)
    ranked.sort(key=lambda sn: (-sn[0], sn[1]))
    return [(keys[n], pool[keys[n]]) for _, n in ranked[:limit]]
