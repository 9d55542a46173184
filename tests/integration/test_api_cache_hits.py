"""``/v1/graphrag/query`` answers query-cache hits on the event loop (``services/api/query_hits``)
with redis.asyncio: the same body as the computed answer, the same key as ``Knotwork.query``,
invalidation honoured, tenants and ACL views kept apart, auth and rate limits still applied.

Redis at 127.0.0.1:6379 (own key prefix), the embedded stack, the hashing embedder.
"""

from __future__ import annotations

import secrets
import socket
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from fastapi.testclient import TestClient

from knotwork import Knotwork
from knotwork.domain.auth import Scope
from knotwork.domain.models import Document, QueryMode, SourceSystem
from knotwork.domain.ports import CacheLayer, QueryCache
from knotwork.infra.cache.redis_cache import RedisCache
from knotwork.services.api.app import create_app
from knotwork.services.api.query_hits import HitBodies
from knotwork.settings import Settings
from tests.conftest import SettingsFactory
from tests.integration.test_search import IDS, NOW, _populate

pytestmark = [pytest.mark.integration, pytest.mark.models]
URL = "redis://127.0.0.1:6379/0"
QUESTION = "Who leads Project Atlas?"


@pytest.fixture
def kw(make_settings: SettingsFactory) -> Iterator[Knotwork]:
    prefix = f"kwtest:{secrets.token_hex(4)}:"
    settings = make_settings(embedder="hashing", cache_enabled=True, cache_url=URL,
                             cache_prefix=prefix, cache_hits_on_event_loop=True)
    with Knotwork(settings) as instance:
        _populate(instance.runtime, settings.group)
        yield instance
        instance.runtime.graph.delete_group(settings.group)
    client = redis.Redis.from_url(URL)
    leftover = list(client.scan_iter(match=f"{prefix}*"))
    client.delete(*leftover) if leftover else None
    client.close()


def _cache(kw: Knotwork) -> QueryCache:
    assert kw.runtime.cache is not None
    return kw.runtime.cache


def _hits(kw: Knotwork) -> int:
    return _cache(kw).stats().hits.get("query", 0)


def _misses(kw: Knotwork) -> int:
    return _cache(kw).stats().misses.get("query", 0)


def _ask(client: TestClient, headers: dict[str, str] | None = None, **body: Any) -> dict[str, Any]:
    response = client.post("/v1/graphrag/query", json={"query": QUESTION, "mode": "LOCAL", **body},
                           headers=headers or {})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    answer: dict[str, Any] = response.json()
    return answer


def _rendered(client: TestClient) -> int:
    bodies = client.app.state.hit_bodies  # type: ignore[attr-defined]
    assert isinstance(bodies, HitBodies)
    return len(bodies._items)


def test_a_hit_is_the_body_of_the_miss_for_every_rendering(kw: Knotwork) -> None:
    with TestClient(create_app(kw.settings, knotwork=kw)) as client:
        assert client.app.state.cache_reader is not None  # type: ignore[attr-defined]
        for options in ({}, {"include_context": True}, {"include_citations": False},
                        {"include_context": True, "include_citations": False}):
            _cache(kw).clear_group(kw.settings.group)
            misses, hits = _misses(kw), _hits(kw)
            computed = _ask(client, **options)
            assert "Priya Raman" in computed["answer"]
            assert (_misses(kw), _hits(kw)) == (misses + 1, hits)
            decoded = _ask(client, **options)  # the event loop's hit: decoded and rendered
            replayed = _ask(client, **options)  # the same text again: the kept body
            assert decoded == computed and replayed == computed, options
            assert (_misses(kw), _hits(kw)) == (misses + 1, hits + 2)
        assert _rendered(client) == 4  # one kept body per rendering of the one answer
        with_context = _ask(client, include_context=True)
        assert with_context["context"] and "context" not in _ask(client)
        assert _ask(client, include_citations=False)["citations"] == []


def test_the_key_is_the_one_knotwork_query_stores_under(kw: Knotwork) -> None:
    with TestClient(create_app(kw.settings, knotwork=kw)) as client:
        hits = _hits(kw)
        direct = kw.query(QUESTION, mode=QueryMode.LOCAL)  # cached by the Python API
        body = _ask(client, include_context=True)
        assert _hits(kw) == hits + 1 and _rendered(client) == 1  # answered on the event loop
        assert body["answer"] == direct.answer and body["context"] == direct.context
        # the question's own time is part of the key, as in Knotwork.query
        dated = "Who led Project Atlas in March 2025?"
        entry = kw.query_cache_key(dated, mode=QueryMode.LOCAL)
        assert entry is not None and "2025-03" in entry[1]
        kw.query(dated, mode=QueryMode.LOCAL)
        hits = _hits(kw)
        _ask(client, query=dated)
        assert _hits(kw) == hits + 1


def test_invalidation_reaches_the_event_loop_path(kw: Knotwork) -> None:
    graph = kw.runtime.graph
    group = kw.settings.group
    with TestClient(create_app(kw.settings, knotwork=kw)) as client:
        first = _ask(client)
        assert _ask(client) == first and _ask(client) == first
        lead = graph.get_facts(group, [IDS["f_lead"]])[0]
        graph.upsert_facts([lead.model_copy(update={"fact": "Priya Raman leads Project Atlas "
                                                            "from the Lisbon office."})])
        assert _cache(kw).get(CacheLayer.QUERY, group, kw.query_cache_key(  # dropped
            QUESTION, mode=QueryMode.LOCAL)[1]) is None  # type: ignore[index]
        misses = _misses(kw)
        after = _ask(client)
        assert _misses(kw) == misses + 1  # computed again, not the kept body
        assert "Lisbon" in after["answer"] and after != first
        assert _ask(client) == after  # and the new answer is a hit in its turn


def test_tenants_and_acl_views_never_share_a_hit(kw: Knotwork) -> None:
    group = kw.settings.group
    other = f"{group}_b"
    entry = kw.query_cache_key(QUESTION, mode=QueryMode.LOCAL)
    assert entry is not None and entry[0] == group
    assert kw.query_cache_key(QUESTION, other, mode=QueryMode.LOCAL) == (other, entry[1])
    assert kw.for_tenant(other).query_cache_key(QUESTION, mode=QueryMode.LOCAL) == (other, entry[1])
    # a restricted document makes a reader's view ACL-filtered: it caches nothing
    kw.runtime.documents.save_document(Document(
        id=IDS["d1"] + "-acl", group_id=group, source_system=SourceSystem.FILE, source_id="secret",
        title="secret", content_hash="secret", created_at=NOW, acl=["user:ceo@acme.com"]), [])
    assert kw.for_reader(group, ["user:bob@acme.com"]).query_cache_key(QUESTION) is None
    assert kw.for_reader(group, ["user:ceo@acme.com"]).query_cache_key(QUESTION) is not None
    keys = kw.runtime.documents.api_keys()
    admin = {"Authorization": f"Bearer {keys.create('admin', [Scope.ADMIN, Scope.QUERY]).secret}"}
    bob = {"Authorization": "Bearer " + keys.create("bob", [Scope.QUERY],
                                                    principals=["user:bob@acme.com"]).secret}
    with TestClient(create_app(kw.settings, knotwork=kw)) as client:
        shared = _ask(client, headers=admin)
        assert _ask(client, headers=admin) == shared
        hits, rendered = _hits(kw), _rendered(client)
        _ask(client, headers=bob)  # the ACL view: answered in a thread, never from the cache
        _ask(client, headers=bob)
        assert (_hits(kw), _rendered(client)) == (hits, rendered)
        misses = _misses(kw)
        elsewhere = _ask(client, headers=admin, group_id=other)  # an empty tenant: its own miss
        assert _misses(kw) == misses + 1 and "Priya Raman" not in elsewhere["answer"]
        assert _ask(client, headers=admin, group_id=other) == elsewhere


def test_auth_and_rate_limits_apply_to_hits(kw: Knotwork) -> None:
    keys = kw.runtime.documents.api_keys()
    limited = keys.create("limited", [Scope.QUERY], rate_limit_per_minute=3).secret
    headers = {"Authorization": f"Bearer {limited}"}
    with TestClient(create_app(kw.settings, knotwork=kw)) as client:
        first = _ask(client, headers=headers)
        assert _ask(client, headers=headers) == first and _ask(client, headers=headers) == first
        hits = _hits(kw)
        over = client.post("/v1/graphrag/query", json={"query": QUESTION, "mode": "LOCAL"},
                           headers=headers)
        assert over.status_code == 429 and "Retry-After" in over.headers
        anonymous = client.post("/v1/graphrag/query", json={"query": QUESTION, "mode": "LOCAL"})
        assert anonymous.status_code == 401
        assert _hits(kw) == hits  # refused before the cache was read


def test_the_event_loop_path_can_be_turned_off(kw: Knotwork) -> None:
    settings = kw.settings.model_copy(update={"cache_hits_on_event_loop": False})
    assert Settings().cache_hits_on_event_loop is True  # the default: hits on the event loop
    with TestClient(create_app(settings, knotwork=kw)) as client:
        assert client.app.state.cache_reader is None  # type: ignore[attr-defined]
        first = _ask(client)
        hits = _hits(kw)
        assert _ask(client) == first  # a hit all the same, read in the worker thread
        assert _hits(kw) == hits + 1 and _rendered(client) == 0


def test_a_failing_event_loop_read_falls_back_and_pauses(kw: Knotwork) -> None:
    with socket.socket() as s:  # a port nobody listens on: the event loop's Redis is down
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    broken = RedisCache.connect("127.0.0.1", dead).async_reader()
    assert broken is not None
    with TestClient(create_app(kw.settings, knotwork=kw)) as client:
        first = _ask(client)
        client.app.state.cache_reader = broken  # type: ignore[attr-defined]
        hits = _hits(kw)
        assert _ask(client) == first  # answered all the same: the worker thread's hit
        assert _hits(kw) == hits + 1 and broken.paused
        assert _ask(client) == first and _hits(kw) == hits + 2  # paused: straight to the thread
