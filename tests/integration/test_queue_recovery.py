"""A worker dying at the worst moments, against real stores (the session FalkorDB for the graph
and the streams, SQLite and qdrant-edge under the worker's lease; own key prefix per queue).

"Dying" is a ``BaseException`` raised out of a store call: it escapes the worker loop like a
kill, the job stays pending on its stream, and the next worker claims it (redelivery).

* follow-ups: a worker dies after committing an EXTRACT_ENTITIES batch (documents COMPLETED)
  and before enqueueing its RESOLVE_ENTITY / COMMUNITY_UPDATED tasks; the redelivered job
  finds nothing to extract and still enqueues them, exactly once per decision audited;
* merges: a worker dies after each write of a RESOLVE_ENTITY merge; the redelivery finishes
  it, and the end state equals the uninterrupted merge (entities, facts, MENTIONS, mention
  rows, blocking keys, vectors, lineage rows, audit rows, review items).
"""

from __future__ import annotations

import json
import secrets
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from knotwork.communities.service import CommunityService
from knotwork.domain.ids import stable_id
from knotwork.domain.models import (
    Entity,
    EntityMention,
    Fact,
    ProcessingStatus,
    RawDocument,
    RelationType,
    SourceSystem,
)
from knotwork.domain.tasks import CommunityUpdatedTask, ResolveEntityTask
from knotwork.domain.timeutil import utcnow
from knotwork.infra.sql.resolution_store import SqlResolutionStore
from knotwork.infra.sql.store import SqlDocumentStore
from knotwork.resolution.ingest import entity_block_keys
from knotwork.resolution.models import ReviewStatus
from knotwork.resolution.service import resolution_sql
from knotwork.services.worker import resolve as resolve_module
from knotwork.services.worker import worker as worker_module
from knotwork.services.worker.enqueue import enqueue_documents
from knotwork.services.worker.follow_ups import outstanding_tasks
from knotwork.services.worker.stores import LeasedVectors
from tests.integration import test_queue_tasks
from tests.integration.test_queue_tasks import Stack, StackFactory, _duplicate, _record_enqueued

pytestmark = [pytest.mark.integration, pytest.mark.models]

make_stack = test_queue_tasks.make_stack  # the fixture: stores, a queue under its own prefix

CLAIM_IDLE_S = 0.2  # a dead worker's job is claimed by the next fetch after this


class Died(BaseException):
    """The worker process dies here (not an ``Exception``: no handler retries it)."""


def _die_after(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[int]:
    """``owner.name`` does its work, then the worker dies — the first time only."""
    real = getattr(owner, name)
    calls: list[int] = []

    def dying(*args: object, **kwargs: object) -> object:
        result = real(*args, **kwargs)
        calls.append(1)
        if len(calls) == 1:
            raise Died(name)
        return result

    monkeypatch.setattr(owner, name, dying)
    return calls


def _sql(stack: Stack) -> SqlResolutionStore:
    sql = resolution_sql(stack.rt)
    assert sql is not None
    return sql


def _enqueue(stack: Stack, *texts: str) -> list[RawDocument]:
    docs = [
        RawDocument(
            source_system=SourceSystem.FILE,
            source_id=f"r{i}-{secrets.token_hex(3)}.md",
            title=f"Note {i}",
            content=t,
        )
        for i, t in enumerate(texts)
    ]
    enqueue_documents(docs, stack.rt.documents, stack.queue, stack.group)
    return docs


def _statuses(stack: Stack) -> set[ProcessingStatus]:
    return {d.processing_status for d in stack.rt.documents.list_documents(stack.group)}


# ---------------------------------------------------------------------------- follow-ups


def test_resolve_follow_ups_survive_a_death_after_the_commit(
    make_stack: StackFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = make_stack(resolution_weight_embedding=0.0, queue_claim_idle_s=CLAIM_IDLE_S)
    stack.ingest("Alice Chen works at TechCorp.", "Andrew Chen works at Globex.")
    enqueued = _record_enqueued(stack)
    died = _die_after(monkeypatch, worker_module, "batch_tasks")  # committed, nothing enqueued
    _enqueue(stack, "A. Chen approved the budget of Project Atlas.")
    with pytest.raises(Died):
        stack.run()
    assert died and _statuses(stack) == {ProcessingStatus.COMPLETED}
    assert not [t for t in enqueued if isinstance(t, ResolveEntityTask)]
    assert stack.queue.stats().outstanding == 1  # the extraction job, pending

    stats = stack.run()  # the next worker claims the job: nothing to extract, follow-ups due
    assert (stats.extracted, stats.unchanged, stats.dead) == (0, 1, 0)
    resolves = [t for t in enqueued if isinstance(t, ResolveEntityTask)]
    tied = [r for r in _sql(stack).list_reviews(stack.group, None) if r.decision == "new"]
    assert len(resolves) == len(tied) >= 1, (tied, resolves)
    assert {t.entity.entity_id for t in resolves} == {r.entity_id for r in tied}
    assert stats.resolved == len(resolves) and stack.queue.stats().outstanding == 0
    for review in tied:  # each deferred decision re-resolved and audited once
        assert review.entity_id is not None
        audits = [
            a
            for a in _sql(stack).audit_trail(stack.group, review.entity_id)
            if a.action == resolve_module.AUDIT_ACTION
        ]
        assert len(audits) == 1

    # the same follow-ups derived again (another redelivery): same task ids, no new audit
    before = stack.counts()
    documents = [d.id for d in stack.rt.documents.list_documents(stack.group)]
    again = outstanding_tasks(stack.rt, stack.group, documents)
    assert {t.task_id for t in again if isinstance(t, ResolveEntityTask)} == {
        t.task_id for t in resolves
    }
    for task in again:
        stack.queue.enqueue(task)
    stack.run()
    assert stack.counts() == before
    for review in tied:
        assert review.entity_id is not None
        assert (
            len(
                [
                    a
                    for a in _sql(stack).audit_trail(stack.group, review.entity_id)
                    if a.action == resolve_module.AUDIT_ACTION
                ]
            )
            == 1
        )


def test_community_follow_ups_survive_a_death_after_the_commit(
    make_stack: StackFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = make_stack(
        community_inline_summaries=False,
        community_rebuild_threshold=0.9,
        queue_claim_idle_s=CLAIM_IDLE_S,
    )
    stack.ingest(
        "Alice Chen works at TechCorp. Alice Chen leads Project Atlas.",
        "Dan Wu works at Globex. Dan Wu leads Project Borealis.",
        "Carol Diaz works at TechCorp. Carol Diaz reports to Alice Chen.",
    )
    with stack.gate():
        assert CommunityService(stack.rt, stack.group).build().communities >= 1
    enqueued = _record_enqueued(stack)
    _die_after(monkeypatch, worker_module, "batch_tasks")
    _enqueue(stack, "Alice Chen mentors Carol Diaz. Carol Diaz joined Project Atlas.")
    with pytest.raises(Died):
        stack.run()
    assert _statuses(stack) == {ProcessingStatus.COMPLETED}
    stale = {c.id for c in stack.rt.graph.list_communities(stack.group) if c.summary_stale}
    assert stale and not [t for t in enqueued if isinstance(t, CommunityUpdatedTask)]

    stats = stack.run()
    events = [t for t in enqueued if isinstance(t, CommunityUpdatedTask)]
    assert {e.community_id for e in events} == stale
    assert stats.resummarized == len(stale) and stats.dead == 0
    assert not any(c.summary_stale for c in stack.rt.graph.list_communities(stack.group))


# ---------------------------------------------------------------------------- merges


@dataclass(frozen=True)
class Scene:
    alice: Entity
    dup: Entity
    clean: tuple[int, ...]  # counts before the duplicate was added
    audits: Counter[str]  # of Alice, before the merge


def _scene(stack: Stack) -> Scene:
    """Alice Chen, and a duplicate of her with a mention row, a fact to TechCorp and one to
    Alice (a self-loop once merged), as a deferred ingestion decision leaves it."""
    stack.ingest("Alice Chen works at TechCorp. Alice Chen leads Project Atlas.")
    entities = stack.rt.graph.list_entities(stack.group)
    alice = next(e for e in entities if e.name == "Alice Chen")
    techcorp = next(e for e in entities if e.name == "TechCorp")
    episode = stack.rt.graph.entity_episode_ids(stack.group, alice.id)[0]
    clean = stack.counts()
    dup = _duplicate(stack, alice, episode)
    now = utcnow()
    with stack.gate():
        stack.rt.graph.upsert_facts(
            [
                Fact(
                    id=stable_id(stack.group, "fact", "dup", kind.value),
                    group_id=stack.group,
                    source_id=dup.id,
                    target_id=other,
                    type=kind,
                    fact=f"Alice Chen {kind.value}",
                    episodes=[episode],
                    created_at=now,
                    valid_at=now,
                )
                for kind, other in (
                    (RelationType.WORKS_AT, techcorp.id),
                    (RelationType.COLLABORATED_WITH, alice.id),
                )
            ]
        )
        stack.rt.documents.add_mentions(
            [
                EntityMention(
                    id=stable_id(stack.group, "mention", "dup"),
                    group_id=stack.group,
                    chunk_id=episode,
                    entity_id=dup.id,
                    span_start=0,
                    span_end=10,
                    text="Alice Chen",
                    extractor="test",
                    confidence=0.9,
                )
            ]
        )
    audits = Counter(a.action for a in _sql(stack).audit_trail(stack.group, alice.id))
    return Scene(alice, dup, clean, audits)


def _assert_merged(stack: Stack, scene: Scene) -> None:
    """The end state of the uninterrupted merge of the duplicate into Alice."""
    sql, group, alice, dup = _sql(stack), stack.group, scene.alice, scene.dup
    c = scene.clean
    # entities, facts (the moved one folded into Alice's own fact to TechCorp, the loop
    # gone), MENTIONS, episodes, chunks, mention rows (+1 re-pointed), entity vectors,
    # review items (+1, closed)
    assert stack.counts() == (c[0], c[1], c[2], c[3], c[4], c[5] + 1, c[6], c[7] + 1)
    assert stack.rt.graph.get_entities(group, [dup.id]) == []
    [merged] = stack.rt.graph.get_entities(group, [alice.id])
    assert merged.evidence_count == alice.evidence_count + dup.evidence_count
    assert dup.id in merged.merged_from
    facts = [
        h.fact
        for h in stack.rt.graph.expand_facts(
            group, [alice.id], depth=1, include_invalid=True, limit=100
        )
    ]
    # one fact per relation between two entities (issue 18: it was there twice)
    assert sum(f.type is RelationType.WORKS_AT for f in facts) == 1
    assert not [f for f in facts if f.source_id == f.target_id]
    assert sql.mention_ids(group, dup.id) == [] and len(sql.mention_ids(group, alice.id)) >= 2
    keys = sql.lookup_keys(group, entity_block_keys(dup), per_key=50)
    assert dup.id not in {e for ids in keys.values() for e in ids}
    assert alice.id in {e for ids in keys.values() for e in ids}
    [record] = sql.merges_of(group, alice.id)
    assert record.source_ids == [dup.id] and record.undone_at is None
    audits = Counter(a.action for a in sql.audit_trail(group, alice.id))
    assert audits - scene.audits == Counter({"entity.merge": 1, resolve_module.AUDIT_ACTION: 1})
    [outcome] = [
        json.loads(a.detail)
        for a in sql.audit_trail(group, alice.id)
        if a.action == resolve_module.AUDIT_ACTION
    ]
    assert outcome["outcome"] == "merged" and outcome["merge_id"] == record.id
    [review] = sql.list_reviews(group, None)
    assert review.status is ReviewStatus.MERGED and review.decided_by == "worker"


GRAPH = "graph"
SQL = "sql"
DOCS = "docs"
VECTORS = "vectors"
# every write of a RESOLVE_ENTITY merge, in order (the worker dies right after it)
STEPS: list[tuple[str, str]] = [
    (SQL, "add_merge"),
    (GRAPH, "upsert_entities"),
    (GRAPH, "upsert_facts"),
    (GRAPH, "delete_facts"),
    (GRAPH, "upsert_mentions"),
    (GRAPH, "delete_entities"),
    (SQL, "repoint_mentions"),
    (SQL, "delete_keys"),
    (SQL, "replace_keys"),
    (VECTORS, "delete"),
    (VECTORS, "upsert"),
    (SQL, "record_audits"),  # the merge's audit row: its last write
    (SQL, "decide_review"),  # the review item closed
    (DOCS, "record_audit"),  # the resolution's audit row: the task's last write
]


def _owner(stack: Stack, where: str) -> object:
    owners: dict[str, Callable[[], object]] = {
        GRAPH: lambda: type(stack.rt.graph),
        SQL: lambda: SqlResolutionStore,
        DOCS: lambda: SqlDocumentStore,
        VECTORS: lambda: LeasedVectors,
    }
    return owners[where]()


def _merge_with_a_death(
    stack: Stack, monkeypatch: pytest.MonkeyPatch, step: tuple[str, str] | None
) -> None:
    scene = _scene(stack)
    [task] = resolve_module.deferred_tasks(
        stack.group, _sql(stack).list_reviews(stack.group, ReviewStatus.PENDING)
    )
    stack.queue.enqueue(task)
    if step is None:
        stats = stack.run()
    else:
        died = _die_after(monkeypatch, _owner(stack, step[0]), step[1])
        with pytest.raises(Died):
            stack.run()
        assert died, f"{step} was not called"
        assert stack.queue.stats().outstanding == 1  # the task, pending
        stats = stack.run()  # redelivered: the merge is finished
    assert (stats.jobs, stats.resolved, stats.dead) == (1, 1, 0)
    _assert_merged(stack, scene)

    stack.queue.enqueue(task)  # one more redelivery changes nothing
    again = stack.run()
    assert (again.resolved, again.merged, again.dead) == (1, 0, 0)
    _assert_merged(stack, scene)


@pytest.mark.parametrize(
    "step", [None, *STEPS], ids=["uninterrupted", *(f"{w}.{n}" for w, n in STEPS)]
)
def test_a_merge_interrupted_at_each_step_is_finished_by_the_redelivery(
    make_stack: StackFactory, monkeypatch: pytest.MonkeyPatch, step: tuple[str, str] | None
) -> None:
    _merge_with_a_death(make_stack(queue_claim_idle_s=CLAIM_IDLE_S), monkeypatch, step)


@pytest.mark.parametrize(
    "step",
    [(GRAPH, "delete_entities"), (SQL, "replace_keys")],
    ids=["graph.delete_entities", "sql.replace_keys"],
)
def test_an_interrupted_merge_is_finished_on_postgres(
    postgres_url: str,  # first: its database is dropped after the stack is closed
    make_stack: StackFactory,
    monkeypatch: pytest.MonkeyPatch,
    step: tuple[str, str],
) -> None:
    stack = make_stack(queue_claim_idle_s=CLAIM_IDLE_S, database_url=postgres_url)
    documents = stack.rt.documents
    assert isinstance(documents, SqlDocumentStore) and documents.dialect == "postgresql"
    _merge_with_a_death(stack, monkeypatch, step)
