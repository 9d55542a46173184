"""Query results cached in Redis (127.0.0.1:6379, own key prefix) on the embedded stack, and
invalidated by the design's triggers when the graph changes."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
import redis

from knotwork import Knotwork
from knotwork.domain.ports import CacheLayer
from knotwork.infra.falkordb.store import FalkorGraphStore
from knotwork.observability.tracing import unwrap
from tests.conftest import SettingsFactory
from tests.integration.test_search import IDS, _populate

pytestmark = [pytest.mark.integration, pytest.mark.models]
URL = "redis://127.0.0.1:6379/0"
QUESTION = "Who leads Project Atlas?"


@pytest.fixture
def kw(make_settings: SettingsFactory) -> Iterator[Knotwork]:
    prefix = f"kwtest:{secrets.token_hex(4)}:"
    settings = make_settings(embedder="hashing", cache_enabled=True, cache_url=URL, cache_prefix=prefix)
    with Knotwork(settings) as instance:
        _populate(instance.runtime, settings.group)
        yield instance
        instance.runtime.graph.delete_group(settings.group)
    client = redis.Redis.from_url(URL)
    keys = list(client.scan_iter(match=f"{prefix}*"))
    assert not keys, "delete_group clears the tenant's cache keys"
    client.close()


def test_query_results_are_cached_and_invalidated(kw: Knotwork) -> None:
    cache = kw.runtime.cache
    assert cache is not None
    assert isinstance(unwrap(kw.runtime.graph), FalkorGraphStore)  # the proxy keeps isinstance
    first = kw.query(QUESTION, mode="local")
    assert "Priya Raman" in first.answer
    assert cache.stats().misses == {"query": 1} and not cache.stats().hits
    again = kw.query(QUESTION, mode="local")
    assert again == first and cache.stats().hits == {"query": 1}
    other_tokens = kw.query(QUESTION, mode="local", max_context_tokens=500)
    assert cache.stats().misses["query"] == 2 and other_tokens.answer == first.answer

    # entity update → the cached answers go
    graph = kw.runtime.graph
    priya = graph.get_entities(kw.settings.group, [IDS["priya"]])[0]
    graph.upsert_entities([priya.model_copy(update={"summary": "Engineering manager."})])
    kw.query(QUESTION, mode="local")
    assert cache.stats().misses["query"] == 3

    # relationship update of an unrelated fact still drops query results (answers may change)
    kw.query(QUESTION, mode="local")
    hits = cache.stats().hits["query"]
    fact = graph.get_facts(kw.settings.group, [IDS["f_dep"]])[0]
    graph.upsert_facts([fact.model_copy(update={"confidence": 0.5})])
    kw.query(QUESTION, mode="local")
    assert cache.stats().hits["query"] == hits

    # community detection complete → community values and query results go
    cache.set(CacheLayer.COMMUNITY, kw.settings.group, "level-0", "[]")
    kw.query(QUESTION, mode="local")
    graph.replace_communities(kw.settings.group, [])
    assert cache.get(CacheLayer.COMMUNITY, kw.settings.group, "level-0") is None
    misses = cache.stats().misses["query"]
    kw.query(QUESTION, mode="local")
    assert cache.stats().misses["query"] == misses + 1


def test_seeded_local_answers_are_cached_per_seed_set(kw: Knotwork) -> None:
    """/v1/graphrag/local's seeds and depth go through the same cache: one seed set's answer
    is never served for another's."""
    cache = kw.runtime.cache
    assert cache is not None
    question = "What does it depend on?"
    atlas = kw.query(question, mode="local", seed_entity_ids=[IDS["atlas"]])
    priya = kw.query(question, mode="local", seed_entity_ids=[IDS["priya"]])
    assert cache.stats().misses == {"query": 2} and not cache.stats().hits
    assert "Billing Service" in atlas.answer and atlas != priya  # not the cached one
    assert priya.confidence < atlas.confidence  # Priya is two hops from the dependency
    again = kw.query(question, mode="local", seed_entity_ids=[IDS["atlas"], IDS["atlas"]])
    assert again == atlas and cache.stats().hits == {"query": 1}
    kw.query(question, mode="local", seed_entity_ids=[IDS["atlas"]], max_hops=1)
    assert cache.stats().misses["query"] == 3
    with pytest.raises(ValueError, match="LOCAL"):
        kw.query(question, mode="global", seed_entity_ids=[IDS["atlas"]])


def test_community_layer_dropped_when_detection_completes(kw: Knotwork) -> None:
    cache = kw.runtime.cache
    assert cache is not None
    group = kw.settings.group
    kw.build_communities()
    kw.query("What are the main themes?", mode="global")
    cached = cache.get(CacheLayer.COMMUNITY, group, "all")
    assert cached is not None and len(cached) > 2
    kw.query("What are the main themes of the projects?", mode="global")
    assert cache.stats().hits.get("community", 0) >= 1
    kw.build_communities()  # detection complete
    assert cache.get(CacheLayer.COMMUNITY, group, "all") is None


def test_search_layer_cached_and_dropped_on_entity_update(kw: Knotwork) -> None:
    from knotwork.retrieval.search import HybridSearch
    from knotwork.retrieval.search_config import SEARCH_PRESETS

    cache = kw.runtime.cache
    assert cache is not None
    search = HybridSearch(kw.runtime, kw.settings.group)
    first = search.search(QUESTION, SEARCH_PRESETS["combined_hybrid_rrf"])
    again = search.search(QUESTION, SEARCH_PRESETS["combined_hybrid_rrf"])
    assert cache.stats().hits.get("search") == 1
    assert [(s.item.id, s.score) for s in again.facts] == [(s.item.id, s.score) for s in first.facts]
    assert [s.item for s in again.chunks] == [s.item for s in first.chunks]
    atlas = kw.runtime.graph.get_entities(kw.settings.group, [IDS["atlas"]])[0]
    kw.runtime.graph.upsert_entities([atlas.model_copy(update={"aliases": ["Atlas"]})])
    search.search(QUESTION, SEARCH_PRESETS["combined_hybrid_rrf"])
    assert cache.stats().misses.get("search") == 2


def test_entity_layer_write_then_invalidate(kw: Knotwork) -> None:
    from knotwork.retrieval.graph_ops import GraphOps

    cache = kw.runtime.cache
    assert cache is not None
    ops = GraphOps(kw.runtime.graph, kw.settings.group, cache=cache)
    first = ops.traverse([IDS["priya"]], max_hops=1)
    assert len(first.entities) == 3  # priya, atlas, marcus (the invalidated membership not walked)
    # the seed is read (miss, stored) then reused; its two neighbours miss once
    assert cache.stats().misses["entity"] == 3 and cache.stats().hits["entity"] == 1
    ops.traverse([IDS["priya"]], max_hops=1)
    assert cache.stats().misses["entity"] == 3 and cache.stats().hits["entity"] == 1 + 4
    priya = kw.runtime.graph.get_entities(kw.settings.group, [IDS["priya"]])[0]
    kw.runtime.graph.upsert_entities([priya.model_copy(update={"summary": "Leads Atlas."})])
    after = ops.require([IDS["priya"]])[0]
    assert after.summary == "Leads Atlas." and first.entities[0].summary == ""
