"""A fact's confidence as a function of its current evidence (never accumulated).

Every evidence episode of a fact keeps the confidence its extraction gave it there
(``Fact.episode_confidences``, aligned with ``Fact.episodes``). The fact's confidence is the
best of them plus a boost per further episode, capped:

    confidence = min(CAP, max(per_episode) + BOOST * (len(per_episode) - 1))

so withdrawing a document (an edit, a deletion) lowers it again, and re-adding it gives the
same value as a fresh ingest. Likewise ``valid_at`` is the earliest start of validity the
current evidence gives (``Fact.episode_valid_at``, aligned the same way). The graph store applies the same formula when it strips
withdrawn episodes (``lineage_cypher.STRIP_EVIDENCE`` takes these constants as parameters).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

EVIDENCE_BOOST = 0.05  # per supporting episode beyond the first
MAX_CONFIDENCE = 1.0


def evidence_confidence(per_episode: Sequence[float], fallback: float = 1.0) -> float:
    """The confidence of a fact evidenced with these per-episode confidences."""
    if not per_episode:
        return fallback
    score = max(per_episode) + EVIDENCE_BOOST * (len(per_episode) - 1)
    return min(score, MAX_CONFIDENCE)


def aligned_valid_at(valid_at: datetime | None, episodes: Sequence[str],
                     per_episode: Sequence[datetime | None]) -> list[datetime | None]:
    """Per-episode start of validity aligned with ``episodes`` (facts stored before they
    were kept: the fact's own ``valid_at`` for each)."""
    if len(per_episode) == len(episodes):
        return list(per_episode)
    return [valid_at] * len(episodes)


def earliest(per_episode: Sequence[datetime | None]) -> datetime | None:
    """A fact holds since the earliest start its current evidence gives (None: none given)."""
    known = [v for v in per_episode if v is not None]
    return min(known) if known else None


def aligned_confidences(confidence: float, episodes: Sequence[str],
                        per_episode: Sequence[float]) -> list[float]:
    """Per-episode confidences aligned with ``episodes``. Facts stored before they were kept
    get the stored confidence minus the boosts it may have accumulated (an estimate)."""
    if len(per_episode) == len(episodes):
        return [float(c) for c in per_episode]
    legacy = max(0.0, confidence - EVIDENCE_BOOST * max(0, len(episodes) - 1))
    return [legacy] * len(episodes)
