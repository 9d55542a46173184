"""The QueryCache port on a real Redis (127.0.0.1:6379), each test under its own key prefix."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator

import pytest
import redis

from knotwork.domain.ports import CacheLayer, QueryCache
from knotwork.infra.cache.redis_cache import CacheTTLs, RedisCache

pytestmark = [pytest.mark.integration]
URL = "redis://127.0.0.1:6379/0"


@pytest.fixture
def prefix() -> Iterator[str]:
    value = f"kwtest:{secrets.token_hex(4)}:"
    yield value
    client = redis.Redis.from_url(URL)
    keys = list(client.scan_iter(match=f"{value}*"))
    if keys:
        client.delete(*keys)
    client.close()


@pytest.fixture
def cache(prefix: str) -> Iterator[RedisCache]:
    c = RedisCache.from_url(URL, prefix=prefix)
    yield c
    c.close()


def test_round_trip_ttls_and_tenant_keys(cache: RedisCache, prefix: str) -> None:
    assert isinstance(cache, QueryCache)
    assert cache.get(CacheLayer.QUERY, "t1", "q") is None
    cache.set(CacheLayer.QUERY, "t1", "q", '{"answer": 1}')
    assert cache.get(CacheLayer.QUERY, "t1", "q") == '{"answer": 1}'
    assert cache.get(CacheLayer.QUERY, "t2", "q") is None  # another tenant
    assert cache.get(CacheLayer.SEARCH, "t1", "q") is None  # another layer
    client = redis.Redis.from_url(URL)
    for layer, ttl in [(CacheLayer.ENTITY, 3600), (CacheLayer.SEARCH, 900), (CacheLayer.SUBGRAPH, 300),
                       (CacheLayer.COMMUNITY, 86_400), (CacheLayer.QUERY, 300)]:
        cache.set(layer, "t1", "k", "v")
        key = cache.key(layer, "t1", "k")
        assert key.startswith(f"{prefix}t1:{layer.value}:")
        assert ttl - 5 <= client.ttl(key) <= ttl
    client.close()
    stats = cache.stats()
    assert stats.hits == {"query": 1} and stats.misses == {"query": 2, "search": 1}
    assert stats.hit_rate("query") == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="group"):
        cache.get(CacheLayer.QUERY, "bad*group", "q")


def test_entity_update_invalidates_what_contains_it(cache: RedisCache) -> None:
    cache.set(CacheLayer.ENTITY, "t1", "e1", "entity one")
    cache.set(CacheLayer.ENTITY, "t1", "e2", "entity two")
    cache.set(CacheLayer.SEARCH, "t1", "alice", "[e1]", entity_ids=["e1"])
    cache.set(CacheLayer.SUBGRAPH, "t1", "e1+e2", "{}", entity_ids=["e1", "e2"])
    cache.set(CacheLayer.QUERY, "t1", "who", "answer", entity_ids=["e2"])
    cache.set(CacheLayer.QUERY, "t2", "who", "other tenant", entity_ids=["e1"])
    assert cache.invalidate_entities("t1", ["e1"]) == 3  # entity:e1, the search, the subgraph
    assert cache.get(CacheLayer.ENTITY, "t1", "e1") is None
    assert cache.get(CacheLayer.SEARCH, "t1", "alice") is None
    assert cache.get(CacheLayer.SUBGRAPH, "t1", "e1+e2") is None
    assert cache.get(CacheLayer.ENTITY, "t1", "e2") == "entity two"
    assert cache.get(CacheLayer.QUERY, "t1", "who") == "answer"
    assert cache.get(CacheLayer.QUERY, "t2", "who") == "other tenant"
    assert cache.invalidate_entities("t1", []) == 0


def test_layer_and_group_invalidation(cache: RedisCache) -> None:
    for n in range(3):
        cache.set(CacheLayer.COMMUNITY, "t1", f"c{n}", "summary")
    cache.set(CacheLayer.QUERY, "t1", "q", "a")
    cache.set(CacheLayer.COMMUNITY, "t2", "c0", "summary")
    assert cache.invalidate_layer("t1", CacheLayer.COMMUNITY) == 3
    assert cache.get(CacheLayer.QUERY, "t1", "q") == "a"
    assert cache.get(CacheLayer.COMMUNITY, "t2", "c0") == "summary"
    assert cache.clear_group("t1") >= 1
    assert cache.get(CacheLayer.QUERY, "t1", "q") is None


def test_values_expire(prefix: str) -> None:
    short = RedisCache.from_url(URL, prefix=prefix, ttls=CacheTTLs(query=1))
    short.set(CacheLayer.QUERY, "t1", "q", "a")
    assert short.get(CacheLayer.QUERY, "t1", "q") == "a"
    time.sleep(2.1)
    assert short.get(CacheLayer.QUERY, "t1", "q") is None
    short.close()


def test_get_many_counts_each_lookup(cache: RedisCache) -> None:
    cache.set(CacheLayer.ENTITY, "t1", "e1", "one")
    assert cache.get_many(CacheLayer.ENTITY, "t1", ["e1", "e2"]) == ["one", None]
    assert cache.get_many(CacheLayer.ENTITY, "t1", []) == []
    assert cache.stats().hits == {"entity": 1} and cache.stats().misses == {"entity": 1}
