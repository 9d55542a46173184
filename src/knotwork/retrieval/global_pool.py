"""Global search's question-wide candidate pool: the steps from candidates to key points.

One pool for the whole question, whatever community a candidate came from:

1. :func:`merge_sources`: the sentences of the chunks the question's vector search ranks
   highest and the community-derived candidates (key facts, sentences of the chunks a
   community cites or whose central entities they mention, its theme), each text once,
   with every community it came from;
2. :func:`shortlist`: BM25 over the whole pool plus the chunk's vector score and the
   point's :func:`specificity`, the most promising few kept for embedding (at most
   ``shortlist_per_source`` of one chunk);
3. :func:`score_pool`: each candidate by its own similarity to the question, its own BM25,
   its own chunk's vector score and its specificity, never by its community's relevance;
4. :func:`~knotwork.retrieval.global_rank.focus_points`: off-topic points lose weight;
5. :func:`select_points`: the best points near the best score, quotas only against
   redundancy (near-duplicates, too many points from one document).

Communities are a source of candidates and a diversity signal (:func:`select_points` breaks
near-ties towards a community not yet heard), never a quota: two communities merged by new
facts do not halve a topic's points, and a relevant sentence of a weakly relevant community
is scored as any other. Every step is pure; :mod:`knotwork.retrieval.global_search` reads
the stores and embeds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from knotwork.retrieval.config import GlobalSearchConfig
from knotwork.retrieval.global_compose import gain, specifics
from knotwork.retrieval.global_rank import (
    Candidate,
    TopicFocus,
    focus_points,
    lexical_scores,
    overlap,
)
from knotwork.retrieval.lexical import terms

NEAR_DUPLICATE = 0.5  # term overlap (Jaccard) at which two points say the same thing


def text_key(text: str) -> str:
    return " ".join(text.lower().split())


def merge_sources(groups: Iterable[Sequence[Candidate]]) -> list[Candidate]:
    """Each text once (case and whitespace aside): the first candidate seen for it, with
    every community any copy came from, the best chunk score and a fact id if any had one."""
    merged: dict[str, Candidate] = {}
    for group in groups:
        for c in group:
            key = text_key(c.text)
            seen = merged.get(key)
            if seen is None:
                merged[key] = replace(c, communities=_communities_of(c), parts=dict(c.parts))
                continue
            seen.communities = tuple(dict.fromkeys([*seen.communities, *_communities_of(c)]))
            seen.prior = max(seen.prior, c.prior)
            seen.fact_id = seen.fact_id or c.fact_id
            seen.chunk_ids = list(dict.fromkeys([*seen.chunk_ids, *c.chunk_ids]))
            if not seen.community_id:
                seen.community_id = c.community_id
    return list(merged.values())


def _communities_of(c: Candidate) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*c.communities, *([c.community_id] if c.community_id else [])]))


def source_of(c: Candidate) -> str:
    """What a point's redundancy quota counts: its document, else its first chunk."""
    return c.document or (c.chunk_ids[0] if c.chunk_ids else c.text)


def _bonus(c: Candidate, cfg: GlobalSearchConfig, themes: bool) -> float:
    """A key fact's bonus; a theme's when the question asks for themes."""
    return (cfg.bonus_fact if c.fact_id else 0.0) + (cfg.bonus_theme if c.theme and themes else 0.0)


def specificity(c: Candidate, asked: set[str], cfg: GlobalSearchConfig) -> float:
    """How much a point says, 0..1: the names, figures and dates it adds to the question
    per square root of its length (:func:`~knotwork.retrieval.global_compose.gain`), as a
    share of ``full_specificity``. "The outage was a problem" says nothing an overview needs;
    "the fleet hit its 1,800-server cap on 24 Sep" does."""
    return 0.0 if c.theme else min(1.0, gain(c, set(), asked) / cfg.full_specificity)


def shortlist(question: str, pool: Sequence[Candidate], cfg: GlobalSearchConfig,
              themes: bool = False) -> list[Candidate]:
    """BM25 of every candidate over the whole pool; the ``max_candidates`` most promising
    (BM25 + chunk score + bonuses) kept for embedding, at most ``shortlist_per_source`` of
    one chunk. Sentences of fewer than ``min_point_terms`` informative words are dropped."""
    kept = [c for c in pool if c.theme or len(terms(c.text)) >= cfg.min_point_terms]
    asked = specifics(question)
    for c, lex in zip(kept, lexical_scores(question, kept), strict=True):
        c.lexical = lex
        c.specific = specificity(c, asked, cfg)
    # a theme the question does not ask for goes last
    ranked = sorted(kept, key=lambda c: (-(c.lexical + c.prior + cfg.weight_specific * c.specific
                                           + _bonus(c, cfg, themes)
                                           - (1.0 if c.theme and not themes else 0.0)), c.text))
    per_source: Counter[str] = Counter()
    out: list[Candidate] = []
    for c in ranked:
        if len(out) >= cfg.max_candidates:
            break
        source = c.text if c.theme or not c.chunk_ids else c.chunk_ids[0]
        if per_source[source] >= cfg.shortlist_per_source:
            continue
        per_source[source] += 1
        out.append(c)
    return out


def score_pool(candidates: Sequence[Candidate], semantic: Sequence[float],
               cfg: GlobalSearchConfig, themes: bool = False, best_prior: float = 1.0) -> None:
    """Each candidate's score from its own evidence: cosine to the question, BM25, its
    chunk's vector score (``prior``, relative to the question's best chunk ``best_prior``),
    its :func:`specificity` and the fact/theme bonuses."""
    for c, sem in zip(candidates, semantic, strict=True):
        # a three-word sentence is similar to anything about its subject and a poor key point
        informative = 1.0 if c.theme else min(1.0, len(terms(c.text)) / cfg.min_informative_terms)
        c.semantic = sem * informative
        c.lexical *= informative
        bonus = _bonus(c, cfg, themes)
        chunk = c.prior / best_prior if best_prior > 0 else 0.0
        c.parts = {"semantic": round(c.semantic, 4), "lexical": round(c.lexical, 4),
                   "chunk": round(chunk, 4), "specific": round(c.specific, 4), "bonus": bonus}
        c.score = round(cfg.weight_semantic * c.semantic + cfg.weight_lexical * c.lexical
                        + cfg.weight_chunk * chunk + cfg.weight_specific * c.specific + bonus, 6)


def select_points(candidates: Sequence[Candidate], cfg: GlobalSearchConfig,
                  limit: int | None = None) -> list[Candidate]:
    """The ranked pool: points scoring at least ``relative_cutoff`` of the best (and
    ``min_point_score``), best first, without near-duplicates of a point already kept and at
    most ``points_per_document`` of one document. Points within ``diversity_margin`` of each
    other go community-first: one from a community no kept point came from leads. When that
    leaves fewer than ``min_pool_points``, the best ones above ``min_point_score`` are kept
    instead. Empty when no point reaches ``min_point_score`` (the answer abstains)."""
    ranked = sorted(candidates, key=lambda c: (-c.score, c.text))
    if not ranked or ranked[0].score < cfg.min_point_score:
        return []
    floor = max(cfg.min_point_score, ranked[0].score * cfg.relative_cutoff)
    out = _select(ranked, floor, limit or cfg.pool_points, cfg)
    if len(out) < cfg.min_pool_points:  # a small corpus: one strong point sets no floor
        out = _select(ranked, cfg.min_point_score, cfg.min_pool_points, cfg)
    return out


def _select(ranked: Sequence[Candidate], floor: float, cap: int, cfg: GlobalSearchConfig
            ) -> list[Candidate]:
    left = [c for c in ranked if c.score >= floor]
    out: list[Candidate] = []
    heard: set[str] = set()
    per_source: Counter[str] = Counter()
    while left and len(out) < cap:
        top = left[0].score
        near = [c for c in left if c.score >= top - cfg.diversity_margin]
        pick = next((c for c in near if c.communities and not heard.intersection(c.communities)),
                    near[0])
        left.remove(pick)
        if per_source[source_of(pick)] >= cfg.points_per_document \
                or any(overlap(pick.text, q.text) >= NEAR_DUPLICATE for q in out):
            continue
        per_source[source_of(pick)] += 1
        heard.update(pick.communities)
        out.append(pick)
    return out


def rank_pool(question: str, groups: Iterable[Sequence[Candidate]],
              similarity: Callable[[Sequence[Candidate]], Sequence[float]],
              cfg: GlobalSearchConfig, focus: TopicFocus, themes: bool = False
              ) -> tuple[list[Candidate], int]:
    """The declared sequence: merge, shortlist, embed (``similarity``: each candidate's
    cosine to the question), score, focus, select. Returns the ranked pool and how many
    candidates were scored."""
    pool = merge_sources(groups)
    short = shortlist(question, pool, cfg, themes)
    best_prior = max((c.prior for c in pool), default=0.0) if cfg.relative_chunk_score else 1.0
    score_pool(short, similarity(short), cfg, themes, best_prior)
    focus_points(short, focus)
    return select_points(short, cfg), len(short)
