"""Queued sync and the worker's failure handling, in-process against real stores (the session
FalkorDB for the graph and the streams, SQLite and qdrant-edge under the worker's lease).

* ``sync --queue``: new and changed pages become EXTRACT_ENTITIES tasks, a second sync over
  unchanged pages creates none (and the worker then extracts nothing);
* a task that keeps failing is retried with backoff, then dead-lettered, its document FAILED,
  without holding back the other documents of its batch; re-queued, it completes.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from knotwork.domain.models import ProcessingStatus, RawDocument, SourceSystem
from knotwork.infra.queue.factory import create_job_queue, create_writer_lock, redis_client
from knotwork.infra.queue.redis_jobs import RedisJobQueue
from knotwork.ingestion.connectors.confluence import ConfluenceClient, ConfluenceSource
from knotwork.ingestion.connectors.http import RetryPolicy
from knotwork.ingestion.pipeline import IngestionPipeline
from knotwork.ingestion.sync import run_sync
from knotwork.runtime import Runtime
from knotwork.services.cli_worker import sync_enqueuer
from knotwork.services.worker.enqueue import enqueue_documents
from knotwork.services.worker.stores import CommitGate, LeasedVectors, open_worker_runtime
from knotwork.services.worker.worker import Worker
from knotwork.settings import Settings
from tests.support.fake_apis import FakeConfluence, serve

pytestmark = [pytest.mark.integration, pytest.mark.models]


class CountingExtractor:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.chunks = 0

    def extract(self, texts: Sequence[str], *args: Any, **kwargs: Any) -> Any:
        self.chunks += len(texts)
        return self.inner.extract(texts, *args, **kwargs)


@dataclass
class Stack:
    settings: Settings
    rt: Runtime
    vectors: LeasedVectors
    queue: RedisJobQueue
    gate: CommitGate
    extractor: CountingExtractor

    def worker(self) -> Worker:
        return Worker(self.rt, self.queue, self.gate, name="w-test",
                      known_stale=self.gate.others_committed)

    def statuses(self) -> dict[str, str]:
        return {d.source_id: d.processing_status.value
                for d in self.rt.documents.list_documents(self.settings.group)}


@pytest.fixture
def stack(tmp_path: Path, falkordb_url: str) -> Iterator[Stack]:
    settings = Settings(data_dir=tmp_path / "data", group=f"qs_{secrets.token_hex(4)}",
                        falkordb_url=falkordb_url, embedder="hashing",  # type: ignore[arg-type]
                        queue_prefix=f"kwtest:{secrets.token_hex(6)}:", queue_max_retries=2,
                        queue_retry_backoff_s=0.05, queue_claim_idle_s=30)
    rt, vectors = open_worker_runtime(settings)
    queue = create_job_queue(settings, rt.graph)
    assert isinstance(queue, RedisJobQueue)
    gate = CommitGate(create_writer_lock(settings, rt.graph), vectors,
                      redis_client(settings, rt.graph), settings.queue_prefix)
    counting = CountingExtractor(rt.extractor)
    rt._extractor = counting  # type: ignore[assignment]
    try:
        yield Stack(settings, rt, vectors, queue, gate, counting)
    finally:
        queue.purge()
        client = redis_client(settings, rt.graph)
        leftovers = list(client.scan_iter(match=settings.queue_prefix + "*"))
        if leftovers:
            client.delete(*leftovers)
        rt.graph.delete_group(settings.group)
        rt.close()


def _sync(stack: Stack, api: FakeConfluence) -> Any:
    pipeline = IngestionPipeline(stack.rt, stack.settings.group, commit_guard=stack.gate)
    client = ConfluenceClient(api.base_url, api.token, email=api.email,
                              policy=RetryPolicy(max_retries=1))
    with client:
        return run_sync(pipeline, stack.rt.documents, stack.settings.group,
                        ConfluenceSource(client, "ENG"),
                        enqueue=sync_enqueuer(stack.settings, stack.queue, stack.rt.documents))


def test_queued_sync_enqueues_only_what_changed(stack: Stack) -> None:
    api = FakeConfluence(max_limit=2)
    api.add_page("101", "Team North", "<p>Alice Chen works at TechCorp.</p>")
    api.add_page("102", "Team South", "<p>Carol Diaz leads Project Phoenix.</p>")
    api.add_page("103", "Team East", "<p>Dan Wu works at Globex.</p>")
    with serve(api):
        first = _sync(stack, api)
        assert first.tasks_enqueued == 3 and first.documents_processed == 0
        assert sorted(d.source_id for d in first.added) == ["101", "102", "103"]
        assert set(stack.statuses().values()) == {"PENDING"}
        stats = stack.worker().run(until_empty=True, block_ms=50)
        assert stats.extracted == 3 and stack.extractor.chunks == 3
        assert set(stack.statuses().values()) == {"COMPLETED"}

        second = _sync(stack, api)
        assert second.tasks_enqueued == 0 and second.unchanged == 3
        assert stack.queue.stats().outstanding == 0
        assert stack.worker().run(until_empty=True, block_ms=50).jobs == 0
        assert stack.extractor.chunks == 3  # no extraction work at all

        api.edit_page("102", "<p>Carol Diaz leads Project Phoenix and Project Apollo.</p>")
        third = _sync(stack, api)
        assert third.tasks_enqueued == 1 and [d.source_id for d in third.updated] == ["102"]
        assert stack.statuses()["102"] == "PENDING"
        assert stack.worker().run(until_empty=True, block_ms=50).extracted == 1
        assert stack.extractor.chunks == 4
        names = {e.name for e in stack.rt.graph.list_entities(stack.settings.group)}
        assert "Project Apollo" in names or "Apollo" in names


def _raw(i: int, text: str) -> RawDocument:
    return RawDocument(source_system=SourceSystem.FILE, source_id=f"note-{i}.md",
                       title=f"Note {i}", content=text)


def test_a_failing_document_is_retried_then_dead_lettered_alone(
        stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = [_raw(1, "Alice Chen works at TechCorp."), _raw(2, "POISON Bob Stone works at Initech."),
            _raw(3, "Dan Wu works at Globex.")]
    report = enqueue_documents(docs, stack.rt.documents, stack.queue, stack.settings.group)
    assert report.enqueued == 3

    real = IngestionPipeline.process

    def flaky(self: IngestionPipeline, batch: Sequence[Any], progress: Any = None) -> Any:
        if any("POISON" in p.document.title + "".join(c.content for c in p.chunks)
               for p in batch):
            raise RuntimeError("extractor crashed on this text")
        return real(self, batch, progress)

    monkeypatch.setattr(IngestionPipeline, "process", flaky)
    stats = stack.worker().run(until_empty=True, block_ms=50)
    assert (stats.extracted, stats.retried, stats.dead) == (2, 2, 1)  # 2 retries, then the DLQ
    assert stack.statuses() == {"note-1.md": "COMPLETED", "note-2.md": "FAILED",
                                "note-3.md": "COMPLETED"}
    [dead] = stack.queue.dead_letters()
    assert dead.error == "RuntimeError: extractor crashed on this text"
    assert dead.retry_count == 2 and dead.kind == "EXTRACT_ENTITIES"

    monkeypatch.setattr(IngestionPipeline, "process", real)  # the bug is fixed
    assert stack.queue.requeue_dead() == 1
    again = stack.worker().run(until_empty=True, block_ms=50)
    assert again.extracted == 1 and again.dead == 0
    assert set(stack.statuses().values()) == {ProcessingStatus.COMPLETED.value}
    assert stack.vectors.opens >= 2  # the vector store is opened per commit, under the lock


def test_cli_sync_queue_then_worker(tmp_path: Path, falkordb_url: str) -> None:
    import json
    import os
    import subprocess
    import sys

    script = Path(sys.executable).with_name("knotwork")
    prefix = f"kwtest:{secrets.token_hex(6)}:"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KNOTWORK_")}
    env.update(KNOTWORK_DATA_DIR=str(tmp_path / "cli"), KNOTWORK_FALKORDB_URL=falkordb_url,
               KNOTWORK_EMBEDDER="hashing", KNOTWORK_GROUP=f"qc_{secrets.token_hex(4)}",
               KNOTWORK_QUEUE_PREFIX=prefix, HF_HUB_OFFLINE="1", NO_COLOR="1")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(script), *args], capture_output=True, text=True, env=env,
                              timeout=300, check=False)

    api = FakeConfluence()
    api.add_page("101", "Team North", "<p>Alice Chen works at TechCorp.</p>")
    api.add_page("102", "Team South", "<p>Carol Diaz leads Project Phoenix.</p>")
    try:
        with serve(api):
            args = ("sync", "confluence", "--base-url", api.base_url, "--space", "ENG",
                    "--email", api.email, "--token", api.token, "--queue")
            first = cli(*args, "--json")
            assert first.returncode == 0, first.stderr
            report = json.loads(first.stdout)
            assert report["tasks_enqueued"] == 2 and report["documents_processed"] == 0
            status = json.loads(cli("status", "--json").stdout)
            assert status["documents"]["PENDING"] == 2 and status["queue"]["streams"]["normal"] == 2
            worked = cli("worker", "--until-empty", "--json")
            assert worked.returncode == 0, worked.stderr
            assert json.loads(worked.stdout.splitlines()[-1])["extracted"] == 2
            again = cli(*args)
            assert again.returncode == 0, again.stderr
            assert "2 unchanged" in again.stdout and "tasks enqueued" not in again.stdout
            status = json.loads(cli("status", "--json").stdout)
            assert status["documents"]["COMPLETED"] == 2 and status["queue"]["outstanding"] == 0
    finally:
        import redis

        client = redis.Redis.from_url(falkordb_url)
        keys = list(client.scan_iter(match=prefix + "*"))
        if keys:
            client.delete(*keys)
        client.close()


def test_resolve_and_community_tasks_are_handled(stack: Stack) -> None:
    from knotwork.domain.tasks import CommunityUpdatedTask, EntityToResolve, ResolveEntityTask

    group = stack.settings.group
    enqueue_documents([_raw(1, "Alice Chen works at TechCorp. Alice Chen leads Project Atlas.")],
                      stack.rt.documents, stack.queue, group)
    assert stack.worker().run(until_empty=True, block_ms=50).extracted == 1
    alice = next(e for e in stack.rt.graph.list_entities(group) if e.name == "Alice Chen")
    stack.queue.enqueue(ResolveEntityTask(group_id=group,
                                          entity=EntityToResolve(display_name="alice chen")))
    stack.queue.enqueue(CommunityUpdatedTask(group_id=group, community_id="no-such-community",
                                             level=0, entity_count=3))
    stats = stack.worker().run(until_empty=True, block_ms=50)
    assert (stats.jobs, stats.resolved, stats.resummarized, stats.dead) == (2, 1, 0, 0)
    events = stack.rt.documents.list_audit(group, limit=50)  # type: ignore[attr-defined]
    [decision] = [e for e in events if e.action == "entity.resolution"]
    assert decision.entity_id == alice.id and "'alice chen' -> 'Alice Chen'" in decision.detail


def test_an_older_version_never_overwrites_a_newer_one(stack: Stack) -> None:
    from datetime import UTC, datetime

    from knotwork.domain.ids import content_hash

    group = stack.settings.group
    v1 = _raw(1, "Alice Chen works at TechCorp.").model_copy(
        update={"modified_at": datetime(2024, 3, 1, tzinfo=UTC)})
    v2 = v1.model_copy(update={"content": "Alice Chen works at Initech.",
                               "modified_at": datetime(2024, 4, 1, tzinfo=UTC)})
    enqueue_documents([v1], stack.rt.documents, stack.queue, group)
    enqueue_documents([v2], stack.rt.documents, stack.queue, group)  # both waiting
    stats = stack.worker().run(until_empty=True, block_ms=50)
    assert (stats.extracted, stats.unchanged) == (1, 1)
    [stored] = stack.rt.documents.list_documents(group)
    assert stored.content_hash == content_hash(f"{v2.title}\n{v2.content}")
    late = enqueue_documents([v1], stack.rt.documents, stack.queue, group)  # an old export
    assert (late.enqueued, late.unchanged) == (0, 1)
    [stored] = stack.rt.documents.list_documents(group)
    assert stored.content_hash == content_hash(f"{v2.title}\n{v2.content}")
