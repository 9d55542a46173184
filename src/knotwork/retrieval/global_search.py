"""Global (community-based) search: map over community reports, reduce into key points.

1. Communities of the tenant (built on demand when there are none and a builder is given);
   relevance = vector search over the ``communities`` collection + BM25 over titles,
   topics and summaries.
2. The level: the caller's ``community_level``, else the level whose partition fits best.
3. One question-wide pool (:mod:`knotwork.retrieval.global_pool`): the sentences of the
   chunks the question's vector search ranks highest, plus per top-k community its key facts,
   sentences of its cited chunks and of chunks mentioning its central entities (and its
   theme, for "themes" questions); each candidate scored on its own (its similarity to the
   question, BM25, its chunk's vector score), the best distinct points kept.
4. An extractive answer composed from that pool with citations through
   :class:`CitationResolver`. Without relevant points it abstains.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import TypeAdapter

from knotwork.domain.errors import UnknownReference
from knotwork.domain.models import (
    DERIVED_METHODS,
    Community,
    Entity,
    Episode,
    Fact,
    KeyPoint,
    QueryMode,
    QueryResult,
)
from knotwork.domain.ports import CacheLayer, Collection, DocumentStore
from knotwork.domain.timeutil import holds_at
from knotwork.ingestion.chunking import count_tokens
from knotwork.retrieval.citations import CitationResolver
from knotwork.retrieval.community_index import CommunityIndex, community_index
from knotwork.retrieval.config import GlobalSearchConfig
from knotwork.retrieval.evidence_text import (
    GLOBAL_MIN_CHARS,
    sentence_vector_id,
    sentences,
    stored_or_embedded,
)
from knotwork.retrieval.global_compose import compose
from knotwork.retrieval.global_pool import rank_pool
from knotwork.retrieval.global_rank import (
    Candidate,
    expand_query,
    top_communities,
    topic_focus,
)
from knotwork.retrieval.router import asks_for_themes
from knotwork.retrieval.sentences import as_sentence
from knotwork.runtime import Runtime

_COMMUNITIES: TypeAdapter[list[Community]] = TypeAdapter(list[Community])

NO_GLOBAL_ANSWER = "I could not find support for this in the community reports."
BROAD_FACT_LIMIT = 500  # facts of a named entity read to see whether it is the tenant's own
CHUNK_PRIOR_LIMIT = 100  # passages scored by the vector search (each sentence's chunk score)


@dataclass
class GlobalOutcome:
    """What global search found; ``available`` is False when the tenant has no communities."""

    question: str
    available: bool
    level: int | None = None
    communities: list[tuple[Community, float]] = field(default_factory=list)
    points: list[Candidate] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)  # community id -> title
    trace: list[str] = field(default_factory=list)
    pool: list[Candidate] = field(default_factory=list)  # ranked points the answer left out

    def key_points(self) -> list[KeyPoint]:
        """The answer's key points, then the rest of the ranked pool."""
        return [KeyPoint(text=p.text, score=round(p.score, 4), community_id=p.community_id,
                         community=self.names.get(p.community_id, ""), chunk_ids=p.chunk_ids,
                         fact_id=p.fact_id) for p in [*self.points, *self.pool]]


class GlobalSearch:
    def __init__(self, runtime: Runtime, group_id: str, config: GlobalSearchConfig | None = None,
                 build: Callable[[], None] | None = None) -> None:
        """``build``: makes the tenant's communities when it has none (None: never built here)."""
        self._rt = runtime
        self._group = group_id
        self._cfg = config or GlobalSearchConfig()
        self._build = build

    @property
    def config(self) -> GlobalSearchConfig:
        return self._cfg

    @property
    def documents(self) -> DocumentStore:
        return self._rt.documents

    # ------------------------------------------------------------------ search
    def _communities(self) -> list[Community]:
        """Every community of the tenant; from the cache's community layer when configured
        (24 h, dropped when detection completes or summaries change)."""
        cache = self._rt.cache
        if cache is not None and (hit := cache.get(CacheLayer.COMMUNITY, self._group, "all")) is not None:
            return _COMMUNITIES.validate_json(hit)
        communities = self._rt.graph.list_communities(self._group)
        if cache is not None and communities:
            cache.set(CacheLayer.COMMUNITY, self._group, "all", _COMMUNITIES.dump_json(communities).decode())
        return communities

    def _index(self, trace: list[str]) -> CommunityIndex | None:
        """The tenant's community index (built on demand when it has no communities)."""
        graph, group = self._rt.graph, self._group
        state = graph.get_community_state(group)
        if (state is None or state.community_count == 0) and self._build is not None \
                and self._cfg.build_on_demand and not self._communities():
            trace.append("no communities yet: building them on demand")
            self._build()
            state = graph.get_community_state(group)
        if state is None or state.community_count == 0:
            communities = self._communities()  # no build record (a restore, a test): uncached
            return CommunityIndex(communities) if communities else None
        index = community_index(graph, group, state, self._communities, self._cfg.index_ttl_s)
        return index if index.communities else None

    def _relevance(self, question: str, qvec: Sequence[float], index: CommunityIndex
                   ) -> dict[str, float]:
        """Community id -> relevance (vector top-k + BM25), for the communities scoring > 0."""
        cfg = self._cfg
        hits = self._rt.vectors.search(Collection.COMMUNITIES, qvec, group_id=self._group,
                                       limit=min(len(index.communities), cfg.community_vector_limit))
        vector = {h.id: h.score for h in hits if h.id in index.by_id}
        plain, expanded = index.bm25(question), index.bm25(expand_query(question))
        lexical = {cid: max(plain.get(cid, 0.0), expanded.get(cid, 0.0))
                   for cid in set(plain) | set(expanded)}
        return {cid: round(cfg.weight_community_vector * max(0.0, vector.get(cid, 0.0))
                           + cfg.weight_community_lexical * lexical.get(cid, 0.0), 6)
                for cid in set(vector) | set(lexical)}

    def search(self, question: str, *, level: int | None = None, top_k: int | None = None,
               as_of: datetime | None = None, max_points: int | None = None,
               entity_ids: Sequence[str] = ()) -> GlobalOutcome:
        """``entity_ids``: the known entities the question names (their chunks are read)."""
        cfg = self._cfg
        trace: list[str] = []
        index = self._index(trace)
        if index is None:
            trace.append("no communities for this tenant")
            return GlobalOutcome(question, available=False, trace=trace)
        max_level = index.max_level
        if level is not None and not 0 <= level <= max_level:
            raise UnknownReference(f"community_level must be between 0 and {max_level}, got {level}")
        qvec = self._rt.embedder.embed([question])[0]
        relevance = self._relevance(question, qvec, index)
        if level is None:
            fits = {lvl: round(index.level_fit(relevance, lvl, cfg.level_fit_top), 6)
                    for lvl in index.levels}
            best = max(fits.values())
            level = min(lvl for lvl, fit in fits.items() if fit >= best - 1e-9)
            trace.append("level fit: " + ", ".join(f"{lvl}={fit:.2f}" for lvl, fit in fits.items())
                         + f" → level {level}")
        else:
            trace.append(f"level {level} (requested)")
        members = index.members.get(level, frozenset())
        scored = [index.by_id[cid] for cid in relevance if cid in members] \
            if cfg.min_community_score > 0 else [c for c in index.communities if c.id in members]
        ranked = top_communities(scored, relevance, top_k or cfg.top_k_communities,
                                 cfg.min_community_score)
        chosen = self._fresh(ranked)
        names = {c.id: c.name for c in index.communities}
        trace.append(f"communities: {len(chosen)} of {len(members)} at level {level} mapped"
                     + (f" (best: {chosen[0][0].name}, {chosen[0][1]:.2f})" if chosen else ""))
        outcome = GlobalOutcome(question, available=True, level=level, communities=chosen,
                                names=names, trace=trace)
        if not chosen:
            return outcome
        themes = asks_for_themes(question)
        # the analyst topic of a question about named things is its framing ("what changed
        # afterwards"), not a kind of thing to list: their sentences are not held off-topic
        focus = topic_focus(question) if not entity_ids else topic_focus("")
        question = self._without_broad_names(question, entity_ids)
        groups = self._candidates(qvec, [c for c, _ in chosen], as_of, entity_ids)
        pool, n_scored = rank_pool(question, groups, lambda short: self._similarity(qvec, short),
                                 cfg, focus, themes)
        outcome.points = compose(pool, question, cfg.answer_words,
                                 max_points or cfg.max_key_points, cfg.density_weight)
        outcome.pool = [p for p in pool if p not in outcome.points]
        trace.append(f"pool: {sum(len(g) for g in groups)} candidates, {n_scored} scored, "
                     f"{len(pool)} kept; {len(outcome.points)} key points"
                     + (f" (best {outcome.points[0].score:.2f})" if outcome.points else ""))
        return outcome

    def _similarity(self, qvec: Sequence[float], candidates: Sequence[Candidate]) -> list[float]:
        """Each candidate's cosine to the question."""
        vectors = self._vectors(candidates)
        return [sum(a * b for a, b in zip(qvec, vectors[c.text], strict=True)) for c in candidates]

    def _vectors(self, candidates: Sequence[Candidate]) -> dict[str, Sequence[float]]:
        """The vector of each candidate's text: a source sentence's as stored at ingest
        (``Settings.evidence_vectors``), the rest embedded."""
        ids = {c.text: c.vector_id for c in candidates}  # one candidate per text (merge_sources)
        texts = list(ids)
        return dict(zip(texts, stored_or_embedded(self._rt, self._group, texts,
                                                  [ids[t] for t in texts]), strict=True))

    def _broad(self, entity_id: str) -> bool:
        """An entity too broad to match on: mentioned in at least ``broad_entity_chunks``
        chunks, or the tenant's own organisation (the one the workspace's members were
        related to: a derived fact touches it)."""
        cap = self._cfg.broad_entity_chunks
        if len(self._rt.documents.chunks_mentioning(self._group, [entity_id], cap)) >= cap:
            return True
        hits = self._rt.graph.expand_facts(self._group, [entity_id], depth=1,
                                           include_invalid=True, limit=BROAD_FACT_LIMIT)
        return any(h.fact.extraction_method in DERIVED_METHODS for h in hits)

    def _without_broad_names(self, question: str, entity_ids: Sequence[str]) -> str:
        """The question for scoring points, without the names of broad entities (:meth:`_broad`,
        the organisation itself): every sentence naming it matched the question as well as the
        ones about what it asks."""
        broad = [e for e in dict.fromkeys(entity_ids) if self._broad(e)]
        if not broad:
            return question
        names = sorted({n for e in self._rt.graph.get_entities(self._group, broad)
                        for n in (e.name, *e.aliases) if len(n) > 2}, key=len, reverse=True)
        pattern = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(n) for n in names)
                             + r")(?:['’]s)?(?!\w)", re.IGNORECASE)
        stripped = " ".join(pattern.sub(" ", question).split())
        return stripped if len(stripped.split()) >= 2 else question

    def _fresh(self, ranked: Sequence[tuple[Community, float]]) -> list[tuple[Community, float]]:
        """The chosen communities as the graph has them now (the index may lag a summary
        refresh); one gone since the index was built is dropped."""
        out: list[tuple[Community, float]] = []
        for community, score in ranked:
            current = self._rt.graph.get_community(self._group, community.id)
            if current is not None:
                out.append((current, score))
        return out

    def _candidates(self, qvec: Sequence[float], communities: Sequence[Community],
                    as_of: datetime | None, entity_ids: Sequence[str] = ()
                    ) -> list[list[Candidate]]:
        """The candidate groups of the question-wide pool: first the sentences of the chunks
        the question's vector search ranks highest (and of the chunks mentioning the entities
        it names), then per community its key facts, the sentences of its source chunks and
        its theme. A text may come in several groups (``merge_sources`` keeps it once). Facts
        and source chunks of all communities are read in one call each."""
        cfg, group = self._cfg, self._group
        prior: dict[str, float] = {}
        for h in self._rt.vectors.search(Collection.CHUNKS, qvec, group_id=group,
                                         limit=CHUNK_PRIOR_LIMIT):
            key = str(h.payload.get("chunk_id") or h.id)  # a chunk's best passage
            prior[key] = max(prior.get(key, h.score), h.score)
        facts = {f.id: f for f in self._rt.graph.get_facts(
            group, [i for c in communities for i in c.key_facts])}
        sources: dict[str, list[str]] = {}
        for c in communities:
            central = c.central_entities[: cfg.central_entities]
            mentioned = self._rt.documents.chunks_mentioning(group, central, cfg.mention_chunks) \
                if central else []
            sources[c.id] = list(dict.fromkeys([*c.citations, *mentioned]))
        top = sorted(prior, key=lambda i: -prior[i])[: cfg.retrieved_chunks]
        named = [i for e in dict.fromkeys(entity_ids)
                 for i in self._rt.documents.chunks_mentioning(group, [e], cfg.named_chunks)]
        top = list(dict.fromkeys([*top, *named]))
        episodes = {e.id: e for e in self._rt.graph.get_episodes(
            group, list(dict.fromkeys([*top, *(i for ids in sources.values() for i in ids)])))}
        home = {i: c.id for c in reversed(communities) for i in sources[c.id]}
        retrieved = [s for i in top if i in episodes and _before(episodes[i], as_of)
                     for s in self._sentences(episodes[i], home.get(i, ""), prior)]
        return [retrieved, *(self._community_candidates(
            c, facts, [episodes[i] for i in sources[c.id] if i in episodes], prior, as_of)
            for c in communities)]

    def _sentences(self, episode: Episode, community_id: str, prior: dict[str, float]
                   ) -> list[Candidate]:
        """The first ``sentences_per_chunk`` sentences of a source chunk (no headings), as
        candidates; their title, heading and speaker are their lexical context."""
        items: list[Candidate] = []
        for s in sentences(episode):
            if s.heading or len(s.shown) < GLOBAL_MIN_CHARS:
                continue
            if len(items) >= self._cfg.sentences_per_chunk:
                break
            items.append(Candidate(s.shown, community_id, [episode.id], context=s.context,
                                   vector_id=sentence_vector_id(episode.id, s.shown),
                                   prior=prior.get(episode.id, 0.0),
                                   document=episode.document_id))
        return items

    def _community_candidates(self, community: Community, facts: dict[str, Fact],
                              episodes: Sequence[Episode], prior: dict[str, float],
                              as_of: datetime | None) -> list[Candidate]:
        items: list[Candidate] = []
        for fact_id in community.key_facts:
            fact = facts.get(fact_id)
            if fact is not None and holds_at(fact.valid_at, fact.invalid_at, as_of):
                # a fact read verbatim from a sentence has that sentence's stored vector
                vid = sentence_vector_id(fact.episodes[0], fact.fact) if fact.episodes else ""
                items.append(Candidate(
                    fact.fact, community.id, list(fact.episodes), fact_id=fact.id, vector_id=vid,
                    prior=max((prior.get(e, 0.0) for e in fact.episodes), default=0.0)))
        for episode in episodes:
            if _before(episode, as_of):
                items.extend(self._sentences(episode, community.id, prior))
        if community.key_topics and community.citations:
            title = community.name.split(" — ")[0]
            items.append(Candidate(f"{title}: {', '.join(community.key_topics)}.",
                                   community.id, list(community.citations[:2]), theme=True))
        return items

    # ------------------------------------------------------------------ answer
    def run(self, question: str, *, level: int | None = None, top_k: int | None = None,
            as_of: datetime | None = None, max_context_tokens: int = 4000,
            entity_ids: Sequence[str] = ()) -> QueryResult | None:
        """The global answer; None when the tenant has no communities (fall back to local)."""
        outcome = self.search(question, level=level, top_k=top_k, as_of=as_of,
                              entity_ids=entity_ids)
        if not outcome.available:
            return None
        return self.to_result(outcome, max_context_tokens)

    def key_entities(self, outcome: GlobalOutcome, limit: int = 20) -> list[Entity]:
        ids = list(dict.fromkeys(e for c, _ in outcome.communities
                                 for e in c.central_entities[:3]))[:limit]
        by_id = {e.id: e for e in self._rt.graph.get_entities(self._group, ids)}
        return [by_id[i] for i in ids if i in by_id]

    def to_result(self, outcome: GlobalOutcome, max_context_tokens: int) -> QueryResult:
        cfg = self._cfg
        trace = list(outcome.trace)
        communities = [c for c, _ in outcome.communities]
        if not outcome.points:
            best = max((s for _, s in outcome.communities), default=0.0)
            trace.append(f"abstained: no key point reaches {cfg.min_point_score}")
            return QueryResult(answer=NO_GLOBAL_ANSWER, citations=[],
                               confidence=round(min(0.2, best * 0.5), 3), mode_used=QueryMode.GLOBAL,
                               reasoning_trace=trace, community_level=outcome.level,
                               communities=communities)
        resolver = CitationResolver(self._rt.documents)
        points = outcome.points
        citations = resolver.resolve([(p.text, p.chunk_ids) for p in points], limit=cfg.citations)
        used = {p.community_id for p in points}
        trace.append(f"key points from {len(used)} of {len(outcome.communities)} communities "
                     f"(level {outcome.level})")
        answer = "\n".join(as_sentence(p.text) for p in points)
        top = points[: min(3, len(points))]
        confidence = round(max(0.0, min(1.0, sum(p.score for p in top) / len(top))), 3)
        trace.append(f"answer: {len(points)} key points, {len(citations)} citations")
        return QueryResult(
            answer=answer, citations=citations, confidence=confidence, mode_used=QueryMode.GLOBAL,
            context=_context(outcome, max_context_tokens), reasoning_trace=trace,
            entities=self.key_entities(outcome), key_points=outcome.key_points(),
            communities=communities, community_level=outcome.level)


def _before(episode: Episode, as_of: datetime | None) -> bool:
    return as_of is None or episode.valid_at <= as_of


def _context(outcome: GlobalOutcome, budget: int) -> str:
    parts: list[str] = []
    used = 0
    lines = ["Communities:"]
    lines += [f"- {c.name} (level {c.level}, {c.entity_count} entities): {c.summary}"
              for c, _ in outcome.communities]
    lines += ["Key points:"] + [f"- {p.text} [{outcome.names.get(p.community_id, '')}]"
                                for p in outcome.points]
    for line in lines:
        cost = count_tokens(line)
        if used + cost > budget:
            continue
        parts.append(line)
        used += cost
    return "\n".join(parts)
