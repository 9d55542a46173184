"""Warm-up of a serving process, so the first user queries do not pay one-time costs.

A freshly opened process answers its first local queries several times slower than later
ones: the vector engine's index and payload pages, the graph server's query plans and the
SQL connection's page cache are touched for the first time. :func:`warm_up` runs real local
searches (the same code path as a user's LOCAL query, minus the query cache and the LLM:
nothing is written) about the tenant's own entities, found by vector search from a few
probe questions, until a time budget is spent. It never raises: a failure only ends it.
"""

from __future__ import annotations

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


@dataclass(frozen=True, slots=True)
class WarmUpReport:
    queries: int  # local searches run
    seconds: float
    error: str | None = None  # what ended it early, if anything


def warm_up(runtime: Runtime, group_id: str, budget_s: float) -> WarmUpReport:
    """Local searches about the tenant's entities until ``budget_s`` is spent (the last one
    may overrun it by one query's time). ``budget_s`` <= 0: nothing."""
    if budget_s <= 0:
        return WarmUpReport(0, 0.0)
    started = time.monotonic()
    deadline = started + budget_s
    queries = 0
    try:
        vectors = runtime.embedder.embed(list(PROBES))
        names: list[str] = []
        for vector in vectors:
            for collection in (Collection.FACTS, Collection.CHUNKS, Collection.COMMUNITIES):
                runtime.vectors.search(collection, vector, group_id=group_id, limit=12)
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
        return WarmUpReport(queries, round(time.monotonic() - started, 3), error)
    report = WarmUpReport(queries, round(time.monotonic() - started, 3))
    log.info("warm_up.done", group=group_id, queries=report.queries, seconds=report.seconds)
    return report
