"""Incremental upkeep after new episodes (design doc 000, phase 8), as pure functions.

A new entity joins the modal community of its neighbours; the communities of every entity a
new or changed fact touches (and their ancestors) become stale; past a threshold share of the
graph changed since the last build, a full re-detection is due instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence


def modal_community(neighbours: Iterable[tuple[str, float]]) -> str | None:
    """The most frequent community among (community id, edge weight) of the neighbour edges.

    Ties: larger summed weight, then the smaller id. ``None`` without neighbours.
    """
    counts: Counter[str] = Counter()
    weights: dict[str, float] = {}
    for community, weight in neighbours:
        counts[community] += 1
        weights[community] = weights.get(community, 0.0) + weight
    if not counts:
        return None
    return min(counts, key=lambda c: (-counts[c], -weights[c], c))


def assign_new_entities(
    new_ids: Sequence[str],
    adjacency: Mapping[str, Sequence[tuple[str, float]]],
    community_of: Mapping[str, str],
) -> dict[str, str]:
    """Assign each new entity to the modal leaf community of its neighbours.

    Rounds repeat so a new entity linked only to other new entities joins once they have
    joined; entities with no assigned neighbour at all stay unassigned.
    """
    known = dict(community_of)
    assigned: dict[str, str] = {}
    pending = [e for e in sorted(set(new_ids)) if e not in known]
    while pending:
        decided: dict[str, str] = {}
        for entity in pending:
            choice = modal_community((known[n], w) for n, w in adjacency.get(entity, ())
                                     if n in known)
            if choice is not None:
                decided[entity] = choice
        if not decided:
            break
        known.update(decided)  # a round sees only the previous rounds: order-independent
        assigned.update(decided)
        pending = [e for e in pending if e not in decided]
    return assigned


def with_ancestors(community_ids: Iterable[str],
                   parent_of: Callable[[str], str | None]) -> list[str]:
    """The communities and all their ancestors, each once, sorted."""
    out: set[str] = set()
    for community in community_ids:
        current: str | None = community
        while current is not None and current not in out:
            out.add(current)
            current = parent_of(current)
    return sorted(out)


def stale_communities(touched_entities: Iterable[str], leaf_of: Mapping[str, str],
                      parent_of: Callable[[str], str | None]) -> list[str]:
    """Leaf communities of the touched entities, plus their ancestors."""
    leaves = {leaf_of[e] for e in touched_entities if e in leaf_of}
    return with_ancestors(leaves, parent_of)


def needs_rebuild(changed: int, total: int, threshold: float) -> bool:
    """True when ``changed / total`` exceeds the threshold (always for an empty base)."""
    if total <= 0:
        return changed > 0
    return changed / total > threshold
