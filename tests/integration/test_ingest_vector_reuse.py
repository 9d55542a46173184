"""Ingestion embeds only what changed, and late-chunked fact vectors are what the embedder
gives for the sentence (hashing: exactly; issue 9)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from knotwork.core import Knotwork
from knotwork.domain.models import RawDocument, SourceSystem
from knotwork.domain.ports import Collection, PassageVectors
from knotwork.infra.embeddings.hashing import HashingEmbedder
from knotwork.infra.embeddings.spans import TextSpanPassages
from knotwork.ingestion.vector_writes import stored_vectors
from knotwork.settings import EmbedderBackend
from tests.conftest import SettingsFactory

pytestmark = [pytest.mark.integration, pytest.mark.models]

WHEN = datetime(2024, 5, 1, tzinfo=UTC)
PAGE = (
    "Priya Raman leads Project Atlas. Priya Raman works in the Berlin office. "
    "The Payments Team maintains the Billing Service."
)


class Recording(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(384)
        self.texts: list[str] = []
        self.passages: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return super().embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> PassageVectors:
        self.passages.extend(texts)  # spans pooled from the pass are not embed calls
        return TextSpanPassages(
            texts,
            HashingEmbedder.embed(self, texts),
            lambda span: HashingEmbedder.embed(self, span),
        )


def _doc(content: str, source_id: str = "p.md", when: datetime = WHEN) -> RawDocument:
    return RawDocument(
        source_system=SourceSystem.FILE,
        source_id=source_id,
        title="People",
        content=content,
        created_at=when,
        modified_at=when,
    )


@pytest.mark.parametrize("late", [False, True])
def test_fact_vectors_are_their_sentences_with_or_without_late_chunking(
    make_settings: SettingsFactory, late: bool
) -> None:
    settings = make_settings(embedder=EmbedderBackend.HASHING, late_chunk_facts=late)
    with Knotwork(settings) as kw:
        recorder = Recording()
        kw.runtime.embedder = recorder
        kw.ingest_documents([_doc(PAGE)])
        facts = kw.runtime.graph.list_facts(settings.group)
        stored = stored_vectors(
            kw.runtime.vectors, Collection.FACTS, settings.group, [f.id for f in facts]
        )
    # without late chunking the passages are a plain embed call
    assert (recorder.passages if late else recorder.texts[:1]) == [f"People\n{PAGE}"]
    assert any(f.fact in PAGE for f in facts)
    for fact in facts:
        assert stored[fact.id] == pytest.approx(HashingEmbedder(384).embed([fact.fact])[0])
        # late chunking reads found sentences from the passage pass: no embed call of their own
        assert (fact.fact in recorder.texts) is (not late or fact.fact not in PAGE)


def test_a_third_summary_sentence_does_not_re_embed_the_entity(
    make_settings: SettingsFactory,
) -> None:
    # every fact sentence embedded alone: the recorder then sees the new fact's text
    settings = make_settings(embedder=EmbedderBackend.HASHING, late_chunk_facts=False)
    with Knotwork(settings) as kw:
        recorder = Recording()
        kw.runtime.embedder = recorder
        kw.ingest_documents([_doc(PAGE)])
        assert any(t.startswith("Priya Raman (person). ") for t in recorder.texts)
        recorder.texts.clear()
        # a later page: its fact joins the summary after the standing ones (issue 18: the
        # summary is a function of the facts, ranked by start, then confidence, then sentence)
        later = WHEN + timedelta(days=30)
        kw.ingest_documents([_doc("Priya Raman reports to Dana Lee.", "org.md", later)])
        priya = next(
            e for e in kw.runtime.graph.list_entities(settings.group) if e.name == "Priya Raman"
        )
    assert priya.summary.count(".") >= 3  # the summary grew ...
    assert not any(
        t.startswith("Priya Raman (person)") for t in recorder.texts
    )  # ... not her vector
    assert "Priya Raman reports to Dana Lee." in recorder.texts  # the new fact is embedded
