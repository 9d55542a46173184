"""Structural facts: records a directory states (a workspace's member list), not sentences.

"Ondrej Vasko is a member of the Bluefin Labs workspace" answers where someone works and
nothing else: for other questions it is no sentence to quote, and a walk over the graph does
not cross it (it ties a company to every member: walked, it would bring in everyone's facts).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from knotwork.domain.models import FactHit, RelationType
from knotwork.domain.ports.graph import GraphStore
from knotwork.ingestion.extraction.workspace import ROSTER_METHOD


def structural_methods(asked: frozenset[RelationType] | set[RelationType]) -> frozenset[str]:
    """The extraction methods whose facts a question about ``asked`` relations leaves out."""
    return frozenset() if RelationType.WORKS_AT in asked else frozenset({ROSTER_METHOD})


def not_through(hits: list[FactHit], seeds: Sequence[str], methods: frozenset[str]) -> list[FactHit]:
    """The hits reached from the seeds without crossing a fact of ``methods``."""
    if not methods:
        return hits
    reached, kept = set(seeds), []
    for hop in sorted({h.hop for h in hits}):
        ends: set[str] = set()
        for hit in hits:
            fact = hit.fact
            if hit.hop != hop or fact.extraction_method in methods or not (
                    fact.source_id in reached or fact.target_id in reached):
                continue
            kept.append(hit)
            ends.update((fact.source_id, fact.target_id))
        reached |= ends
    return kept


def expand_past_records(graph: GraphStore, group_id: str, seeds: list[str], *, depth: int,
                        as_of: datetime | None, limit: int, methods: frozenset[str]) -> list[FactHit]:
    """``expand_facts`` from the seeds, less what only the records of ``methods`` reach; the
    records left out do not count against ``limit``."""
    hits = graph.expand_facts(group_id, seeds, depth=depth, as_of=as_of, limit=limit)
    skipped = sum(1 for h in hits if h.fact.extraction_method in methods)
    if skipped and len(hits) >= limit:
        hits = graph.expand_facts(group_id, seeds, depth=depth, as_of=as_of, limit=limit + skipped)
    return not_through(hits, seeds, methods)
