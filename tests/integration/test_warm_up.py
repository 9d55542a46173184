"""Start-up warm-up (``Knotwork.warm_up``, run by ``knotwork serve``) on the embedded stack:
real local searches about the tenant's own entities, bounded by the budget, nothing written,
never raising."""

from __future__ import annotations

import secrets

import pytest
import redis

from bench.synthetic_graph import generate, write
from knotwork import Knotwork
from knotwork.retrieval.warm_up import RANDOM_SEARCHES
from tests.conftest import SettingsFactory

pytestmark = [pytest.mark.integration, pytest.mark.models]
URL = "redis://127.0.0.1:6379/0"


def test_warm_up_runs_local_searches_within_its_budget_and_writes_nothing(
        make_settings: SettingsFactory) -> None:
    prefix = f"kwtest:{secrets.token_hex(4)}:"
    settings = make_settings(embedder="hashing", cache_enabled=True, cache_url=URL,
                             cache_prefix=prefix)
    client = redis.Redis.from_url(URL)
    with Knotwork(settings) as kw:
        group = settings.group
        graph, chunk_facts = generate(group, 300, 900)
        write(kw.runtime, group, graph, chunk_facts)
        try:
            counts = kw.runtime.graph.counts(group)
            nothing = kw.warm_up(0)
            assert nothing.queries == nothing.searches == 0
            spent = kw.warm_up(1e-9)  # the budget is spent before any search
            assert spent.queries == spent.searches == 0
            report = kw.warm_up(120)  # more than enough: every round, every entity found
            assert report.error is None and 10 <= report.queries <= 48, report
            assert report.searches == 4 * RANDOM_SEARCHES  # every collection, every round
            assert kw.runtime.graph.counts(group) == counts
            assert not list(client.scan_iter(match=f"{prefix}*"))  # no answer was cached
            kw.runtime.vectors.close()  # a store failing mid-warm-up ends it, quietly
            broken = kw.warm_up(120)
            assert broken.queries == 0 and broken.error and "closed" in broken.error
        finally:
            kw.runtime.graph.delete_group(group)
    client.close()
