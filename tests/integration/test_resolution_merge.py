"""Merge and unmerge on the embedded stack (FalkorDB, qdrant-edge, SQLite / PostgreSQL):
unmerge restores the exact previous graph (export diff), mention rows and MENTIONS edges."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from knotwork.core import Knotwork
from knotwork.domain.ports import Collection
from knotwork.resolution.merge import MergeError, Merger, NotFoundError
from knotwork.resolution.service import resolution_sql
from knotwork.services.backup import export_tenant
from tests.conftest import SettingsFactory

pytestmark = [pytest.mark.integration]

TEXTS = [
    "Robert Smith leads the Payments Team. Robert Smith reports to Alice Chen.",
    "Dana Whitfield maintains the Billing Service. Dana Whitfield works at TechCorp.",
    "Alice Chen works at TechCorp.",
]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def kw(request: pytest.FixtureRequest, make_settings: SettingsFactory) -> Iterator[Knotwork]:
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else None
    with Knotwork(make_settings(database_url=url, vectors="memory", embedder="hashing")) as k:
        for i, text in enumerate(TEXTS):
            k.add_episode(text, reference_time=datetime(2026, 1, 1 + i, tzinfo=UTC),
                          source="text")
        yield k


def _entity(kw: Knotwork, name: str) -> str:
    found = [e for e in kw.runtime.graph.list_entities(kw.settings.group) if e.name == name]
    assert found, [e.name for e in kw.runtime.graph.list_entities(kw.settings.group)]
    return found[0].id


def _state(kw: Knotwork) -> tuple[object, ...]:
    g, group = kw.runtime.graph, kw.settings.group
    # every field but ``version``: optimistic locking counts the merge and the unmerge as two
    # more changes (restoring an old number would let a stale writer through)
    entities = sorted((e.model_dump(mode="json", exclude={"version"})
                       for e in g.list_entities(group)), key=lambda e: e["id"])
    mentions = sorted((ep, eid) for e in entities for eid in [e["id"]]
                      for ep in g.entity_episode_ids(group, eid))
    sql = resolution_sql(kw.runtime)
    assert sql is not None
    rows = sorted((e["id"], tuple(sql.mention_ids(group, e["id"]))) for e in entities)
    return kw.export_graph().model_dump(), entities, mentions, rows


def test_merge_then_unmerge_restores_the_exact_graph(kw: Knotwork) -> None:
    group = kw.settings.group
    robert, bob = _entity(kw, "Robert Smith"), _entity(kw, "Dana Whitfield")
    before = _state(kw)
    sql = resolution_sql(kw.runtime)
    assert sql is not None
    merger = Merger(kw.runtime, group, sql)
    bob_mentions = sql.mention_ids(group, bob)
    assert bob_mentions

    record = merger.merge(robert, [bob], actor="test")

    graph = kw.runtime.graph
    assert graph.get_entities(group, [bob]) == []
    [merged] = graph.get_entities(group, [robert])
    assert "Dana Whitfield" in merged.aliases and bob in merged.merged_from
    assert merged.canonical_entity_id == robert
    assert merged.evidence_count >= 2
    facts = graph.list_facts(group)
    assert all(bob not in (f.source_id, f.target_id) for f in facts)
    assert any(f.source_id == robert and "Billing" in f.fact for f in facts)
    assert set(sql.mention_ids(group, robert)) >= set(bob_mentions)
    assert kw.runtime.vectors.count(Collection.ENTITIES, group) == len(graph.list_entities(group))
    assert _state(kw) != before

    merger.unmerge(record.id, actor="test")

    assert _state(kw) == before
    with pytest.raises(MergeError, match="already undone"):
        merger.unmerge(record.id)
    trail = [a.action for a in sql.audit_trail(group, robert)]
    assert trail[:2] == ["entity.unmerge", "entity.merge"]


def test_merge_of_unknown_entity_changes_nothing(kw: Knotwork) -> None:
    group = kw.settings.group
    sql = resolution_sql(kw.runtime)
    assert sql is not None
    before = _state(kw)
    with pytest.raises(NotFoundError):
        Merger(kw.runtime, group, sql).merge(_entity(kw, "Robert Smith"), ["no-such-entity"])
    with pytest.raises(MergeError):
        Merger(kw.runtime, group, sql).merge(_entity(kw, "Robert Smith"), [])
    assert _state(kw) == before


def _tenant_export(kw: Knotwork, out: Path) -> dict[str, list[object]]:
    """The tenant export (``knotwork export``): graph files and entity vectors, every entity
    field but ``version`` (see :func:`_state`)."""
    export_tenant(kw.runtime, kw.settings.group, out)
    files: dict[str, list[object]] = {}
    for path in sorted([*(out / "graph").glob("*.json*"), out / "vectors/entities.jsonl"]):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()]
        if path.name == "entities.jsonl":
            rows = [{k: v for k, v in row.items() if k != "version"} for row in rows]
        files[path.relative_to(out).as_posix()] = rows
    return files


def test_unmerge_restores_community_membership_in_the_tenant_export(
        kw: Knotwork, tmp_path: Path) -> None:
    group = kw.settings.group
    kw.build_communities()
    graph = kw.runtime.graph
    robert, dana = _entity(kw, "Robert Smith"), _entity(kw, "Dana Whitfield")
    assert graph.community_of(group, [dana]), "Dana must belong to a community for the test"
    before = _tenant_export(kw, tmp_path / "before")
    assert before["graph/communities.jsonl"]
    sql = resolution_sql(kw.runtime)
    assert sql is not None
    merger = Merger(kw.runtime, group, sql)

    record = merger.merge(robert, [dana], actor="test")
    assert graph.community_of(group, [dana]) == {}  # gone with the merged-away entity
    assert _tenant_export(kw, tmp_path / "merged") != before

    merger.unmerge(record.id, actor="test")
    after = _tenant_export(kw, tmp_path / "after")
    assert after == before


def test_merge_folds_parallel_facts_and_unmerge_restores_them(kw: Knotwork) -> None:
    """Both entities work at the same company: after the merge one WORKS_AT fact carries both
    pages' evidence (issue 18: the same (source, target, type) twice); unmerge gives both back."""
    group, graph = kw.settings.group, kw.runtime.graph
    kw.add_episode("Robert Smith works at TechCorp.", reference_time=datetime(2026, 1, 9, tzinfo=UTC),
                   source="text")
    robert, dana = _entity(kw, "Robert Smith"), _entity(kw, "Dana Whitfield")
    before = _state(kw)
    works = {f.source_id: f for f in graph.list_facts(group) if f.type.value == "WORKS_AT"
             and f.source_id in (robert, dana)}
    assert set(works) == {robert, dana}
    sql = resolution_sql(kw.runtime)
    assert sql is not None
    merger = Merger(kw.runtime, group, sql)

    record = merger.merge(robert, [dana], actor="test")

    after = [f for f in graph.list_facts(group) if f.type.value == "WORKS_AT" and f.source_id == robert]
    assert len(after) == 1, after
    assert set(after[0].episodes) == set(works[robert].episodes) | set(works[dana].episodes)
    assert after[0].id == works[robert].id
    assert after[0].confidence > max(w.confidence for w in works.values())  # two pages now
    fact_vectors = {p.id for p in kw.runtime.vectors.scan(Collection.FACTS, group, with_vectors=False)}
    assert works[dana].id not in fact_vectors

    merger.unmerge(record.id, actor="test")

    assert _state(kw) == before
    fact_vectors = {p.id for p in kw.runtime.vectors.scan(Collection.FACTS, group, with_vectors=False)}
    assert works[dana].id in fact_vectors


def test_a_fact_between_the_merged_entities_leaves_with_its_vector_and_comes_back(
        kw: Knotwork) -> None:
    """Robert reports to Alice; merging one into the other makes that fact a loop: it goes
    from the graph and from the vector store (no stray vector for reconcile to find), and an
    unmerge brings both back."""
    group, graph = kw.settings.group, kw.runtime.graph
    robert, alice = _entity(kw, "Robert Smith"), _entity(kw, "Alice Chen")
    [loop] = [f for f in graph.list_facts(group) if {f.source_id, f.target_id} == {robert, alice}]
    before = _state(kw)
    sql = resolution_sql(kw.runtime)
    assert sql is not None
    merger = Merger(kw.runtime, group, sql)

    def vectors() -> set[str]:
        return {p.id for p in kw.runtime.vectors.scan(Collection.FACTS, group, with_vectors=False)}

    assert loop.id in vectors()
    record = merger.merge(robert, [alice], actor="test")
    assert loop.id not in {f.id for f in graph.list_facts(group)}
    assert loop.id not in vectors()
    assert vectors() == {f.id for f in graph.list_facts(group)}

    merger.unmerge(record.id, actor="test")
    assert _state(kw) == before
    assert loop.id in vectors()
    assert vectors() == {f.id for f in graph.list_facts(group)}
