"""Candidate sentences' vectors from ingest (issue 23): a local query reads them by id instead
of embedding them, answers as it did without them, and a changed document, a rollback or
reconcile leaves exactly the vectors of the stored episodes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from knotwork.core import Knotwork
from knotwork.domain.models import QueryMode, RawDocument, SourceSystem
from knotwork.domain.ports import Collection
from knotwork.infra.embeddings.hashing import HashingEmbedder
from knotwork.retrieval.evidence_text import episode_sentence_ids, evidence_texts
from knotwork.services.reconcile import reconcile
from knotwork.settings import EmbedderBackend
from tests.conftest import SettingsFactory

pytestmark = [pytest.mark.integration]

WHEN = datetime(2024, 5, 1, tzinfo=UTC)
PAGE = (
    "# Ownership\n\nPriya Raman leads Project Atlas. The project ships the billing rewrite. "
    "Priya Raman works in the Berlin office.\n\n# Services\n\n"
    "The Payments Team maintains the Billing Service. It runs on three clusters."
)
QUESTION = "Who leads Project Atlas?"


class Recording(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(384)
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return super().embed(texts)


def _doc(content: str) -> RawDocument:
    return RawDocument(source_system=SourceSystem.FILE, source_id="p.md", title="People",
                       content=content, created_at=WHEN, modified_at=WHEN)


def _stored_ids(kw: Knotwork, group: str) -> set[str]:
    return {p.id for p in kw.runtime.vectors.scan(Collection.SENTENCES, group,
                                                  with_vectors=False)}


def _wanted_ids(kw: Knotwork, group: str) -> set[str]:
    graph = kw.runtime.graph
    episodes = graph.get_episodes(group, graph.recent_episode_ids(group, 100))
    return {i for e in episodes for i in episode_sentence_ids(e)}


def test_a_local_query_embeds_no_stored_sentence_and_answers_the_same(
    make_settings: SettingsFactory,
) -> None:
    """Embedded as local search would (not pooled): the answer is exactly the same."""
    answers = []
    for on in (False, True):
        settings = make_settings(embedder=EmbedderBackend.HASHING, evidence_vectors=on,
                                 evidence_pooled=False)
        with Knotwork(settings) as kw:
            recorder = Recording()
            kw.runtime.embedder = recorder
            kw.ingest_documents([_doc(PAGE)])
            stored = _stored_ids(kw, settings.group)
            assert (stored == _wanted_ids(kw, settings.group)) is on
            assert bool(stored) is on
            recorder.texts.clear()
            result = kw.query(QUESTION, mode=QueryMode.LOCAL)
            sentence_texts = [t for t in recorder.texts if t.endswith(")") and "People" in t]
            # without stored vectors the candidate sentences are embedded at query time
            assert bool(sentence_texts) is not on
            assert recorder.texts[0] == QUESTION
            answers.append((result.answer, result.confidence,
                            [c.text for c in result.citations]))
    assert answers[0] == answers[1]


def test_a_changed_page_and_reconcile_keep_exactly_the_stored_episodes_vectors(
    make_settings: SettingsFactory,
) -> None:
    settings = make_settings(embedder=EmbedderBackend.HASHING, evidence_vectors=True)
    group = settings.group
    with Knotwork(settings) as kw:
        kw.ingest_documents([_doc(PAGE)])
        before = _stored_ids(kw, group)
        kw.ingest_documents([_doc(PAGE.replace("three clusters", "two clusters"))])
        after = _stored_ids(kw, group)
        assert after == _wanted_ids(kw, group)
        assert before - after  # the old version's changed sentence left with its episode
        assert reconcile(kw.runtime, group).repaired == 0
        # a vector lost and a stray one: reconcile embeds the first, deletes the second
        lost = min(after)
        stray = min(before - after)
        kw.runtime.vectors.delete(Collection.SENTENCES, [lost])
        point = next(p for p in kw.runtime.vectors.scan(Collection.SENTENCES, group)
                     if p.id != lost)
        kw.runtime.vectors.upsert(Collection.SENTENCES, [point.model_copy(update={"id": stray})])
        report = reconcile(kw.runtime, group)
        assert (report.sentence_vectors_added, report.sentence_vectors_removed) == (1, 1)
        assert _stored_ids(kw, group) == after


def test_evidence_texts_are_what_local_search_scores() -> None:
    from knotwork.domain.models import Episode

    episode = Episode(id="e1", group_id="g", document_id="d", name="Runbook",
                      content="# Deploys\n\nAlex: We deploy on Mondays. It takes an hour. Ok.",
                      source_description="file:r.md", valid_at=WHEN, created_at=WHEN)
    texts = evidence_texts(episode)
    assert "We deploy on Mondays. (Runbook Deploys Alex)" in texts
    # a short follow-up is scored with the sentence before it too; "Ok." is too short
    assert "We deploy on Mondays. It takes an hour. (Runbook Deploys)" in texts
    assert not any(t.startswith("Ok.") for t in texts)


def test_pooled_sentence_vectors_embed_no_sentence_at_ingest_or_query(
    make_settings: SettingsFactory,
) -> None:
    """Pooled from the passage pass (late chunking): the sentences that stand verbatim in a
    passage are never embedded on their own, and the query embeds only the question."""
    settings = make_settings(embedder=EmbedderBackend.HASHING, evidence_vectors=True)
    assert settings.evidence_pooled and settings.late_chunk_facts
    with Knotwork(settings) as kw:
        recorder = Recording()
        kw.runtime.embedder = recorder
        kw.ingest_documents([_doc(PAGE)])
        assert _stored_ids(kw, settings.group) == _wanted_ids(kw, settings.group)
        # hashing pools a span as its own text: a scored text "(People …)" is never embedded
        assert not [t for t in recorder.texts if t.endswith(")") and "People" in t]
        recorder.texts.clear()
        result = kw.query(QUESTION, mode=QueryMode.LOCAL)
        assert recorder.texts[0] == QUESTION
        assert not [t for t in recorder.texts if t.endswith(")") and "People" in t]
        assert "Priya Raman" in result.answer


def test_a_global_query_reads_its_source_sentences_vectors_and_answers_the_same(
    make_settings: SettingsFactory,
) -> None:
    """Global search scores its candidate sentences bare: with their vectors stored at ingest
    it embeds none of them, and its answer is unchanged."""
    bare = {"Priya Raman leads Project Atlas.", "The project ships the billing rewrite.",
            "Priya Raman works in the Berlin office.",
            "The Payments Team maintains the Billing Service.", "It runs on three clusters."}
    answers = []
    for on in (False, True):
        settings = make_settings(embedder=EmbedderBackend.HASHING, evidence_vectors=on,
                                 evidence_pooled=False)
        with Knotwork(settings) as kw:
            recorder = Recording()
            kw.runtime.embedder = recorder
            kw.ingest_documents([_doc(PAGE)])
            kw.build_communities()
            recorder.texts.clear()
            result = kw.query("Summarise the main themes of the work.", mode=QueryMode.GLOBAL)
            assert result.mode_used is QueryMode.GLOBAL
            assert bool(bare & set(recorder.texts)) is not on
            answers.append((result.answer, result.confidence,
                            [c.text for c in result.citations]))
    assert answers[0][0]
    assert answers[0] == answers[1]
