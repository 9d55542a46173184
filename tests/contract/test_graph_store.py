"""One contract for every GraphStore adapter: embedded FalkorDB always, Neo4j when configured.

Neo4j runs only with KNOTWORK_NEO4J_URI (and KNOTWORK_NEO4J_USER / _PASSWORD / _DATABASE).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from knotwork.domain.models import (
    Community,
    CommunityState,
    Entity,
    EntityType,
    Episode,
    Fact,
    FactHit,
    RelationType,
)
from knotwork.domain.ports import GraphStore

T0 = datetime(2024, 3, 1, 12, 0, 0, tzinfo=UTC)


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module", params=["falkordb", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GraphStore]:
    if request.param == "falkordb":
        from knotwork.infra.falkordb.server import EmbeddedFalkorDB
        from knotwork.infra.falkordb.store import FalkorGraphStore

        server = EmbeddedFalkorDB(tmp_path_factory.mktemp("falkordb")).start()
        graph: GraphStore = FalkorGraphStore(server.host, server.port, server=server)
    else:
        uri = os.environ.get("KNOTWORK_NEO4J_URI")
        if not uri:
            pytest.skip("KNOTWORK_NEO4J_URI not set")
        from knotwork.infra.neo4j.store import Neo4jGraphStore

        graph = Neo4jGraphStore(
            uri,
            os.environ.get("KNOTWORK_NEO4J_USER", "neo4j"),
            os.environ.get("KNOTWORK_NEO4J_PASSWORD", "neo4j"),
            os.environ.get("KNOTWORK_NEO4J_DATABASE", "neo4j"),
        )
    assert isinstance(graph, GraphStore)
    yield graph
    graph.close()


def _new_group() -> str:
    return "t_" + uuid.uuid4().hex[:16]


@pytest.fixture()
def group(store: GraphStore) -> Iterator[str]:
    gid = _new_group()
    store.ensure_schema(gid)
    yield gid
    store.delete_group(gid)


@pytest.fixture()
def other_group(store: GraphStore) -> Iterator[str]:
    gid = _new_group()
    yield gid
    store.delete_group(gid)


# --------------------------------------------------------------------------- builders


def ent(
    group: str, key: str, *, name: str | None = None, aliases: list[str] | None = None, **kw: object
) -> Entity:
    name = name or key.title()
    aliases = aliases or []
    data: dict[str, object] = {
        "id": f"ent-{key}",
        "group_id": group,
        "name": name,
        "canonical_name": name.lower(),
        "type": EntityType.PERSON,
        "aliases": aliases,
        "name_keys": [name.lower(), *(a.lower() for a in aliases)],
        "created_at": T0,
        "updated_at": T0,
    }
    data.update(kw)
    return Entity.model_validate(data)


def fact(group: str, key: str, src: str, dst: str, **kw: object) -> Fact:
    data: dict[str, object] = {
        "id": f"fact-{key}",
        "group_id": group,
        "source_id": f"ent-{src}",
        "target_id": f"ent-{dst}",
        "type": RelationType.RELATED_TO,
        "fact": f"{src} relates to {dst}",
        "created_at": T0,
    }
    data.update(kw)
    return Fact.model_validate(data)


def episode(group: str, key: str, **kw: object) -> Episode:
    data: dict[str, object] = {
        "id": f"ep-{key}",
        "group_id": group,
        "name": f"chunk {key}",
        "content": f"content of {key}",
        "document_id": "doc-1",
        "valid_at": T0,
        "created_at": T0,
    }
    data.update(kw)
    return Episode.model_validate(data)


def hops(hits: list[FactHit]) -> dict[str, int]:
    return {hit.fact.id: hit.hop for hit in hits}


def at(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


# --------------------------------------------------------------------------- tests


def test_ensure_schema_is_idempotent(store: GraphStore, group: str) -> None:
    store.ensure_schema(group)
    store.ensure_schema(group)


def test_upserts_are_idempotent(store: GraphStore, group: str) -> None:
    entities = [ent(group, k) for k in ("alice", "bob", "acme")]
    facts = [fact(group, "1", "alice", "acme"), fact(group, "2", "bob", "acme")]
    episodes = [episode(group, "1"), episode(group, "2")]
    mentions = [("ep-1", "ent-alice"), ("ep-1", "ent-acme"), ("ep-2", "ent-bob")]
    for _ in range(2):
        store.upsert_entities(entities)
        store.upsert_episodes(episodes)
        store.upsert_mentions(group, mentions)
        store.upsert_facts(facts)
        counts = store.counts(group)
        assert (counts.entities, counts.facts, counts.episodes, counts.mentions) == (3, 2, 2, 3)


def test_empty_inputs_are_no_ops(store: GraphStore, group: str) -> None:
    store.upsert_entities([])
    store.upsert_facts([])
    store.upsert_episodes([])
    store.upsert_mentions(group, [])
    assert store.get_entities(group, []) == []
    assert store.get_facts(group, []) == []
    assert store.get_episodes(group, []) == []
    assert store.find_entities_by_keys(group, []) == []
    assert store.facts_between(group, []) == []
    assert store.expand_facts(group, []) == []
    assert store.counts(group).entities == 0


def test_round_trip_equality(store: GraphStore, group: str) -> None:
    tricky = "Quote \" back\\slash \\ new\nline\ttab \u00e9\u4e2d \U0001f600 'single' $x {y}"
    plus2 = timezone(timedelta(hours=2))
    e1 = ent(
        group,
        "alice",
        name="Alice Chen",
        aliases=["A. Chen", "Ali"],
        subtype="ENGINEER",
        summary=tricky,
        confidence=0.875,
        evidence_count=7,
        created_at=datetime(2024, 5, 6, 9, 10, 11, 987654, tzinfo=plus2),
        updated_at=datetime(2024, 5, 7, 9, 10, 11, tzinfo=UTC),
    )
    e2 = ent(group, "acme", name="Acme", type=EntityType.ORGANIZATION, aliases=[])
    f1 = fact(
        group,
        "1",
        "alice",
        "acme",
        type=RelationType.WORKS_AT,
        fact=tricky,
        confidence=0.5,
        episodes=["ep-1", "ep-2"],
        valid_at=at(2020),
        invalid_at=at(2023),
        expired_at=at(2023) + timedelta(seconds=5),
        extraction_method="llm",
    )
    f2 = fact(group, "2", "acme", "alice")  # all optional times null
    ep = episode(
        group,
        "1",
        content=tricky,
        source="message",
        source_description="slack #x",
        valid_at=datetime(2024, 1, 2, 3, 4, 5, 600000, tzinfo=UTC),
    )
    store.upsert_entities([e1, e2])
    store.upsert_facts([f1, f2])
    store.upsert_episodes([ep])

    def trunc(value: datetime) -> datetime:
        return value.astimezone(UTC).replace(microsecond=0)

    e1_expected = e1.model_copy(update={"created_at": trunc(e1.created_at)})
    assert store.list_entities(group) == sorted([e1_expected, e2], key=lambda e: e.id)
    assert store.list_facts(group) == [f1, f2]
    assert store.get_facts(group, ["fact-2", "fact-1", "missing"]) == [f2, f1]
    assert store.get_entities(group, ["ent-alice"])[0].created_at == datetime(
        2024, 5, 6, 7, 10, 11, tzinfo=UTC
    )
    ep_expected = ep.model_copy(update={"valid_at": trunc(ep.valid_at)})
    assert store.get_episodes(group, ["ep-1", "nope"]) == [ep_expected]


def test_reupsert_replaces_properties(store: GraphStore, group: str) -> None:
    store.upsert_entities([ent(group, "alice", summary="old", subtype="X")])
    store.upsert_entities([ent(group, "alice", summary="new", subtype=None)])
    [found] = store.get_entities(group, ["ent-alice"])
    assert (found.summary, found.subtype) == ("new", None)


def test_text_any_client_can_send_is_stored(store: GraphStore, group: str) -> None:
    # NUL and lone surrogates (valid in JSON strings) must not break a write or a read
    store.upsert_entities([ent(group, "odd", name="Odd\x00 Name", summary="half \ud83d pair")])
    [found] = store.get_entities(group, ["ent-odd"])
    assert found.name == "Odd Name" and found.summary == "half \ufffd pair"
    assert store.find_entities_by_keys(group, ["odd\x00 name", "\udfff"]) is not None


def test_versions_bump_on_visible_changes_only(store: GraphStore, group: str) -> None:
    store.upsert_entities([ent(group, "alice", summary="one", version=3)])
    assert store.get_entities(group, ["ent-alice"])[0].version == 3  # a new node keeps its own
    store.upsert_entities([ent(group, "alice", summary="one", version=1)])
    assert store.get_entities(group, ["ent-alice"])[0].version == 3  # nothing visible changed
    store.upsert_entities([ent(group, "alice", summary="two", evidence_count=2)])
    assert store.get_entities(group, ["ent-alice"])[0].version == 4
    store.upsert_entities([ent(group, "alice", summary="two", aliases=["Al"])])
    assert store.get_entities(group, ["ent-alice"])[0].version == 5


def test_update_entity_is_a_compare_and_set(store: GraphStore, group: str) -> None:
    store.upsert_entities([ent(group, "alice", summary="old")])
    [current] = store.get_entities(group, ["ent-alice"])
    edited = current.model_copy(update={"name": "Alice Q. Chen", "summary": "edited",
                                        "aliases": ["Alice"]})
    assert store.update_entity(edited, current.version)
    [after] = store.get_entities(group, ["ent-alice"])
    assert (after.name, after.summary, after.aliases) == ("Alice Q. Chen", "edited", ["Alice"])
    assert after.version == current.version + 1
    # a second writer holding the old version loses, and changes nothing
    stale = current.model_copy(update={"summary": "stale writer"})
    assert not store.update_entity(stale, current.version)
    assert store.get_entities(group, ["ent-alice"])[0].summary == "edited"
    assert not store.update_entity(ent(group, "nobody"), 1)


def test_get_entities_keeps_request_order(store: GraphStore, group: str) -> None:
    store.upsert_entities([ent(group, k) for k in ("a", "b", "c")])
    found = store.get_entities(group, ["ent-c", "ent-x", "ent-a", "ent-c"])
    assert [e.id for e in found] == ["ent-c", "ent-a"]


def test_find_entities_by_alias_keys(store: GraphStore, group: str) -> None:
    store.upsert_entities(
        [
            ent(group, "alice", name="Alice Chen", aliases=["A. Chen", "Ali"]),
            ent(group, "bob", name="Bob Stone", aliases=["Bobby"]),
            ent(group, "carol", name="Carol", aliases=["Ali"]),  # shares an alias with alice
        ]
    )
    assert [e.id for e in store.find_entities_by_keys(group, ["a. chen"])] == ["ent-alice"]
    assert [e.id for e in store.find_entities_by_keys(group, ["ali"])] == ["ent-alice", "ent-carol"]
    assert [e.id for e in store.find_entities_by_keys(group, ["bobby", "bob stone", "zed"])] == [
        "ent-bob"
    ]
    assert store.find_entities_by_keys(group, ["nobody"]) == []


def test_fact_episodes_updated_on_reupsert(store: GraphStore, group: str) -> None:
    store.upsert_entities([ent(group, "a"), ent(group, "b")])
    store.upsert_facts([fact(group, "1", "a", "b", episodes=["ep-1"])])
    store.upsert_facts([fact(group, "1", "a", "b", episodes=["ep-1", "ep-2"], confidence=0.9)])
    [stored] = store.get_facts(group, ["fact-1"])
    assert stored.episodes == ["ep-1", "ep-2"]
    assert stored.confidence == 0.9
    assert store.counts(group).facts == 1


def test_fact_moved_to_new_endpoints_is_not_duplicated(store: GraphStore, group: str) -> None:
    store.upsert_entities([ent(group, k) for k in ("a", "b", "c")])
    store.upsert_facts([fact(group, "1", "a", "b")])
    store.upsert_facts([fact(group, "1", "a", "c")])
    [stored] = store.list_facts(group)
    assert (stored.source_id, stored.target_id) == ("ent-a", "ent-c")


def test_fact_with_missing_endpoint_is_skipped(store: GraphStore, group: str) -> None:
    store.upsert_entities([ent(group, "a")])
    store.upsert_facts([fact(group, "1", "a", "ghost")])
    assert store.list_facts(group) == []


def test_facts_between(store: GraphStore, group: str) -> None:
    store.upsert_entities([ent(group, k) for k in ("a", "b", "c", "d")])
    store.upsert_facts(
        [
            fact(group, "ab", "a", "b"),
            fact(group, "ba", "b", "a", invalid_at=at(2021)),  # invalid facts are included
            fact(group, "bc", "b", "c"),
            fact(group, "cd", "c", "d"),
        ]
    )
    assert [f.id for f in store.facts_between(group, ["ent-a", "ent-b"])] == ["fact-ab", "fact-ba"]
    assert [f.id for f in store.facts_between(group, ["ent-a", "ent-b", "ent-c"])] == [
        "fact-ab",
        "fact-ba",
        "fact-bc",
    ]
    assert store.facts_between(group, ["ent-a", "ent-d"]) == []


def test_expand_facts_depth_and_hops(store: GraphStore, group: str) -> None:
    # a - b - c - d, plus a branch a - e and an isolated x - y
    store.upsert_entities([ent(group, k) for k in ("a", "b", "c", "d", "e", "x", "y")])
    store.upsert_facts(
        [
            fact(group, "ab", "a", "b", confidence=0.4),
            fact(group, "ea", "e", "a", confidence=0.9),  # incoming edges count too
            fact(group, "bc", "b", "c"),
            fact(group, "cd", "c", "d"),
            fact(group, "xy", "x", "y"),
        ]
    )
    one = store.expand_facts(group, ["ent-a"], depth=1)
    assert [h.fact.id for h in one] == ["fact-ea", "fact-ab"]  # confidence desc within a hop
    assert hops(one) == {"fact-ea": 0, "fact-ab": 0}
    assert hops(store.expand_facts(group, ["ent-a"], depth=2)) == {
        "fact-ea": 0,
        "fact-ab": 0,
        "fact-bc": 1,
    }
    assert hops(store.expand_facts(group, ["ent-a"], depth=3)) == {
        "fact-ea": 0,
        "fact-ab": 0,
        "fact-bc": 1,
        "fact-cd": 2,
    }
    assert hops(store.expand_facts(group, ["ent-a", "ent-d"], depth=1)) == {
        "fact-ea": 0,
        "fact-ab": 0,
        "fact-cd": 0,
    }
    assert len(store.expand_facts(group, ["ent-a"], depth=3, limit=3)) == 3
    assert store.expand_facts(group, ["ent-a"], depth=0) == []
    assert store.expand_facts(group, ["ent-missing"], depth=2) == []


def test_expand_facts_temporal_filters(store: GraphStore, group: str) -> None:
    store.upsert_entities([ent(group, k) for k in ("a", "b", "c", "d", "e", "f", "g")])
    store.upsert_facts(
        [
            fact(group, "old", "a", "b", valid_at=at(2020), invalid_at=at(2022)),
            fact(group, "new", "a", "c", valid_at=at(2022)),
            fact(group, "undated", "a", "d"),  # null valid_at: always valid
            fact(group, "future", "a", "e", valid_at=at(2090)),
            fact(group, "ends_later", "a", "f", invalid_at=at(2090)),
            fact(group, "expired", "a", "g", expired_at=at(2023)),  # transaction time only
        ]
    )

    def ids(**kw: Any) -> set[str]:
        hits = store.expand_facts(group, ["ent-a"], **kw)
        return {h.fact.id.removeprefix("fact-") for h in hits}

    always = {"undated", "ends_later", "expired"}
    assert ids(as_of=at(2021)) == {"old"} | always
    assert ids(as_of=at(2022)) == {"new"} | always  # invalid_at is exclusive, valid_at not
    assert ids(as_of=datetime(2021, 12, 31, 23, 59, 59, tzinfo=UTC)) == {"old"} | always
    assert ids(as_of=at(2095)) == {"new", "undated", "future", "expired"}
    assert ids() == {"new", "undated", "future", "expired"}  # no invalidated facts
    assert ids(include_invalid=True) == {"old", "new", "future"} | always


def test_expand_does_not_traverse_invalid_facts(store: GraphStore, group: str) -> None:
    store.upsert_entities([ent(group, k) for k in ("a", "b", "c")])
    store.upsert_facts(
        [
            fact(group, "ab", "a", "b", invalid_at=at(2020)),
            fact(group, "bc", "b", "c"),
        ]
    )
    assert store.expand_facts(group, ["ent-a"], depth=2) == []
    assert hops(store.expand_facts(group, ["ent-a"], depth=2, include_invalid=True)) == {
        "fact-ab": 0,
        "fact-bc": 1,
    }


def test_mentions(store: GraphStore, group: str) -> None:
    store.upsert_entities([ent(group, k) for k in ("a", "b")])
    store.upsert_episodes([episode(group, "1"), episode(group, "2")])
    pairs = [("ep-1", "ent-a"), ("ep-1", "ent-b"), ("ep-1", "ent-a"), ("ep-2", "ent-b")]
    store.upsert_mentions(group, pairs)
    store.upsert_mentions(group, pairs)
    store.upsert_mentions(group, [("ep-1", "ent-ghost"), ("ep-ghost", "ent-a")])  # skipped
    assert store.counts(group).mentions == 3
    assert store.episode_entity_ids(group, "ep-1") == ["ent-a", "ent-b"]
    assert store.episode_entity_ids(group, "ep-2") == ["ent-b"]
    assert store.episode_entity_ids(group, "ep-none") == []


def test_recent_episode_ids(store: GraphStore, group: str) -> None:
    store.upsert_episodes(
        [
            episode(group, "old", valid_at=at(2020)),
            episode(group, "new", valid_at=at(2024)),
            episode(group, "mid-a", valid_at=at(2022), created_at=at(2022)),
            episode(group, "mid-b", valid_at=at(2022), created_at=at(2023)),
        ]
    )
    assert store.recent_episode_ids(group, 3) == ["ep-new", "ep-mid-b", "ep-mid-a"]
    assert store.recent_episode_ids(group, 10)[-1] == "ep-old"
    assert store.recent_episode_ids(group, 0) == []


def test_tenant_isolation(store: GraphStore, group: str, other_group: str) -> None:
    for gid, name in ((group, "Alice One"), (other_group, "Alice Two")):
        store.upsert_entities([ent(gid, "a", name=name, aliases=["ali"]), ent(gid, "b")])
        store.upsert_episodes([episode(gid, "1")])
        store.upsert_mentions(gid, [("ep-1", "ent-a")])
    store.upsert_facts([fact(group, "ab", "a", "b")])  # only in the first group

    assert [e.name for e in store.get_entities(group, ["ent-a"])] == ["Alice One"]
    assert [e.name for e in store.get_entities(other_group, ["ent-a"])] == ["Alice Two"]
    assert [e.name for e in store.find_entities_by_keys(other_group, ["ali"])] == ["Alice Two"]
    assert store.get_facts(other_group, ["fact-ab"]) == []
    assert store.facts_between(other_group, ["ent-a", "ent-b"]) == []
    assert store.expand_facts(other_group, ["ent-a"]) == []
    assert store.list_facts(other_group) == []
    assert store.counts(group).facts == 1
    assert store.counts(other_group).model_dump() == {
        "entities": 2,
        "facts": 0,
        "episodes": 1,
        "mentions": 1,
    }
    store.delete_group(other_group)
    assert store.counts(other_group).entities == 0
    assert store.counts(group).model_dump() == {
        "entities": 2,
        "facts": 1,
        "episodes": 1,
        "mentions": 1,
    }


def test_upsert_spanning_two_groups(store: GraphStore, group: str, other_group: str) -> None:
    store.upsert_entities([ent(group, "a"), ent(other_group, "a"), ent(other_group, "b")])
    assert store.counts(group).entities == 1
    assert store.counts(other_group).entities == 2


def test_delete_group(store: GraphStore, group: str) -> None:
    store.upsert_entities([ent(group, k) for k in ("a", "b")])
    store.upsert_facts([fact(group, "ab", "a", "b")])
    store.upsert_episodes([episode(group, "1")])
    store.upsert_mentions(group, [("ep-1", "ent-a")])
    store.delete_group(group)
    assert store.counts(group).model_dump() == {
        "entities": 0,
        "facts": 0,
        "episodes": 0,
        "mentions": 0,
    }
    assert store.list_entities(group) == []
    assert store.list_facts(group) == []
    store.delete_group(group)  # twice is fine
    store.upsert_entities([ent(group, "a")])  # and the group can be written again
    assert store.counts(group).entities == 1


def test_unknown_group_reads_empty(store: GraphStore) -> None:
    gid = _new_group()
    assert store.list_entities(gid) == []
    assert store.get_facts(gid, ["x"]) == []
    assert store.expand_facts(gid, ["ent-a"]) == []
    assert store.counts(gid).entities == 0
    store.delete_group(gid)


def test_large_batches(store: GraphStore, group: str) -> None:
    n_entities, n_facts = 3000, 5000
    entities = [ent(group, f"n{i:05d}", aliases=[f"alias-{i % 50}"]) for i in range(n_entities)]
    facts = [
        fact(
            group,
            f"{i:05d}",
            f"n{i % n_entities:05d}",
            f"n{(i * 7 + 1) % n_entities:05d}",
            episodes=[f"ep-{i % 10}"],
        )
        for i in range(n_facts)
    ]
    started = time.monotonic()
    store.upsert_entities(entities)
    store.upsert_facts(facts)
    elapsed = time.monotonic() - started
    counts = store.counts(group)
    assert (counts.entities, counts.facts) == (n_entities, n_facts)
    assert store.list_entities(group) == entities
    stored = store.list_facts(group)
    assert stored == facts
    assert len(store.find_entities_by_keys(group, ["alias-7"])) == n_entities // 50
    assert elapsed < 30, f"bulk write took {elapsed:.1f}s"


@pytest.mark.parametrize("bad", ["", "a b", "x" * 65, "g/1", "ü", "a.b", "a`b"])
def test_bad_group_id_raises(store: GraphStore, bad: str) -> None:
    with pytest.raises(ValueError):
        store.list_entities(bad)
    with pytest.raises(ValueError):
        store.counts(bad)
    with pytest.raises(ValueError):
        store.delete_group(bad)
    with pytest.raises(ValueError):
        store.ensure_schema(bad)
    with pytest.raises(ValueError):
        store.upsert_mentions(bad, [("ep-1", "ent-a")])
    with pytest.raises(ValueError):
        store.upsert_entities([ent(bad, "a")])


# --------------------------------------------------------------------------- communities


def community(group: str, key: str, members: list[str], **kw: object) -> Community:
    data: dict[str, object] = {
        "id": f"com-{key}",
        "group_id": group,
        "level": 0,
        "name": f"Community {key}",
        "entity_ids": sorted(f"ent-{m}" for m in members),
        "entity_count": len(members),
        "created_at": T0,
        "updated_at": T0,
    }
    data.update(kw)
    return Community.model_validate(data)


def _hierarchy(group: str) -> list[Community]:
    """Two leaves (a, b | c, d) under one root, plus a lone leaf (e, f)."""
    return [
        community(group, "root", ["a", "b", "c", "d"], level=1, child_ids=["com-l1", "com-l2"],
                  summary="root summary", key_topics=["atlas", "billing"],
                  central_entities=["ent-a"], representative_entities=["ent-c"],
                  key_facts=["fact-ab"], citations=["ep-1", "ep-2"],
                  modularity_contribution=0.25, internal_density=0.5,
                  external_connectivity=0.125, summarizer="extractive/1", summary_version=3,
                  last_summarized_at=at(2024)),
        community(group, "l1", ["a", "b"], parent_id="com-root"),
        community(group, "l2", ["c", "d"], parent_id="com-root", summary_stale=True),
        community(group, "l3", ["e", "f"]),
    ]


def test_replace_and_list_communities(store: GraphStore, group: str) -> None:
    store.upsert_entities([ent(group, k) for k in "abcdef"])
    expected = _hierarchy(group)
    store.replace_communities(group, expected)
    assert store.list_communities(group) == sorted(expected, key=lambda c: (-c.level, c.id))
    assert [c.id for c in store.list_communities(group, level=0)] == ["com-l1", "com-l2", "com-l3"]
    assert store.list_communities(group, level=1) == [expected[0]]
    assert store.list_communities(group, level=7) == []
    assert store.get_community(group, "com-l2") == expected[2]
    assert store.get_community(group, "com-missing") is None


def test_replace_communities_removes_the_old_ones(store: GraphStore, group: str) -> None:
    store.upsert_entities([ent(group, k) for k in "abcdef"])
    store.replace_communities(group, _hierarchy(group))
    fresh = [community(group, "new", ["a", "f"])]
    store.replace_communities(group, fresh)
    assert store.list_communities(group) == fresh
    assert store.community_of(group, ["ent-a", "ent-b"]) == {"ent-a": "com-new"}
    store.replace_communities(group, [])
    assert store.list_communities(group) == []
    assert store.counts(group).entities == 6  # members survive


def test_community_of_by_level(store: GraphStore, group: str) -> None:
    store.upsert_entities([ent(group, k) for k in "abcdefg"])
    store.replace_communities(group, _hierarchy(group))
    ids = ["ent-a", "ent-d", "ent-e", "ent-g", "ent-missing"]
    assert store.community_of(group, ids) == {
        "ent-a": "com-l1", "ent-d": "com-l2", "ent-e": "com-l3"}
    assert store.community_of(group, ids, level=1) == {"ent-a": "com-root", "ent-d": "com-root"}
    assert store.community_of(group, []) == {}


def test_add_members_and_mark_stale(store: GraphStore, group: str) -> None:
    store.upsert_entities([ent(group, k) for k in "abcdefg"])
    store.replace_communities(group, _hierarchy(group))
    store.add_community_members(group, [("com-l1", "ent-g"), ("com-root", "ent-g"),
                                        ("com-l1", "ent-g"), ("com-l1", "ent-ghost")])
    leaf = store.get_community(group, "com-l1")
    assert leaf is not None
    assert (leaf.entity_ids, leaf.entity_count) == (["ent-a", "ent-b", "ent-g"], 3)
    root = store.get_community(group, "com-root")
    assert root is not None and root.entity_count == 5
    assert store.community_of(group, ["ent-g"], level=1) == {"ent-g": "com-root"}

    assert store.mark_stale(group, ["com-l1", "com-root", "com-nope", "com-l1"]) == 2
    stale = {c.id for c in store.list_communities(group) if c.summary_stale}
    assert stale == {"com-l1", "com-root", "com-l2"}
    assert store.mark_stale(group, []) == 0


def test_upsert_communities_updates_summaries_not_members(store: GraphStore, group: str) -> None:
    store.upsert_entities([ent(group, k) for k in "abcdef"])
    store.replace_communities(group, _hierarchy(group))
    before = store.get_community(group, "com-l2")
    assert before is not None
    updated = before.model_copy(update={
        "summary": "new \"summary\"\nline", "summary_stale": False, "summary_version": 2,
        "key_facts": ["fact-cd"], "entity_ids": [], "last_summarized_at": at(2025)})
    store.upsert_communities([updated])
    assert store.get_community(group, "com-l2") == updated.model_copy(
        update={"entity_ids": before.entity_ids})


def test_community_state_round_trip(store: GraphStore, group: str) -> None:
    assert store.get_community_state(group) is None
    state = CommunityState(group_id=group, built_at=at(2024), entity_count=10, fact_count=20,
                           community_count=3, levels=2, modularity=0.41, total_weight=12.5,
                           resolution=1.5,
                           max_size=5, seed=7, changed_entities=1, changed_facts=2,
                           updated_at=at(2025))
    store.save_community_state(state)
    assert store.get_community_state(group) == state
    later = state.model_copy(update={"changed_facts": 9})
    store.save_community_state(later)
    assert store.get_community_state(group) == later
    assert later.changed_share == 10 / 30


def test_communities_are_tenant_scoped(store: GraphStore, group: str, other_group: str) -> None:
    for gid in (group, other_group):
        store.upsert_entities([ent(gid, k) for k in "abcdef"])
    store.replace_communities(group, _hierarchy(group))
    assert store.list_communities(other_group) == []
    assert store.get_community(other_group, "com-root") is None
    assert store.community_of(other_group, ["ent-a"]) == {}
    assert store.mark_stale(other_group, ["com-root"]) == 0
    with pytest.raises(ValueError):
        store.replace_communities(other_group, _hierarchy(group))
    store.replace_communities(other_group, [community(other_group, "x", ["a"])])
    assert len(store.list_communities(group)) == 4
    store.delete_group(group)
    assert store.list_communities(group) == []
    assert store.get_community_state(group) is None
    assert [c.id for c in store.list_communities(other_group)] == ["com-x"]


# --------------------------------------------------------------------------- lineage


def _two_documents(store: GraphStore, group: str) -> None:
    """doc-a: ep-a1, ep-a2; doc-b: ep-b1. Facts: ab only from doc-a, bc from both, cd only b."""
    entities = [ent(group, k) for k in ("a", "b", "c", "d", "lonely")]
    episodes = [
        episode(group, "a1", document_id="doc-a"),
        episode(group, "a2", document_id="doc-a"),
        episode(group, "b1", document_id="doc-b"),
    ]
    facts = [
        fact(group, "ab", "a", "b", episodes=["ep-a1", "ep-a2"]),
        fact(group, "bc", "b", "c", episodes=["ep-a2", "ep-b1"]),
        fact(group, "cd", "c", "d", episodes=["ep-b1"]),
    ]
    mentions = [("ep-a1", "ent-a"), ("ep-a1", "ent-b"), ("ep-a2", "ent-b"),
                ("ep-a2", "ent-c"), ("ep-b1", "ent-c"), ("ep-b1", "ent-d")]
    store.upsert_entities(entities)
    store.upsert_episodes(episodes)
    store.upsert_mentions(group, mentions)
    store.upsert_facts(facts)


@pytest.fixture()
def lineage(store: GraphStore, group: str) -> GraphStore:
    _two_documents(store, group)
    return store


def test_detach_document_episodes_strips_evidence(lineage: GraphStore, group: str) -> None:
    store = lineage
    assert store.detach_document_episodes(group, ["doc-a", "doc-missing"]) == 2
    assert store.detach_document_episodes(group, ["doc-a"]) == 0  # idempotent
    assert store.detach_document_episodes(group, []) == 0
    assert store.get_episodes(group, ["ep-a1", "ep-a2", "ep-b1"])[0].id == "ep-b1"
    assert len(store.get_episodes(group, ["ep-a1", "ep-a2"])) == 0
    by_id = {f.id: f for f in store.list_facts(group)}
    assert by_id["fact-ab"].episodes == []  # only evidence was doc-a
    assert by_id["fact-bc"].episodes == ["ep-b1"]  # keeps the other document's evidence
    assert by_id["fact-cd"].episodes == ["ep-b1"]
    counts = store.counts(group)
    assert (counts.episodes, counts.mentions, counts.facts) == (1, 2, 3)
    assert [f.id for f in store.unevidenced_facts(group)] == ["fact-ab"]


def test_delete_facts_and_orphan_entities(lineage: GraphStore, group: str) -> None:
    store = lineage
    # ent-lonely: no mention, no fact, from the start
    assert store.orphan_entity_ids(group) == ["ent-lonely"]
    store.detach_document_episodes(group, ["doc-a"])
    assert store.orphan_entity_ids(group) == ["ent-lonely"]  # a, b still touch fact-ab
    [unevidenced] = store.unevidenced_facts(group)
    assert unevidenced.fact == "a relates to b" and unevidenced.source_id == "ent-a"
    assert store.delete_facts(group, [unevidenced.id, "fact-missing"]) == 1
    assert store.delete_facts(group, []) == 0
    assert store.unevidenced_facts(group) == []
    assert store.orphan_entity_ids(group) == ["ent-a", "ent-lonely"]  # b is in fact-bc
    assert store.delete_entities(group, ["ent-a", "ent-lonely", "ent-missing"]) == 2
    assert store.orphan_entity_ids(group) == []
    assert sorted(e.id for e in store.list_entities(group)) == ["ent-b", "ent-c", "ent-d"]
    assert sorted(f.id for f in store.list_facts(group)) == ["fact-bc", "fact-cd"]


def test_lineage_is_tenant_scoped(lineage: GraphStore, group: str, other_group: str) -> None:
    store = lineage
    _two_documents(store, other_group)
    store.detach_document_episodes(group, ["doc-a", "doc-b"])
    assert len(store.unevidenced_facts(group)) == 3
    assert store.unevidenced_facts(other_group) == []
    assert store.delete_facts(other_group, ["fact-ab"]) == 1
    assert store.delete_entities(other_group, ["ent-a"]) == 1
    assert store.counts(group).facts == 3 and store.counts(group).entities == 5
    assert store.counts(other_group).episodes == 3
    assert store.unevidenced_facts(_new_group()) == []
    assert store.orphan_entity_ids(_new_group()) == []


# --------------------------------------------------------------------------- resolution (issue 5)


def test_resolution_fields_round_trip(store: GraphStore, group: str) -> None:
    from knotwork.domain.models import PropertyValue

    props = {"email": [PropertyValue(value="a@x.com", source="ep-1", confidence=0.9)],
             "department": [PropertyValue(value="Finance"), PropertyValue(value="Risk", source="ent-b")]}
    stored = ent(group, "a", properties=props, merged_from=["ent-b", "ent-c"],
                 canonical_entity_id="ent-a", resolution_confidence=0.93)
    store.upsert_entities([stored, ent(group, "plain")])
    [got, plain] = store.get_entities(group, ["ent-a", "ent-plain"])
    assert got.properties == props
    assert got.merged_from == ["ent-b", "ent-c"] and got.canonical_entity_id == "ent-a"
    assert got.resolution_confidence == pytest.approx(0.93)
    assert plain.properties == {} and plain.merged_from == [] and plain.canonical_entity_id is None
    store.upsert_entities([stored.model_copy(update={"properties": {}, "merged_from": [],
                                                     "canonical_entity_id": None,
                                                     "resolution_confidence": None})])
    [cleared] = store.get_entities(group, ["ent-a"])
    assert cleared.properties == {} and cleared.canonical_entity_id is None


def test_entity_episode_ids_and_delete_mentions(store: GraphStore, group: str,
                                                other_group: str) -> None:
    store.upsert_entities([ent(group, k) for k in ("a", "b")])
    store.upsert_episodes([episode(group, "1"), episode(group, "2")])
    store.upsert_mentions(group, [("ep-1", "ent-a"), ("ep-2", "ent-a"), ("ep-2", "ent-b")])
    assert store.entity_episode_ids(group, "ent-a") == ["ep-1", "ep-2"]
    assert store.entity_episode_ids(other_group, "ent-a") == []
    assert store.delete_mentions(other_group, [("ep-1", "ent-a")]) == 0
    assert store.delete_mentions(group, [("ep-1", "ent-a"), ("ep-1", "ent-a"), ("ep-9", "ent-a")]) == 1
    assert store.entity_episode_ids(group, "ent-a") == ["ep-2"]
    assert store.episode_entity_ids(group, "ep-2") == ["ent-a", "ent-b"]
    assert store.counts(group).mentions == 2


def test_entity_evidence_counts_mentioning_episodes_and_the_earliest(
        store: GraphStore, group: str, other_group: str) -> None:
    """Evidence count and first-seen time are read from the MENTIONS edges as they are now
    (issue 18: not accumulated per batch)."""
    store.upsert_entities([ent(group, k) for k in ("a", "b", "c")])
    store.upsert_episodes([episode(group, "1", valid_at=T0 + timedelta(days=3)),
                           episode(group, "2", valid_at=T0 + timedelta(days=1)),
                           episode(group, "3", valid_at=T0 + timedelta(days=5))])
    store.upsert_mentions(group, [("ep-1", "ent-a"), ("ep-2", "ent-a"), ("ep-3", "ent-b"),
                                  ("ep-1", "ent-a")])
    got = store.entity_evidence(group, ["ent-a", "ent-b", "ent-c", "ent-missing"])
    assert set(got) == {"ent-a", "ent-b", "ent-c"}
    assert (got["ent-a"].episodes, got["ent-a"].first_seen) == (2, T0 + timedelta(days=1))
    assert (got["ent-b"].episodes, got["ent-b"].first_seen) == (1, T0 + timedelta(days=5))
    assert (got["ent-c"].episodes, got["ent-c"].first_seen) == (0, None)
    assert store.entity_evidence(other_group, ["ent-a"]) == {}
    store.delete_mentions(group, [("ep-2", "ent-a")])
    assert store.entity_evidence(group, ["ent-a"])["ent-a"].first_seen == T0 + timedelta(days=3)


def test_expand_skips_and_does_not_traverse_facts_of_skipped_methods(store: GraphStore, group: str) -> None:
    # a derived fact (a workspace member works at the company) is neither returned nor a way
    # through to the company's other facts; stated facts are found as before
    store.upsert_entities([ent(group, k) for k in ("a", "b", "c", "d")])
    store.upsert_facts(
        [
            fact(group, "ab", "a", "b", extraction_method="workspace", confidence=0.99),
            fact(group, "bc", "b", "c"),
            fact(group, "ad", "a", "d", confidence=0.1),
        ]
    )
    assert hops(store.expand_facts(group, ["ent-a"], depth=2, skip_methods=["workspace"])) == {
        "fact-ad": 0,
    }
    assert len(store.expand_facts(group, ["ent-a"], depth=1, limit=1, skip_methods=["workspace"])) == 1
    assert hops(store.expand_facts(group, ["ent-a"], depth=2)) == {
        "fact-ab": 0, "fact-ad": 0, "fact-bc": 1,
    }
