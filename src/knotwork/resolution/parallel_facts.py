"""Parallel facts after a merge: two facts that come to join the same entities with the same
relation (and, for RELATED_TO, the same sentence) are one fact, as a fresh ingest would store.

``collapse`` folds each such group into one survivor (the id a fresh ingest gives it when one
of them has it, else the smallest) with the others' evidence; ``unabsorbed`` gives a survivor
back its state before the merge, keeping evidence added since (for an exact unmerge).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from knotwork.domain.evidence import aligned_confidences, evidence_confidence
from knotwork.domain.models import Fact, RelationType
from knotwork.ingestion.facts import fact_id, fact_key, merge_into

Key = tuple[str, str, str, str]


def parallel_key(fact: Fact) -> Key:
    text = fact_key(fact.fact) if fact.type is RelationType.RELATED_TO else ""
    return fact.source_id, fact.target_id, fact.type.value, text


def collapse(facts: Iterable[Fact]) -> tuple[list[Fact], dict[str, list[str]]]:
    """The facts to keep (one per parallel group) and {survivor id: the ids it absorbed}."""
    groups: dict[Key, list[Fact]] = {}
    for fact in facts:
        groups.setdefault(parallel_key(fact), []).append(fact)
    kept: list[Fact] = []
    absorbed: dict[str, list[str]] = {}
    for same in groups.values():
        first = same[0]
        canonical = fact_id(first.group_id, first.source_id, first.target_id, first.type,
                            first.fact)
        same = sorted({f.id: f for f in same}.values(), key=lambda f: (f.id != canonical, f.id))
        survivor = same[0]
        for other in same[1:]:
            survivor = merge_into(survivor, other)
        kept.append(survivor)
        if len(same) > 1:
            absorbed[survivor.id] = [f.id for f in same[1:]]
    return kept, absorbed


def unabsorbed(before: Fact, now: Fact | None, absorbed_episodes: Sequence[str]) -> Fact:
    """A survivor as it was before the merge, plus evidence it gained since that was not
    absorbed from the facts the unmerge restores."""
    if now is None:
        return before
    gone = set(absorbed_episodes) | set(before.episodes)
    support = dict(zip(now.episodes, aligned_confidences(now.confidence, now.episodes,
                                                         now.episode_confidences), strict=True))
    extra = [e for e in now.episodes if e not in gone]
    if not extra:
        return before
    per_episode = [*aligned_confidences(before.confidence, before.episodes,
                                        before.episode_confidences), *(support[e] for e in extra)]
    return before.model_copy(update={
        "episodes": [*before.episodes, *extra], "episode_confidences": per_episode,
        "confidence": evidence_confidence(per_episode, before.confidence)})
