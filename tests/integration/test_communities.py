"""Communities end to end through ``Knotwork``: the bundled sample data is ingested, communities
built and stored (graph + vector store), then new episodes keep them up to date."""

from __future__ import annotations

import dataclasses
import secrets
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

import knotwork
from knotwork.core import Knotwork
from knotwork.domain.events import COMMUNITY_TOPIC, CommunitiesRebuilt, CommunityUpdated
from knotwork.domain.models import Community, EntityType
from knotwork.domain.ports import Collection
from knotwork.settings import EmbedderBackend, Settings

pytestmark = [pytest.mark.integration, pytest.mark.models]

SAMPLE_DATA = Path(knotwork.__file__).parent / "sample_data"
MAX_SIZE = 5
WHEN = datetime(2025, 3, 20, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def kw(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> Iterator[Knotwork]:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("communities"), group=f"com_{secrets.token_hex(4)}",
        falkordb_url=falkordb_url, embedder=EmbedderBackend.HASHING,
        community_max_size=MAX_SIZE, queue_prefix=f"kwtest:{secrets.token_hex(6)}:")
    with Knotwork(settings) as instance:
        instance.ingest_path(SAMPLE_DATA)
        instance.build_communities()
        try:
            yield instance
        finally:
            instance.runtime.events.delete_topic(COMMUNITY_TOPIC)
            instance.runtime.graph.delete_group(settings.group)


def _snapshot(kw: Knotwork) -> dict[str, Community]:
    return {c.id: c for c in kw.communities().communities()}


def _episode_facts(kw: Knotwork, episode_id: str) -> list[str]:
    facts = kw.runtime.graph.list_facts(kw.settings.group)
    return sorted({e for f in facts if episode_id in f.episodes for e in (f.source_id, f.target_id)})


def _entity_id(kw: Knotwork, name: str) -> str:
    [entity] = [e for e in kw.runtime.graph.list_entities(kw.settings.group) if e.name == name]
    return entity.id


def _with_ancestors(snapshot: dict[str, Community], ids: set[str]) -> set[str]:
    out: set[str] = set()
    for cid in ids:
        current: str | None = cid
        while current is not None:
            out.add(current)
            current = snapshot[current].parent_id
    return out


def test_build_stores_the_hierarchy_in_the_graph_and_the_vector_store(kw: Knotwork) -> None:
    group = kw.settings.group
    communities = kw.communities().communities()
    state = kw.runtime.graph.get_community_state(group)
    assert state is not None and state.community_count == len(communities) > 3
    assert state.levels >= 2  # max size 5 forces a refinement on the sample graph
    by_id = {c.id: c for c in communities}
    leaves = [c for c in communities if c.level == 0]
    roots = [c for c in communities if c.parent_id is None]
    assert all(len(c.entity_ids) <= MAX_SIZE for c in leaves)
    members = sorted(e for c in leaves for e in c.entity_ids)
    assert members == sorted(e for c in roots for e in c.entity_ids)
    assert len(members) == len(set(members)) == state.entity_count
    for c in communities:
        assert c.name and c.summary and c.key_facts and c.citations and not c.summary_stale
        if c.parent_id:
            assert c.id in by_id[c.parent_id].child_ids
    # HAS_MEMBER edges answer "which community is this entity in"
    priya = _entity_id(kw, "Priya Raman")
    leaf = kw.runtime.graph.community_of(group, [priya])[priya]
    assert priya in by_id[leaf].entity_ids and by_id[leaf].level == 0
    # one summary embedding per community, searchable, with level and entity_count
    vectors = kw.runtime.vectors
    assert vectors.count(Collection.COMMUNITIES, group) == len(communities)
    target = by_id[leaf]
    [query] = kw.runtime.embedder.embed([f"{target.name}\n{target.summary}"])
    [hit] = vectors.search(Collection.COMMUNITIES, query, group_id=group, limit=1)
    assert hit.id == target.id
    assert hit.payload["level"] == 0 and hit.payload["entity_count"] == target.entity_count


def test_rebuild_is_deterministic(kw: Knotwork) -> None:
    before = {c.id: c.entity_ids for c in kw.communities().communities()}
    kw.build_communities()
    assert {c.id: c.entity_ids for c in kw.communities().communities()} == before


def test_a_new_episode_marks_its_community_stale_and_only_it_is_resummarized(
        kw: Knotwork) -> None:
    before = _snapshot(kw)
    group = kw.settings.group
    # two people of one leaf community (the sample graph decides who)
    people = {e.id: e.name for e in kw.runtime.graph.list_entities(group)
              if e.type is EntityType.PERSON and len(e.name.split()) >= 2}
    a, b = next(pair for c in sorted(before.values(), key=lambda c: c.id) if c.level == 0
                for pair in [[i for i in sorted(c.entity_ids) if i in people][:2]]
                if len(pair) == 2)
    leaf = kw.runtime.graph.community_of(group, [a, b])
    assert leaf[a] == leaf[b]
    result = kw.add_episode(f"{people[a]} collaborated with {people[b]} on the runbook.",
                            reference_time=WHEN)
    touched = _episode_facts(kw, result.episode_ids[0])
    assert {a, b} <= set(touched)
    expected = _with_ancestors(before, {leaf[e] for e in touched})
    assert leaf[a] in expected and len(expected) < len(before)
    after = _snapshot(kw)
    assert after.keys() == before.keys()
    resummarized = {cid for cid in after
                    if after[cid].summary_version != before[cid].summary_version}
    assert resummarized == expected
    for cid in resummarized:
        assert after[cid].summary_version == before[cid].summary_version + 1
        assert not after[cid].summary_stale
    for cid in set(after) - resummarized:
        assert after[cid] == before[cid]
    assert "collaboration" in after[leaf[a]].key_topics


def test_a_new_entity_joins_the_modal_community_of_its_neighbours(kw: Knotwork) -> None:
    group = kw.settings.group
    team, priya = _entity_id(kw, "Atlas Team"), _entity_id(kw, "Priya Raman")
    leaf = kw.runtime.graph.community_of(group, [team, priya])
    assert leaf[team] == leaf[priya]
    before = _snapshot(kw)
    kw.add_episode("Maya Patel is a member of the Atlas Team. Maya Patel reports to Priya Raman.",
                   reference_time=WHEN)
    maya = _entity_id(kw, "Maya Patel")
    assert kw.runtime.graph.community_of(group, [maya]) == {maya: leaf[team]}
    after = _snapshot(kw)
    joined = _with_ancestors(before, {leaf[team]})
    for cid in joined:
        assert maya in after[cid].entity_ids
        assert after[cid].entity_count == before[cid].entity_count + 1
    assert all(maya not in c.entity_ids for cid, c in after.items() if cid not in joined)


def test_deferred_summaries_publish_events_and_refresh_only_stale(kw: Knotwork) -> None:
    settings = kw.settings.model_copy(update={"community_inline_summaries": False})
    deferred = Knotwork(runtime=dataclasses.replace(kw.runtime, settings=settings))
    queue = kw.runtime.events
    consumer_group = f"test_{secrets.token_hex(3)}"
    queue.consume(COMMUNITY_TOPIC, consumer_group, "t", count=10_000)  # skip older events
    before = _snapshot(kw)
    kenji = _entity_id(kw, "Kenji Watanabe")
    result = deferred.add_episode("Kenji Watanabe uses PostgreSQL every day.", reference_time=WHEN)
    touched = _episode_facts(deferred, result.episode_ids[0])
    assert kenji in touched
    stale = {c.id for c in deferred.communities().communities() if c.summary_stale}
    leaf_of = kw.runtime.graph.community_of(kw.settings.group, touched)
    assert stale == _with_ancestors(before, set(leaf_of.values()))
    assert deferred.communities().status().stale == len(stale)
    events = [d.event for d in queue.consume(COMMUNITY_TOPIC, consumer_group, "t", count=100)]
    updates = [e for e in events if isinstance(e, CommunityUpdated)]
    assert {e.community_id for e in updates} == stale
    assert all(e.summary_stale and e.group_id == kw.settings.group for e in updates)

    refreshed = deferred.communities().refresh()
    assert set(refreshed) == stale
    after = _snapshot(kw)
    assert {cid for cid in after if after[cid].summary_version != before[cid].summary_version} \
        == stale
    assert not any(c.summary_stale for c in after.values())
    done = [d.event for d in queue.consume(COMMUNITY_TOPIC, consumer_group, "t", count=100)]
    assert {e.community_id for e in done if isinstance(e, CommunityUpdated)
            and not e.summary_stale} == stale
    assert deferred.communities().refresh() == []


def test_past_the_threshold_a_full_rebuild_happens(kw: Knotwork) -> None:
    settings = kw.settings.model_copy(update={"community_rebuild_threshold": 0.0})
    strict = Knotwork(runtime=dataclasses.replace(kw.runtime, settings=settings))
    queue = kw.runtime.events
    consumer_group = f"test_{secrets.token_hex(3)}"
    queue.consume(COMMUNITY_TOPIC, consumer_group, "t", count=10_000)
    strict.add_episode("Alice Chen collaborated with Kenji Watanabe on Kafka.", reference_time=WHEN)
    state = kw.runtime.graph.get_community_state(kw.settings.group)
    assert state is not None and state.changed_entities == state.changed_facts == 0
    assert not any(c.summary_stale for c in kw.communities().communities())
    events = [d.event for d in queue.consume(COMMUNITY_TOPIC, consumer_group, "t", count=100)]
    assert any(isinstance(e, CommunitiesRebuilt) for e in events)


def test_nothing_happens_before_the_first_build(kw: Knotwork) -> None:
    other = f"pre_{secrets.token_hex(4)}"
    try:
        kw.add_episode("Priya Raman leads Project Atlas.", group_id=other, reference_time=WHEN)
        assert kw.runtime.graph.counts(other).facts >= 1
        assert kw.communities(other).communities() == []
        assert kw.communities(other).status().built is False
        assert kw.latest_report(other) is None
    finally:
        kw.runtime.graph.delete_group(other)


def test_report_files_and_changes_since_the_last_one(kw: Knotwork, tmp_path: Path) -> None:
    first, paths = kw.write_report(tmp_path / "r1")
    assert set(paths) == {"html", "markdown", "map", "json"}
    html = paths["html"].read_text()
    assert "<svg" in html
    assert not any(tag in html for tag in ("<script", "<link", "src=", "@import"))  # self-contained
    assert first.communities and first.communities[0].facts[0].citations
    kw.add_episode("Omar Haddad is a member of the Platform Team.", reference_time=WHEN)
    second, paths = kw.write_report(tmp_path / "r2", level=0)
    assert second.changes.since == first.generated_at
    assert "Omar Haddad" in [e.name for e in second.changes.new_entities]
    assert "Omar Haddad" in paths["markdown"].read_text()
    assert second.level == 0 and second.community_count >= first.community_count
    assert kw.latest_report() == second


def test_rest_endpoints(kw: Knotwork) -> None:
    from knotwork.services.api.app import create_app

    app = create_app(kw.settings)
    app.router.lifespan_context = _reuse(kw)  # the module's Knotwork: one process, one vector dir
    with TestClient(app) as client:
        listed = client.get("/v1/communities").json()["communities"]
        assert listed and "entity_ids" not in listed[0]
        level0 = client.get("/v1/communities", params={"level": 0, "include_members": True})
        assert all(c["level"] == 0 and c["entity_ids"] for c in level0.json()["communities"])
        one = client.get(f"/v1/communities/{listed[0]['id']}").json()
        assert one["community"]["id"] == listed[0]["id"] and one["entities"]
        missing = client.get("/v1/communities/nope")
        assert missing.status_code == 404
        assert missing.headers["content-type"].startswith("application/problem+json")
        assert client.get("/v1/communities", params={"group_id": "bad id"}).status_code == 422
        page = client.get("/v1/reports/latest")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "<svg" in page.text
        data = client.get("/v1/reports/latest", params={"format": "json"}).json()
        assert data["group_id"] == kw.settings.group and data["communities"]
        assert client.get("/v1/reports/latest", params={"format": "pdf"}).status_code == 422
        none = client.get("/v1/reports/latest", params={"group_id": "nobody_here"})
        assert none.status_code == 404 and none.json()["status"] == 404


def _reuse(kw: Knotwork) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.knotwork = kw
        app.state.write_lock = threading.Lock()
        yield

    return lifespan
