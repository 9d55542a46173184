"""Ingestion embeds a batch's passages while the batch before it is extracted and written:
documents are prepared one batch early, so what the later batch replaces is re-read when it
is written, and each batch gets its own passage vectors."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from knotwork.core import Knotwork
from knotwork.domain.ids import stable_id
from knotwork.domain.models import RawDocument, SourceSystem
from knotwork.domain.ports import Collection
from knotwork.infra.embeddings.hashing import HashingEmbedder
from knotwork.ingestion.embedding_text import passage_id, passage_text
from knotwork.ingestion.pipeline import IngestionPipeline
from knotwork.ingestion.vector_writes import stored_vectors
from knotwork.settings import EmbedderBackend
from tests.conftest import SettingsFactory

pytestmark = [pytest.mark.integration, pytest.mark.models]

WHEN = datetime(2024, 5, 1, tzinfo=UTC)


def _doc(source_id: str, content: str, title: str = "Leads") -> RawDocument:
    return RawDocument(source_system=SourceSystem.FILE, source_id=source_id, title=title,
                       content=content, created_at=WHEN, modified_at=WHEN)


def test_a_document_changed_within_one_call_is_stored_as_its_last_version(
    make_settings: SettingsFactory,
) -> None:
    settings = make_settings(embedder=EmbedderBackend.HASHING)
    with Knotwork(settings) as kw:
        pipeline = IngestionPipeline(kw.runtime, settings.group, batch_documents=1)
        # the second version is prepared before the first is written
        report = pipeline.ingest([
            _doc("atlas.md", "Priya Raman leads Project Atlas."),
            _doc("atlas.md", "Dana Lee leads Project Atlas."),
            _doc("atlas.md", "Dana Lee leads Project Atlas."),  # unchanged by then
        ])
        facts = kw.runtime.graph.list_facts(settings.group)
        stored = kw.runtime.documents.get_document_by_source(
            settings.group, SourceSystem.FILE, "atlas.md")
    assert report.added == ["atlas.md"] and report.updated == ["atlas.md"]
    assert report.documents_ingested == 2 and report.documents_unchanged == 1
    assert stored is not None and stored.content_hash  # COMPLETED, the last version
    sentences = {f.fact for f in facts}
    assert "Dana Lee leads Project Atlas." in sentences
    assert not any("Priya" in s for s in sentences)  # withdrawn with the first version


def test_every_chunk_gets_the_vector_of_its_own_passage(make_settings: SettingsFactory) -> None:
    settings = make_settings(embedder=EmbedderBackend.HASHING)
    docs = [_doc(f"p{i}.md", f"Person {i} Smith works in office {i}.", title=f"Page {i}")
            for i in range(7)]
    with Knotwork(settings) as kw:
        IngestionPipeline(kw.runtime, settings.group, batch_documents=2).ingest(docs)
        ids = {}
        for d in docs:
            doc_id = stable_id(settings.group, "document", d.source_system, d.source_id)
            ids[passage_id(stable_id(doc_id, "chunk", "0"), 0)] = passage_text(d.title, d.content)
        vectors = stored_vectors(kw.runtime.vectors, Collection.CHUNKS, settings.group, list(ids))
    assert set(vectors) == set(ids)
    for pid, text in ids.items():
        assert vectors[pid] == pytest.approx(HashingEmbedder(384).embed([text])[0])
