"""Rerankers of design docs 000 / 002 / 004, as pure functions over ids and scores.

- :func:`rrf`: reciprocal rank fusion, ``Σ 1 / (k + rank)`` (rank from 1); k = 60 in doc 004,
  k = 1 in Graphiti (doc 000).
- :func:`mmr`: maximal marginal relevance, ``λ·cos(q, d) + (λ − 1)·max cos(d, selected)``,
  candidates scoring below ``min_score`` dropped.
- :func:`node_distance`: closer to a center entity first (hop distance; unreachable last).
- :func:`episode_mentions`: more episodes mentioning the item first.
- :func:`entity_scores`: doc 004's ``semantic·cos + time·exp(−λ·days) + salience·s``.

Every function returns ``(id, score)`` pairs, best first, ties broken by the input order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

Ranked = list[tuple[str, float]]


def rrf(rankings: Sequence[Sequence[str]], k: float = 60.0, min_score: float = 0.0) -> Ranked:
    if k < 0:
        raise ValueError("the RRF rank constant must be >= 0")
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(dict.fromkeys(ranking), start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    order = {item: i for i, item in enumerate(dict.fromkeys(x for r in rankings for x in r))}
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))
    return [(i, s) for i, s in ranked if s >= min_score]


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def mmr(query: Sequence[float], candidates: Sequence[tuple[str, Sequence[float]]],
        lambda_: float = 0.5, min_score: float = -2.0, limit: int | None = None) -> Ranked:
    """Greedy MMR over unit vectors (cosine = dot product)."""
    if not 0.0 <= lambda_ <= 1.0:
        raise ValueError("MMR lambda must be within [0, 1]")
    relevance = {cid: _dot(query, vec) for cid, vec in candidates}
    vectors = dict(candidates)
    remaining = list(dict.fromkeys(cid for cid, _ in candidates))
    chosen: Ranked = []
    cap = len(remaining) if limit is None else limit
    while remaining and len(chosen) < cap:
        best_id, best = remaining[0], -math.inf
        for cid in remaining:
            redundancy = max((_dot(vectors[cid], vectors[s]) for s, _ in chosen), default=0.0)
            score = lambda_ * relevance[cid] + (lambda_ - 1.0) * redundancy
            if score > best:
                best_id, best = cid, score
        remaining.remove(best_id)
        if best < min_score:
            continue
        chosen.append((best_id, best))
    return chosen


def node_distance(candidates: Sequence[str], distance: Mapping[str, int]) -> Ranked:
    """``distance``: hops from the center entity per candidate (0 = the center itself);
    score ``1 / (1 + hops)``, unreachable candidates score 0 and keep their order."""
    scored = [(c, 1.0 / (1 + distance[c]) if c in distance else 0.0) for c in dict.fromkeys(candidates)]
    return sorted(scored, key=lambda cs: -cs[1])


def episode_mentions(candidates: Sequence[str], mentions: Mapping[str, int]) -> Ranked:
    scored = [(c, float(mentions.get(c, 0))) for c in dict.fromkeys(candidates)]
    return sorted(scored, key=lambda cs: -cs[1])


@dataclass(frozen=True)
class EntityScoring:
    """Doc 004's scoring model; the weights sum to 1, the decay half-life is ln 2 / λ."""

    semantic_weight: float = 0.3
    time_weight: float = 0.3
    salience_weight: float = 0.4
    decay: float = 0.02  # per day: half-life ~35 days


def recency(updated_at: datetime | None, now: datetime, decay: float) -> float:
    if updated_at is None:
        return 0.0
    days = max(0.0, (now - updated_at).total_seconds() / 86400.0)
    return math.exp(-decay * days)


def entity_scores(candidates: Sequence[tuple[str, float, datetime | None, float]], now: datetime,
                  scoring: EntityScoring | None = None) -> Ranked:
    """``candidates``: (id, cosine, last update, salience in [0, 1])."""
    w = scoring or EntityScoring()
    scored = [(cid, w.semantic_weight * max(0.0, min(1.0, cos))
               + w.time_weight * recency(when, now, w.decay)
               + w.salience_weight * max(0.0, min(1.0, sal)))
              for cid, cos, when, sal in candidates]
    return sorted(scored, key=lambda cs: -cs[1])


def salience(degrees: Mapping[str, int]) -> dict[str, float]:
    """Degree centrality scaled to [0, 1] by the log of the largest degree."""
    top = max(degrees.values(), default=0)
    if top <= 0:
        return {k: 0.0 for k in degrees}
    return {k: math.log1p(v) / math.log1p(top) for k, v in degrees.items()}
