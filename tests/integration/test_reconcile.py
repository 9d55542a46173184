"""``knotwork reconcile`` repairs what a crash between store writes leaves behind."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from knotwork.core import Knotwork
from knotwork.domain.ports import Collection, VectorPoint
from knotwork.services.reconcile import reconcile
from tests.conftest import SettingsFactory
from tests.integration.test_cli import SAMPLE_DATA, Cli

pytestmark = [pytest.mark.integration, pytest.mark.models]


def _vector_ids(kw: Knotwork, collection: Collection) -> set[str]:
    return {p.id for p in kw.runtime.vectors.scan(collection, kw.settings.group, with_vectors=False)}


def test_missing_and_orphan_vectors_are_repaired(make_settings: SettingsFactory) -> None:
    from knotwork.settings import EmbedderBackend

    settings = make_settings(embedder=EmbedderBackend.HASHING)
    with Knotwork(settings) as kw:
        kw.ingest_path(SAMPLE_DATA)
        group = settings.group
        clean = {c: _vector_ids(kw, c) for c in (Collection.ENTITIES, Collection.FACTS, Collection.CHUNKS)}
        assert all(clean.values())
        assert reconcile(kw.runtime, group).repaired == 0  # a clean run has nothing to fix

        # a crash between the graph and the vector writes: some vectors never arrived …
        lost = {c: sorted(ids)[:3] for c, ids in clean.items()}
        for collection, ids in lost.items():
            kw.runtime.vectors.delete(collection, ids)
        # … and vectors of objects a crashed delete removed from the graph stayed behind
        stray = str(uuid.uuid4())
        kw.runtime.vectors.upsert(Collection.ENTITIES, [VectorPoint(
            id=stray, vector=[1.0] + [0.0] * 383, group_id=group, payload={"name": "ghost"})])

        dry = reconcile(kw.runtime, group, dry_run=True)
        assert (dry.entity_vectors_added, dry.fact_vectors_added, dry.passage_vectors_added) == (3, 3, 3)
        assert dry.entity_vectors_removed == 1
        assert stray in _vector_ids(kw, Collection.ENTITIES)  # a dry run changes nothing

        fixed = reconcile(kw.runtime, group)
        assert fixed.repaired == 10
        for collection, ids in clean.items():
            assert _vector_ids(kw, collection) == ids
        assert reconcile(kw.runtime, group).repaired == 0
        answer = kw.query("Who leads Project Atlas?")
        assert "Priya" in answer.answer


def test_graph_evidence_of_a_vanished_document_is_retired(tmp_path: Path, falkordb_url: str) -> None:
    cli = Cli(tmp_path / "data", falkordb_url)
    cli.run("ingest", str(SAMPLE_DATA))
    before = cli.snapshot()
    # a source delete that stopped after the SQL row went: the graph still holds its evidence
    engine = create_engine(f"sqlite:///{tmp_path / 'data' / 'knotwork.db'}")
    with engine.begin() as conn:
        doc_id, _title = conn.execute(text(
            "select id, title from documents where group_id = :g and title like '%Atlas%' "
            "order by title limit 1"), {"g": cli.group}).one()
        chunk_ids = set(conn.execute(text("select id from chunks where document_id = :d"),
                                     {"d": doc_id}).scalars())
        conn.execute(text("delete from entity_mentions where chunk_id in "
                          "(select id from chunks where document_id = :d)"), {"d": doc_id})
        conn.execute(text("delete from chunks where document_id = :d"), {"d": doc_id})
        conn.execute(text("delete from documents where id = :d"), {"d": doc_id})
    engine.dispose()
    report = json.loads(cli.run("reconcile", "--json").stdout)
    assert report["orphan_episode_documents"] == [doc_id]
    assert report["facts_retired"] + report["passage_vectors_removed"] > 0
    after = cli.snapshot()
    kept = {f["id"] for f in after["facts"]}
    assert kept < {f["id"] for f in before["facts"]}
    assert chunk_ids and any(chunk_ids & set(f["episodes"]) for f in before["facts"])
    assert not any(chunk_ids & set(f["episodes"]) for f in after["facts"])
    again = json.loads(cli.run("reconcile", "--json").stdout)
    assert again["orphan_episode_documents"] == [] and again["facts_retired"] == 0
    assert "repaired 0 item(s)" in cli.run("reconcile").stdout


def test_derived_facts_keep_no_vector_and_are_not_repairs(make_settings: SettingsFactory,
                                                          tmp_path: Path) -> None:
    """WORKS_AT facts derived from a workspace's member list have no vector by design (they
    stay out of vector search): reconcile neither adds one nor counts them as missing."""
    from knotwork.settings import EmbedderBackend
    from tests.integration.test_queue_workers import _workspace

    settings = make_settings(embedder=EmbedderBackend.HASHING)
    with Knotwork(settings) as kw:
        kw.ingest_path(_workspace(tmp_path))
        group = settings.group
        derived = {f.id for f in kw.runtime.graph.list_facts(group) if f.derived}
        assert derived
        assert not derived & _vector_ids(kw, Collection.FACTS)
        assert reconcile(kw.runtime, group, dry_run=True).repaired == 0
        assert reconcile(kw.runtime, group).repaired == 0
        assert not derived & _vector_ids(kw, Collection.FACTS)
