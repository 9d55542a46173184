"""Build the cache: ``cache_url``, else ``redis_url``, else the embedded FalkorDB's redis-server."""

from __future__ import annotations

from knotwork.domain.ports import GraphStore, QueryCache
from knotwork.settings import Settings


def create_cache(settings: Settings, graph: GraphStore | None = None) -> QueryCache | None:
    """None when caching is off (``cache_enabled``) or no Redis is reachable by config."""
    if not settings.cache_enabled:
        return None
    from knotwork.infra.cache.redis_cache import CacheTTLs, RedisCache

    ttls = CacheTTLs(entity=settings.cache_ttl_entity_s, search=settings.cache_ttl_search_s,
                     subgraph=settings.cache_ttl_subgraph_s, community=settings.cache_ttl_community_s,
                     query=settings.cache_ttl_query_s)
    url = settings.cache_url or settings.redis_url
    if url:
        return RedisCache.from_url(url, prefix=settings.cache_prefix, ttls=ttls)
    from knotwork.infra.falkordb.store import FalkorGraphStore

    if isinstance(graph, FalkorGraphStore):
        return RedisCache.connect(graph.host, graph.port, username=graph.username,
                                  password=graph.password, prefix=settings.cache_prefix, ttls=ttls,
                                  options=graph.redis_options())
    return None
