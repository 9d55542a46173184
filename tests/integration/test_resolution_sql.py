"""The resolution tables (migration 0002) on SQLite and PostgreSQL: blocking-key lookup caps,
the review queue's state machine, merge lineage lookups, tenant isolation."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from knotwork.infra.sql.resolution_store import SqlResolutionStore
from knotwork.infra.sql.store import SqlDocumentStore
from knotwork.resolution.models import MergeRecord, ReviewCandidate, ReviewItem, ReviewStatus

NOW = datetime(2026, 3, 1, tzinfo=UTC)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def sql(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SqlResolutionStore]:
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" \
        else f"sqlite:///{tmp_path / 'r.db'}"
    docs = SqlDocumentStore(url)
    docs.migrate()
    try:
        yield SqlResolutionStore(docs)
    finally:
        docs.close()


def test_key_lookup_is_capped_per_key_and_in_total(sql: SqlResolutionStore) -> None:
    sql.replace_keys("g", {f"e{i:04d}": ["t:smith", f"n:person {i}"] for i in range(300)})
    sql.replace_keys("other", {"x": ["t:smith"]})
    assert len(sql.lookup("g", ["t:smith"], per_key=100, total=500)) == 100
    assert "x" not in sql.lookup("g", ["t:smith"], per_key=1000, total=1000)
    ids = sql.lookup("g", ["n:person 7", "t:smith"], per_key=100, total=50)
    assert ids[0] == "e0007" and len(ids) == 50  # the selective key's hit comes first
    sql.replace_keys("g", {"e0007": ["n:someone else"]})  # re-keyed: old keys gone
    assert sql.lookup("g", ["n:person 7"], 10, 10) == []
    sql.delete_keys("g", ["e0007"])
    assert sql.lookup("g", ["n:someone else"], 10, 10) == []


def test_review_queue_state_machine(sql: SqlResolutionStore) -> None:
    item = ReviewItem(id="r1", group_id="g", mention="Bob Smith", entity_type="PERSON",
                      entity_id="e1", decision="merge_flagged", score=0.98,
                      candidates=[ReviewCandidate(entity_id="e1", name="Robert Smith",
                                                  type="PERSON", score=0.98, name_score=0.97)],
                      episode_ids=["ep1"], alias_added="Bob Smith", created_at=NOW)
    sql.add_reviews([item, item])  # idempotent
    assert [i.id for i in sql.list_reviews("g")] == ["r1"]
    assert sql.list_reviews("g", query="bob")[0].candidates[0].name == "Robert Smith"
    assert sql.list_reviews("g", query="alice") == []
    assert sql.get_review("other", "r1") is None
    assert sql.decide_review("g", "r1", ReviewStatus.APPROVED, "admin", "kept")
    assert not sql.decide_review("g", "r1", ReviewStatus.REJECTED, "admin", "again")
    done = sql.get_review("g", "r1")
    assert done is not None and done.status is ReviewStatus.APPROVED and done.decided_by == "admin"
    assert sql.list_reviews("g") == []


def test_merge_lineage(sql: SqlResolutionStore) -> None:
    record = MergeRecord(id="m1", group_id="g", target_id="a", source_ids=["b", "c"],
                         snapshot={"entities": [{"id": "a"}]}, actor="t", created_at=NOW)
    sql.add_merge(record)
    assert sql.merged_into("g", "c") == "a" and sql.merged_into("other", "c") is None
    assert sql.get_merge("g", "m1") == record
    assert sql.mark_undone("g", "m1") and not sql.mark_undone("g", "m1")
    assert sql.merged_into("g", "c") is None
    sql.delete_group("g")
    assert sql.get_merge("g", "m1") is None


def test_review_page_filters_sorts_and_counts(sql: SqlResolutionStore) -> None:
    from knotwork.resolution.models import ReviewFilter, ReviewSort

    items = [ReviewItem(id=f"r{i}", group_id="g", mention=f"Ana {i}", entity_type=etype,
                        entity_id=None, decision="new", score=score, episode_ids=["c"] * impact,
                        created_at=NOW.replace(minute=i))
             for i, (etype, score, impact) in enumerate(
                 [("PERSON", 0.95, 1), ("PERSON", 0.6, 5), ("ORGANIZATION", 0.8, 3),
                  ("PERSON", 0.75, 2)])]
    sql.add_reviews([*items, ReviewItem(id="x", group_id="other", mention="Ana", entity_type="PERSON",
                                        entity_id=None, decision="new", score=0.9, created_at=NOW)])
    sql.decide_review("g", "r3", ReviewStatus.APPROVED, "admin", "kept")
    page = sql.review_page("g", ReviewFilter(status=None, sort=ReviewSort.IMPACT))
    assert [i.id for i in page.items] == ["r1", "r2", "r3", "r0"] and page.total == 4
    assert page.counts == {"pending": 3, "approved": 1}
    people = sql.review_page("g", ReviewFilter(entity_type="PERSON", sort=ReviewSort.SCORE))
    assert [i.id for i in people.items] == ["r1", "r0"]  # pending only, least sure first
    assert people.counts == {"pending": 2, "approved": 1}  # counts ignore the status filter
    band = sql.review_page("g", ReviewFilter(min_score=0.7, max_score=0.9), offset=0, limit=1)
    assert [i.id for i in band.items] == ["r2"] and band.total == 1


def test_mention_evidence_counts_documents_and_extractors(sql: SqlResolutionStore) -> None:
    from knotwork.domain.models import Chunk, Document, EntityMention, SourceSystem

    docs = sql._docs  # the document store the resolution store shares
    for d, chunks in (("d1", ["c1", "c2"]), ("d2", ["c3"])):
        document = Document(id=d, group_id="g", source_system=SourceSystem.FILE, source_id=d,
                            title=d, content_hash=d, created_at=NOW)
        docs.save_document(document, [Chunk(id=c, document_id=d, group_id="g", index=i,
                                            content="Mira met the Harbor team.", start_offset=0,
                                            end_offset=25, token_count=5)
                                      for i, c in enumerate(chunks)])
    votes = [("c1", "mira", "rule"), ("c2", "mira", "known"), ("c3", "mira", "rule"),
             ("c1", "harbor", "spacy")]
    docs.add_mentions([EntityMention(id=f"m{i}", group_id="g", chunk_id=c, entity_id=e,
                                     span_start=i, span_end=i + 1, text=e, extractor=x,
                                     confidence=0.9) for i, (c, e, x) in enumerate(votes)])
    got = sql.mention_evidence("g", ["mira", "harbor", "nobody"])
    assert got == {"mira": (2, {"rule": 2, "known": 1}), "harbor": (1, {"spacy": 1})}
    assert sql.mention_evidence("other", ["mira"]) == {}
