"""The pure ranking steps of global search: communities, the level, map and reduce.

No stores here: semantic similarities come in precomputed, so every step is testable with
fake inputs. :mod:`knotwork.retrieval.global_search` does the reading and embedding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from knotwork.communities.report import partition
from knotwork.domain.models import Community
from knotwork.retrieval.config import GlobalSearchConfig
from knotwork.retrieval.lexical import bm25_scores, terms

# Analyst words of corpus-wide questions and the words their evidence uses (no LLM to bridge
# "risk" and "the Billing Service was unavailable"): added to the lexical query only.
TOPIC_WORDS: Mapping[str, str] = {
    "risk": "outage incident failure failed unavailable severity sev root cause delay delayed "
            "blocker manual timeout timed deadline problem issue exceed",
    "issue": "outage incident failure failed unavailable problem bug root cause timeout",
    "problem": "outage incident failure failed unavailable issue bug root cause timeout",
    "challenge": "outage incident failure delay delayed moved blocker manual problem",
    "incident": "outage failure unavailable severity sev commander root cause postmortem",
    "decision": "decided decide approved adopt migrate chose decision",
    "change": "moved move migrate migration replaced new promotion promoted joins joined",
    "priority": "launch deadline milestone scheduled plan roadmap",
    "plan": "launch deadline milestone scheduled roadmap",
    "technology": "use uses database platform service kafka postgresql ci",
    "people": "leads manages engineer manager role team reports",
    "team": "team leads member maintains builds",
    "lesson": "root cause action item postmortem",
}


def expand_query(question: str) -> str:
    """The question plus the evidence words of the analyst topics it names."""
    stems = set(terms(question))
    extra = [words for topic, words in TOPIC_WORDS.items() if terms(topic)[0] in stems]
    return " ".join([question, *extra])


@dataclass
class Candidate:
    """A possible key point of one community: a key fact, a source sentence or its theme."""

    text: str
    community_id: str
    chunk_ids: list[str]
    fact_id: str | None = None
    theme: bool = False
    context: str = ""  # the source's title: scored lexically, never shown
    prior: float = 0.0  # cheap relevance (the chunk's vector score) used to prefilter
    lexical: float = 0.0
    semantic: float = 0.0
    score: float = 0.0
    parts: dict[str, float] = field(default_factory=dict)


def community_text(community: Community) -> str:
    """What BM25 sees of a community: title, topics and summary."""
    return f"{community.name} {' '.join(community.key_topics)} {community.summary}"


def score_communities(question: str, communities: Sequence[Community],
                      vector_scores: Mapping[str, float], cfg: GlobalSearchConfig
                      ) -> dict[str, float]:
    """Community id -> relevance: the vector score (0 when not among the hits) and BM25."""
    texts = [community_text(c) for c in communities]
    lexical = [max(a, b) for a, b in zip(bm25_scores(question, texts),
                                         bm25_scores(expand_query(question), texts), strict=True)]
    return {c.id: round(cfg.weight_community_vector * max(0.0, vector_scores.get(c.id, 0.0))
                        + cfg.weight_community_lexical * lex, 6)
            for c, lex in zip(communities, lexical, strict=True)}


def level_fit(relevance: Mapping[str, float], members: Sequence[Community], top: int) -> float:
    best = sorted((relevance.get(c.id, 0.0) for c in members), reverse=True)[: max(1, top)]
    return sum(best) / len(best) if best else 0.0


def choose_level(communities: Sequence[Community], relevance: Mapping[str, float],
                 cfg: GlobalSearchConfig) -> tuple[int, dict[int, float]]:
    """The level whose partition's best communities fit the question best (ties: the finer).

    Returns the level and every level's fit (for the trace).
    """
    levels = sorted({c.level for c in communities})
    fits = {lvl: round(level_fit(relevance, partition(communities, lvl), cfg.level_fit_top), 6)
            for lvl in levels}
    if not fits:
        return 0, fits
    best = max(fits.values())
    return min(lvl for lvl, fit in fits.items() if fit >= best - 1e-9), fits


def top_communities(members: Sequence[Community], relevance: Mapping[str, float], top_k: int,
                    min_score: float) -> list[tuple[Community, float]]:
    ranked = sorted(members, key=lambda c: (-relevance.get(c.id, 0.0), -c.entity_count, c.id))
    return [(c, relevance.get(c.id, 0.0)) for c in ranked[:top_k]
            if relevance.get(c.id, 0.0) >= min_score]


def lexical_scores(question: str, candidates: Sequence[Candidate]) -> list[float]:
    """BM25 of each candidate (its source title helping), for the question as asked or with
    its topic words (:func:`expand_query`), whichever scores higher."""
    queries = list(dict.fromkeys([question, expand_query(question)]))
    best = [0.0] * len(candidates)
    for query in queries:
        lexical = bm25_scores(query, [c.text for c in candidates])
        in_context = bm25_scores(query, [f"{c.text} {c.context}" for c in candidates])
        best = [max(b, lex, 0.6 * ctx + 0.4 * lex)
                for b, lex, ctx in zip(best, lexical, in_context, strict=True)]
    return best


def prefilter(question: str, candidates: Sequence[Candidate], limit: int,
              cfg: GlobalSearchConfig, themes: bool = False) -> list[Candidate]:
    """Lexical score for every candidate; keep the ``limit`` most promising for embedding.

    Sentences of fewer than ``min_point_terms`` informative words are no key points.
    """
    candidates = [c for c in candidates if c.theme or len(terms(c.text)) >= cfg.min_point_terms]
    for c, lex in zip(candidates, lexical_scores(question, candidates), strict=True):
        c.lexical = lex

    def promise(c: Candidate) -> float:
        bonus = cfg.bonus_fact if c.fact_id else 0.0
        if c.theme:
            bonus += cfg.bonus_theme if themes else -1.0
        return c.lexical + c.prior + bonus

    return sorted(candidates, key=lambda c: -promise(c))[:limit]


def score_points(candidates: Sequence[Candidate], semantic: Sequence[float],
                 community_relevance: float, cfg: GlobalSearchConfig,
                 themes: bool = False) -> None:
    """Set each candidate's score: semantic, lexical, the community's relevance, bonuses."""
    for c, sem in zip(candidates, semantic, strict=True):
        # a three-word sentence is similar to anything about its subject and a poor key point
        informative = 1.0 if c.theme else min(1.0, len(terms(c.text)) / cfg.min_informative_terms)
        c.semantic = sem * informative
        c.lexical *= informative
        bonus = cfg.bonus_fact if c.fact_id else 0.0
        if c.theme and themes:
            bonus += cfg.bonus_theme
        c.parts = {"semantic": round(c.semantic, 4), "lexical": round(c.lexical, 4),
                   "community": round(community_relevance, 4), "bonus": bonus}
        c.score = round(cfg.weight_semantic * c.semantic + cfg.weight_lexical * c.lexical
                        + cfg.weight_community * community_relevance + bonus, 6)


def overlap(a: str, b: str) -> float:
    ta, tb = set(terms(a)), set(terms(b))
    return len(ta & tb) / (len(ta | tb) or 1)


def _distinct(points: Sequence[Candidate], limit: int, chosen: Sequence[Candidate] = ()
              ) -> list[Candidate]:
    out: list[Candidate] = []
    for p in points:
        if len(out) >= limit:
            break
        if all(overlap(p.text, q.text) < 0.5 for q in [*chosen, *out]):
            out.append(p)
    return out


def map_community(candidates: Sequence[Candidate], cfg: GlobalSearchConfig) -> list[Candidate]:
    """The map step: a community's best distinct points (already scored)."""
    ranked = sorted(candidates, key=lambda c: (-c.score, c.text))
    return _distinct(ranked, cfg.points_per_community)


def reduce_points(mapped: Sequence[Candidate], cfg: GlobalSearchConfig,
                  max_points: int | None = None) -> list[Candidate]:
    """The reduce step: the best points over all communities, distinct, near the best score."""
    ranked = sorted(mapped, key=lambda c: (-c.score, c.text))
    if not ranked or ranked[0].score < cfg.min_point_score:
        return []
    floor = max(cfg.min_point_score, ranked[0].score * cfg.relative_cutoff)
    return _distinct([c for c in ranked if c.score >= floor], max_points or cfg.max_key_points)
