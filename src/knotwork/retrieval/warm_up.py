"""Warm-up of a serving process, so the first user queries do not pay one-time costs.

A freshly opened process answers its first local queries several times slower than later
ones. Measured at 100k entities / 300k facts (qdrant-edge HNSW): a facts search costs ~40 ms
of CPU at first and falls to ~5 ms only after some 40 different queries, while after 300
searches with random vectors the very first real one costs 2 ms; the graph server's query
plans and the SQL connection are cold too. :func:`warm_up` therefore (1) runs vector searches
with random vectors, round-robin over the collections, for up to :data:`SEARCH_SHARE` of the
budget, then (2) real local searches (the same code path as a user's LOCAL query, minus the
query cache and the LLM: nothing is written) about the tenant's own entities, found by vector
search from a few probe questions, until the budget is spent. It never raises: a failure
only ends it.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

import structlog

from knotwork.domain.ports import Collection
from knotwork.retrieval.engine import QueryEngine
from knotwork.runtime import Runtime

log = structlog.get_logger(__name__)

PROBES = (
    "Who leads the project?",
    "Which team maintains the service?",
    "Who does the engineer report to?",
    "What does the system depend on?",
    "Where is the office located?",
    "What was decided about the launch?",
)
_NAMES_PER_PROBE = 8
RANDOM_SEARCHES = 300  # per collection, at most
SEARCH_SHARE = 0.6  # of the budget, at most, for the random-vector searches
_COLLECTIONS = (Collection.FACTS, Collection.CHUNKS, Collection.ENTITIES, Collection.COMMUNITIES)


@dataclass(frozen=True, slots=True)
class WarmUpReport:
    queries: int  # local searches run
    searches: int  # random-vector searches run (all collections)
    seconds: float
    error: str | None = None  # what ended it early, if anything


def warm_up(runtime: Runtime, group_id: str, budget_s: float) -> WarmUpReport:
    """Random-vector searches, then local searches about the tenant's entities, until
    ``budget_s`` is spent (the last step may overrun it by one query's time). ``budget_s``
    <= 0: nothing."""
    if budget_s <= 0:
        return WarmUpReport(0, 0, 0.0)
    started = time.monotonic()
    deadline = started + budget_s
    queries = searches = 0
    try:
        searches = _random_searches(runtime, group_id, started + SEARCH_SHARE * budget_s)
        vectors = runtime.embedder.embed(list(PROBES))
        names: list[str] = []
        for vector in vectors:
            hits = runtime.vectors.search(Collection.ENTITIES, vector, group_id=group_id,
                                          limit=_NAMES_PER_PROBE)
            names.extend(str(h.payload["name"]) for h in hits if h.payload.get("name"))
            if time.monotonic() >= deadline:
                break
        engine = QueryEngine(runtime, group_id)
        budget = runtime.settings.max_context_tokens
        for name in dict.fromkeys(names):
            if time.monotonic() >= deadline:
                break
            engine.local(f"What do we know about {name}?", as_of=None, max_context_tokens=budget)
            queries += 1
    except Exception as exc:  # noqa: BLE001 - a warm-up never stops a start-up
        error = f"{type(exc).__name__}: {exc}".splitlines()[0]
        log.warning("warm_up.failed", group=group_id, queries=queries, error=error)
        return WarmUpReport(queries, searches, round(time.monotonic() - started, 3), error)
    report = WarmUpReport(queries, searches, round(time.monotonic() - started, 3))
    log.info("warm_up.done", group=group_id, queries=report.queries, searches=searches,
             seconds=report.seconds)
    return report


def _random_searches(runtime: Runtime, group_id: str, deadline: float) -> int:
    """Searches with random (seeded) vectors, a round over every collection at a time,
    :data:`RANDOM_SEARCHES` rounds or until ``deadline``. Returns how many ran."""
    rng = random.Random(0)
    dimension = runtime.embedder.dimension
    done = 0
    for _ in range(RANDOM_SEARCHES):
        if time.monotonic() >= deadline:
            break
        vector = [rng.gauss(0.0, 1.0) for _ in range(dimension)]
        for collection in _COLLECTIONS:
            runtime.vectors.search(collection, vector, group_id=group_id, limit=20)
            done += 1
    return done
