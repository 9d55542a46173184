"""Re-ingesting edited documents equals a fresh ingest of their final versions (issue 18).

Random edit sequences (a page rewritten with other sentences, a page deleted at its source
and added again) over three small pages, ingested one step at a time into the real stores
(the session FalkorDB, SQLite, Qdrant edge); then the final versions are ingested fresh into
another tenant. Facts (sentence, validity and end, confidence, evidence), SQL mention rows,
graph MENTIONS and entities (type, evidence count, first seen, summary) must be the same: confidence and validity are functions of the current
evidence, an end a newer fact gave goes with that fact's evidence, a page's old version does
not steer the extraction of its new one.

Each page keeps one date across its versions, and each fact has one sentence form: which
sighting names a fact several pages state in different words, and an edit that makes the
newer of two conflicting facts the older, are not yet functions of the current evidence.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knotwork.core import Knotwork
from knotwork.domain.ids import stable_id
from knotwork.domain.models import RawDocument, SourceSystem
from knotwork.domain.ports import Collection
from knotwork.retrieval.evidence_text import episode_sentence_ids
from tests.conftest import SettingsFactory

pytestmark = [pytest.mark.integration, pytest.mark.models]

WHEN = datetime(2024, 3, 1, tzinfo=UTC)
PAGES = ("alpha", "beta", "gamma")
DATES = {page: WHEN + timedelta(days=i) for i, page in enumerate(PAGES)}
SENTENCES = (
    "Ana Lopez reports to Ben Okoro.",
    "Ben Okoro leads Project Falcon.",
    "Carla Diaz leads Project Falcon.",
    "Dev Shah works at Beta Labs.",
    "Project Falcon uses PostgreSQL.",
    "Ana Lopez is a member of the Platform Team.",
    "The Platform Team owns the Billing Service.",
    "Ben Okoro manages Dev Shah.",
    "Ana Lopez works at Northwind Labs.",
    "Northwind Labs is headquartered in Lisbon.",
    "Ana Lopez works at Beta Labs.",  # one company per person: these two end the ones above
    "Dev Shah works at Northwind Labs.",
)

# one step: (page, sentences) rewrites the page; (page, None) deletes it at its source
Step = tuple[str, tuple[str, ...] | None]
steps = st.lists(st.tuples(
    st.sampled_from(PAGES),
    st.one_of(st.none(), st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=4,
                                  unique=True).map(tuple))), min_size=2, max_size=6)

Snapshot = dict[str, object]


def _raw(page: str, sentences: tuple[str, ...]) -> RawDocument:
    return RawDocument(source_system=SourceSystem.FILE, source_id=page, title=page,
                       content=" ".join(sentences), created_at=DATES[page],
                       modified_at=DATES[page])


def _snapshot(kw: Knotwork) -> Snapshot:
    """The tenant's graph and mentions with ids replaced by names (ids embed the tenant)."""
    group, graph = kw.settings.group, kw.runtime.graph
    where: dict[str, str] = {}
    for page in PAGES:
        document = stable_id(group, "document", SourceSystem.FILE, page)
        where.update({stable_id(document, "chunk", str(i)): f"{page}#{i}" for i in range(4)})
    entities = graph.list_entities(group)
    names = {e.id: e.name for e in entities}
    facts = {(names[f.source_id], names[f.target_id], f.type.value, f.fact):
             (round(f.confidence, 9), f.valid_at, f.invalid_at, f.invalidated_by is not None,
              sorted(where[e] for e in f.episodes))
             for f in graph.list_facts(group)}
    mentions = sorted((where[str(r["chunk_id"])], names[str(r["entity_id"])], r["span_start"],
                       r["span_end"], r["text"])
                      for t in kw.runtime.documents.dump(group) if t.table == "entity_mentions"
                      for r in t.rows)
    graph_mentions = sorted((where[ep], e.name) for e in entities
                            for ep in graph.entity_episode_ids(group, e.id))
    return {"facts": facts, "mentions": mentions, "graph_mentions": graph_mentions,
            # evidence count, first seen and summary are functions of the current evidence
            # too (issue 18), whatever batches wrote them
            "entities": sorted((e.name, e.type.value, e.evidence_count, e.created_at, e.summary)
                               for e in entities)}


@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(history=steps)
def test_edits_converge_to_a_fresh_ingest(history: list[Step], make_settings: SettingsFactory,
                                          tmp_path: Path) -> None:
    def open_tenant() -> Knotwork:
        return Knotwork(make_settings(data_dir=tmp_path / secrets.token_hex(4),
                                      embedder="hashing", evidence_vectors=True))

    final: dict[str, tuple[str, ...]] = {}
    with open_tenant() as edited:
        pipeline = edited._pipeline(None)
        for page, sentences in history:
            if sentences is None:
                stored = edited.runtime.documents.get_document_by_source(
                    edited.settings.group, SourceSystem.FILE, page)
                if stored is not None:
                    pipeline.delete_documents([stored])
                final.pop(page, None)
            else:
                edited.ingest_documents([_raw(page, sentences)])
                final[page] = sentences
        after_edits = _snapshot(edited)
        # the candidate sentences' vectors are exactly those of the episodes left (issue 23)
        group, graph = edited.settings.group, edited.runtime.graph
        total = graph.counts(group).episodes
        episodes = graph.get_episodes(group, graph.recent_episode_ids(group, total)) if total else []
        assert {p.id for p in edited.runtime.vectors.scan(Collection.SENTENCES, group,
                                                          with_vectors=False)} == \
            {i for e in episodes for i in episode_sentence_ids(e)}
    with open_tenant() as fresh:
        fresh.ingest_documents([_raw(page, final[page]) for page in sorted(final)])
        expected = _snapshot(fresh)
    assert after_edits == expected


def test_withdrawn_evidence_lowers_confidence_again(make_settings: SettingsFactory,
                                                   tmp_path: Path) -> None:
    """Two pages state a fact (boosted once); deleting one and adding it back, or editing
    it three times, ends where the evidence says, not higher."""
    sentence = ("Ben Okoro leads Project Falcon.",)
    with Knotwork(make_settings(data_dir=tmp_path / "one", embedder="hashing")) as kw:
        kw.ingest_documents([_raw("alpha", sentence)])
        single = {f.fact: f.confidence for f in kw.runtime.graph.list_facts(kw.settings.group)}
        kw.ingest_documents([_raw("beta", sentence)])
        both = {f.fact: f.confidence for f in kw.runtime.graph.list_facts(kw.settings.group)}
        assert both[sentence[0]] > single[sentence[0]]  # a second page is more evidence
        stored = kw.runtime.documents.get_document_by_source(kw.settings.group,
                                                             SourceSystem.FILE, "beta")
        assert stored is not None
        kw._pipeline(None).delete_documents([stored])
        after = {f.fact: f.confidence for f in kw.runtime.graph.list_facts(kw.settings.group)}
        assert after == single
        for extra in ("Dev Shah works at Beta Labs.", "Project Falcon uses PostgreSQL.", ""):
            kw.ingest_documents([_raw("alpha", (*sentence, extra))])
        edited = {f.fact: f.confidence for f in kw.runtime.graph.list_facts(kw.settings.group)}
        assert edited[sentence[0]] == single[sentence[0]]
