"""RESOLVE_ENTITY and COMMUNITY_UPDATED through a worker, in-process against real stores (the
session FalkorDB for the graph, the streams and the cache; SQLite and qdrant-edge under the
worker's lease), each queue under its own key prefix.

* a deferred duplicate entity is merged by its RESOLVE_ENTITY task; delivered twice, the
  second delivery changes nothing; an ingestion tie enqueues the task by itself;
* an ingestion batch that makes a built community stale enqueues COMMUNITY_UPDATED (LOW),
  which re-summarizes it; a redelivery re-summarizes nothing; a stale-free event drops the
  cached community values;
* a handler that keeps failing sends its task to the dead letters after its retries;
* DERIVE_EMPLOYMENT waits while extraction is held by another worker (a wait is not a
  failure), then relates the workspace's people to the tenant's organisation.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from knotwork.communities.service import CommunityService
from knotwork.domain.ids import stable_id
from knotwork.domain.models import (
    Entity,
    EntityType,
    RawDocument,
    RelationType,
    SourceSystem,
    WorkspaceMember,
)
from knotwork.domain.ports import CacheLayer, Collection
from knotwork.domain.tasks import (
    CommunityUpdatedTask,
    DeriveEmploymentTask,
    EntityToResolve,
    ExtractEntitiesTask,
    Priority,
    ResolveEntityTask,
    Task,
)
from knotwork.domain.timeutil import utcnow
from knotwork.infra.queue.factory import create_job_queue, create_writer_lock, redis_client
from knotwork.infra.queue.redis_jobs import RedisJobQueue
from knotwork.ingestion.embedding_text import entity_point, entity_text
from knotwork.resolution.ingest import entity_block_keys
from knotwork.resolution.models import ReviewItem, ReviewStatus
from knotwork.resolution.service import resolution_sql
from knotwork.runtime import Runtime
from knotwork.services.worker import resolve as resolve_module
from knotwork.services.worker.enqueue import enqueue_documents, enqueue_members
from knotwork.services.worker.stores import CommitGate, open_worker_runtime
from knotwork.services.worker.worker import Worker, WorkerStats
from knotwork.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.models]


@dataclass
class Stack:
    settings: Settings
    rt: Runtime
    queue: RedisJobQueue
    gate: CommitGate

    @property
    def group(self) -> str:
        return self.settings.group

    def run(self) -> WorkerStats:
        worker = Worker(self.rt, self.queue, self.gate, name="w-tasks",
                        known_stale=self.gate.others_committed)
        return worker.run(until_empty=True, block_ms=50)

    def ingest(self, *texts: str) -> WorkerStats:
        docs = [RawDocument(source_system=SourceSystem.FILE, source_id=f"n{i}-{secrets.token_hex(3)}.md",
                            title=f"Note {i}", content=t) for i, t in enumerate(texts)]
        enqueue_documents(docs, self.rt.documents, self.queue, self.group)
        return self.run()

    def counts(self) -> tuple[int, ...]:
        g = self.rt.graph.counts(self.group)
        d = self.rt.documents.counts(self.group)
        sql = resolution_sql(self.rt)
        assert sql is not None
        with self.gate():
            vectors = self.rt.vectors.count(Collection.ENTITIES, self.group)
        return (g.entities, g.facts, g.mentions, g.episodes, d.chunks, d.mentions, vectors,
                len(sql.list_reviews(self.group, None, limit=1000)))


StackFactory = Callable[..., Stack]


@pytest.fixture
def make_stack(tmp_path: Path, falkordb_url: str) -> Iterator[StackFactory]:
    made: list[Stack] = []

    def build(**overrides: object) -> Stack:
        values: dict[str, object] = {
            "queue_max_retries": 2, "queue_retry_backoff_s": 0.05, "queue_claim_idle_s": 30}
        settings = Settings(data_dir=tmp_path / f"data{len(made)}", group=f"qt_{secrets.token_hex(4)}",
                            falkordb_url=falkordb_url, embedder="hashing",  # type: ignore[arg-type]
                            queue_prefix=f"kwtest:{secrets.token_hex(6)}:",
                            cache_prefix=f"kwtest:{secrets.token_hex(6)}:cache:",
                            **(values | overrides))  # type: ignore[arg-type]
        rt, vectors = open_worker_runtime(settings)
        queue = create_job_queue(settings, rt.graph)
        assert isinstance(queue, RedisJobQueue)
        gate = CommitGate(create_writer_lock(settings, rt.graph), vectors,
                          redis_client(settings, rt.graph), settings.queue_prefix)
        made.append(Stack(settings, rt, queue, gate))
        return made[-1]

    try:
        yield build
    finally:
        for stack in made:
            stack.gate.release()
            stack.queue.purge()
            client = redis_client(stack.settings, stack.rt.graph)
            for prefix in (stack.settings.queue_prefix, stack.settings.cache_prefix):
                leftovers = list(client.scan_iter(match=prefix + "*"))
                if leftovers:
                    client.delete(*leftovers)
            stack.rt.graph.delete_group(stack.group)
            stack.rt.close()


def _redeliver(stack: Stack, task: Task) -> None:
    """The same task (same id) on the queue again: what at-least-once delivery may do."""
    stack.queue.enqueue(task)


def _duplicate(stack: Stack, of: Entity, episode_id: str) -> Entity:
    """A second entity for the same person, as a deferred (tied) ingestion decision leaves it:
    its own mention, blocking keys, vector and a pending review item."""
    now = utcnow()
    dup = of.model_copy(update={"id": stable_id(stack.group, "entity", "dup", of.id),
                                "evidence_count": 1, "aliases": [], "merged_from": [],
                                "properties": {}, "canonical_entity_id": None,
                                "created_at": now, "updated_at": now,
                                "version": 1})
    sql = resolution_sql(stack.rt)
    assert sql is not None
    with stack.gate():
        stack.rt.graph.upsert_entities([dup])
        stack.rt.graph.upsert_mentions(stack.group, [(episode_id, dup.id)])
        [vector] = stack.rt.embedder.embed([entity_text(dup)])
        stack.rt.vectors.upsert(Collection.ENTITIES, [entity_point(dup, vector)])
        sql.replace_keys(stack.group, {dup.id: entity_block_keys(dup)})
        sql.add_reviews([ReviewItem(id=stable_id(stack.group, "review", "dup", dup.id),
                                    group_id=stack.group, mention=dup.name,
                                    entity_type=dup.type.value, entity_id=dup.id, decision="new",
                                    score=0.8, episode_ids=[episode_id], created_at=now)])
    return dup


def test_a_deferred_duplicate_is_merged_once(make_stack: StackFactory) -> None:
    stack = make_stack()
    assert stack.ingest("Alice Chen works at TechCorp. Alice Chen leads Project Atlas.").extracted == 1
    entities = stack.rt.graph.list_entities(stack.group)
    alice = next(e for e in entities if e.name == "Alice Chen")
    episode = stack.rt.graph.entity_episode_ids(stack.group, alice.id)[0]
    clean = stack.counts()

    dup = _duplicate(stack, alice, episode)
    assert stack.counts()[0] == clean[0] + 1
    [task] = resolve_module.deferred_tasks(stack.group, resolution_sql(stack.rt)  # type: ignore[union-attr]
                                           .list_reviews(stack.group, ReviewStatus.PENDING))
    assert task.priority is Priority.HIGH and task.entity.entity_id == dup.id
    assert task.entity.source_chunk_id == episode and task.blocking_keys
    stack.queue.enqueue(task)
    stats = stack.run()
    assert (stats.jobs, stats.resolved, stats.merged, stats.dead) == (1, 1, 1, 0)
    entities = stack.rt.graph.list_entities(stack.group)
    assert [e.id for e in entities if e.name == "Alice Chen"] == [alice.id]
    merged = stack.rt.graph.get_entities(stack.group, [alice.id])[0]
    assert dup.id in merged.merged_from
    assert stack.rt.graph.entity_episode_ids(stack.group, alice.id) == [episode]
    after = stack.counts()
    assert after[:7] == clean[:7] and after[7] == clean[7] + 1  # the review item is kept ...
    sql = resolution_sql(stack.rt)
    assert sql is not None
    [review] = sql.list_reviews(stack.group, None)
    assert review.status is ReviewStatus.MERGED and review.decided_by == "worker"  # ... closed
    audits = [a for a in sql.audit_trail(stack.group, alice.id) if a.action == "entity.resolution"]
    assert len(audits) == 1 and json.loads(audits[0].detail)["outcome"] == "merged"

    _redeliver(stack, task)
    again = stack.run()
    assert (again.jobs, again.resolved, again.merged, again.dead) == (1, 1, 0, 0)
    assert stack.counts() == after
    assert len([a for a in sql.audit_trail(stack.group, alice.id)
                if a.action == "entity.resolution"]) == 1


def test_an_unmatched_entity_is_kept_and_audited_once(make_stack: StackFactory) -> None:
    stack = make_stack()
    stack.ingest("Alice Chen works at TechCorp. Dan Wu works at Globex.")
    dan = next(e for e in stack.rt.graph.list_entities(stack.group) if e.name == "Dan Wu")
    before = stack.counts()
    task = ResolveEntityTask(group_id=stack.group, entity=EntityToResolve(
        display_name="Dan Wu", entity_type=EntityType.PERSON, entity_id=dan.id))
    for _ in range(2):
        _redeliver(stack, task)
        stats = stack.run()
        assert (stats.resolved, stats.merged, stats.dead) == (1, 0, 0)
        assert stack.counts() == before
    sql = resolution_sql(stack.rt)
    assert sql is not None
    [audit] = [a for a in sql.audit_trail(stack.group, dan.id) if a.action == "entity.resolution"]
    assert json.loads(audit.detail)["outcome"] == "kept"


def _record_enqueued(stack: Stack) -> list[Task]:
    """Every task the stack's queue is given from now on (still enqueued for real)."""
    enqueued: list[Task] = []
    real = stack.queue.enqueue

    def spy(task: Task) -> str:
        enqueued.append(task)
        return real(task)

    stack.queue.enqueue = spy  # type: ignore[method-assign]
    return enqueued


def test_a_tied_ingestion_decision_enqueues_a_resolve_task(make_stack: StackFactory) -> None:
    stack = make_stack(resolution_weight_embedding=0.0)  # names alone: "A. Chen" is a tie
    stack.ingest("Alice Chen works at TechCorp.", "Andrew Chen works at Globex.")
    enqueued = _record_enqueued(stack)
    stats = stack.ingest("A. Chen approved the budget of Project Atlas.")
    resolves = [t for t in enqueued if isinstance(t, ResolveEntityTask)]
    sql = resolution_sql(stack.rt)
    assert sql is not None
    tied = [r for r in sql.list_reviews(stack.group, None) if r.decision == "new"]
    assert len(resolves) == len(tied) >= 1, (tied, resolves)
    assert {t.entity.entity_id for t in resolves} == {r.entity_id for r in tied}
    assert stats.resolved == len(resolves) and stats.dead == 0
    before = stack.counts()
    for task in resolves:
        _redeliver(stack, task)
    assert stack.run().resolved == len(resolves)
    assert stack.counts() == before


def test_community_updated_round_trip(make_stack: StackFactory) -> None:
    stack = make_stack(community_inline_summaries=False, community_rebuild_threshold=0.9)
    stack.ingest("Alice Chen works at TechCorp. Alice Chen leads Project Atlas.",
                 "Dan Wu works at Globex. Dan Wu leads Project Borealis.",
                 "Carol Diaz works at TechCorp. Carol Diaz reports to Alice Chen.")
    with stack.gate():
        built = CommunityService(stack.rt, stack.group).build()
    assert built.communities >= 1
    assert not any(c.summary_stale for c in stack.rt.graph.list_communities(stack.group))

    enqueued = _record_enqueued(stack)
    stats = stack.ingest("Alice Chen mentors Carol Diaz. Carol Diaz joined Project Atlas.")
    events = [t for t in enqueued if isinstance(t, CommunityUpdatedTask)]
    assert events and all(e.priority is Priority.LOW and e.summary_stale for e in events)
    assert stats.resummarized == len({e.community_id for e in events})
    communities = {c.id: c for c in stack.rt.graph.list_communities(stack.group)}
    assert not any(c.summary_stale for c in communities.values())
    before = stack.counts()

    for event in events:
        _redeliver(stack, event)
    again = stack.run()
    assert (again.jobs, again.resummarized, again.dead) == (len(events), 0, 0)
    assert {c.id: c for c in stack.rt.graph.list_communities(stack.group)} == communities
    assert stack.counts() == before


def test_a_stale_free_event_drops_the_cached_community_values(make_stack: StackFactory) -> None:
    stack = make_stack(cache_enabled=True)
    cache = stack.rt.cache
    assert cache is not None  # the worker's runtime has the query cache too
    cache.set(CacheLayer.COMMUNITY, stack.group, "c1", "cached report")
    cache.set(CacheLayer.ENTITY, stack.group, "e1", "cached entity")
    stack.queue.enqueue(CommunityUpdatedTask(group_id=stack.group, community_id="c1", level=0,
                                             entity_count=3, summary_stale=False))
    stats = stack.run()
    assert (stats.jobs, stats.resummarized, stats.dead) == (1, 0, 0)
    assert cache.get(CacheLayer.COMMUNITY, stack.group, "c1") is None
    assert cache.get(CacheLayer.ENTITY, stack.group, "e1") == "cached entity"


def test_failing_handlers_go_to_the_dead_letters(make_stack: StackFactory,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    stack = make_stack()

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("handler crashed")

    monkeypatch.setattr("knotwork.services.worker.worker.handle_resolve", broken)
    monkeypatch.setattr(CommunityService, "refresh", broken)
    stack.queue.enqueue(ResolveEntityTask(group_id=stack.group,
                                          entity=EntityToResolve(display_name="Alice Chen")))
    stack.queue.enqueue(CommunityUpdatedTask(group_id=stack.group, community_id="c1", level=0,
                                             entity_count=3))
    stats = stack.run()
    assert (stats.resolved, stats.resummarized, stats.retried, stats.dead) == (0, 0, 4, 2)
    dead = {d.kind: d for d in stack.queue.dead_letters()}
    assert set(dead) == {"RESOLVE_ENTITY", "COMMUNITY_UPDATED"}
    assert all(d.error == "RuntimeError: handler crashed" and d.retry_count == 2
               for d in dead.values())
    assert stack.queue.stats().outstanding == 0

    monkeypatch.undo()  # fixed: re-queued, both complete
    assert stack.queue.requeue_dead() == 2
    fixed = stack.run()
    assert (fixed.resolved, fixed.dead) == (1, 0) and stack.queue.stats().dead == 0


def test_employment_waits_for_the_extraction_held_by_another_worker(
        make_stack: StackFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    stack = make_stack(queue_max_retries=1)
    doc = RawDocument(source_system=SourceSystem.FILE, source_id="staff.md", title="Staff",
                      content="Brightwater Labs holds its offsite in March. Laura Bennett "
                              "presented the roadmap. David Morgan presented the budget.")
    enqueue_documents([doc], stack.rt.documents, stack.queue, stack.group)
    members = [WorkspaceMember("Laura Bennett", email="laura@brightwaterlabs.com"),
               WorkspaceMember("David Morgan", email="david@brightwaterlabs.com")]
    assert enqueue_members(members, stack.queue, stack.group) is not None
    assert enqueue_members([], stack.queue, stack.group) is None

    held = stack.queue.fetch("another-worker", count=1)  # its extraction is not done yet
    assert len(held) == 1 and isinstance(held[0].task, ExtractEntitiesTask)
    worker = Worker(stack.rt, stack.queue, stack.gate, name="w-staff")
    for _ in range(3):  # the employment task comes and goes back: nothing is related yet
        worker.run_once(block_ms=50)
    assert worker.stats.employment_facts == 0 and worker.stats.retried == 0
    assert not [f for f in stack.rt.graph.list_facts(stack.group)
                if f.type is RelationType.WORKS_AT]

    stack.queue.retry(held[0], "handed back", 0)  # the other worker gives its job up
    stats = worker.run(until_empty=True, block_ms=50)
    assert stats.dead == 0 and stack.queue.stats().outstanding == 0
    names = {e.id: e.name for e in stack.rt.graph.list_entities(stack.group)}
    works = {(names[f.source_id], names[f.target_id]) for f in stack.rt.graph.list_facts(stack.group)
             if f.type is RelationType.WORKS_AT}
    assert works == {("Laura Bennett", "Brightwater Labs"), ("David Morgan", "Brightwater Labs")}
    assert stats.employment_facts == 2

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("employment crashed")

    # waiting did not use up its retries: a real failure still gets queue_max_retries tries
    monkeypatch.setattr("knotwork.ingestion.employment.derive_employment", broken)
    task = DeriveEmploymentTask(group_id=stack.group, members=members, deferrals=5,
                                retry_count=5)
    stack.queue.enqueue(task)
    failed = Worker(stack.rt, stack.queue, stack.gate, name="w-broken").run(until_empty=True,
                                                                          block_ms=50)
    assert (failed.retried, failed.dead) == (1, 1)
