"""The job queue end to end: ``ingest --queue`` → ``knotwork worker`` processes, SIGKILL in the
middle and a restart, against a clean inline run of the same documents; a second enqueue /
sync over unchanged sources creates no task. Real stores: the session FalkorDB (graph and
Redis streams), SQLite and qdrant-edge in a temp dir (so the worker's vector lease is real).
"""

from __future__ import annotations

import json
import os
import random
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from knotwork.core import Knotwork
from knotwork.domain.models import ProcessingStatus
from knotwork.infra.queue.redis_jobs import RedisJobQueue
from knotwork.infra.sql.store import SqlDocumentStore
from knotwork.ingestion.loaders.detect import load_path
from knotwork.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.models]

DOCS = 500
FIRST = ["Alice", "Bruno", "Chiara", "Dmitri", "Esther", "Farid", "Greta", "Hiro", "Ines", "Jonas"]
LAST = ["Chen", "Okafor", "Lindqvist", "Moreau", "Tanaka", "Haddad", "Novak", "Ferreira"]
PROJECTS = ["Atlas", "Borealis", "Cobalt", "Dynamo", "Ember", "Fjord", "Granite", "Helix"]
TEAMS = ["Payments Team", "Search Team", "Platform Team", "Mobile Team", "Data Team"]
COMPANIES = ["TechCorp", "Initech", "Globex", "Umbrella Labs"]


def _person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def write_corpus(root: Path, count: int, seed: int = 7) -> Path:
    """Small markdown notes naming people, projects, teams and companies in full."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        a, b = _person(rng), _person(rng)
        project, team, company = rng.choice(PROJECTS), rng.choice(TEAMS), rng.choice(COMPANIES)
        lines = [f"# Note {i:04d}: Project {project}", "",
                 f"{a} works at {company}. {a} leads Project {project}.",
                 f"{b} is a member of the {team}. {b} reports to {a}.",
                 f"The {team} owns Project {project} since March {2019 + i % 6}."]
        (root / f"note-{i:04d}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


class Env:
    def __init__(self, tmp: Path, falkordb_url: str, name: str) -> None:
        self.data_dir = tmp / name
        self.group = f"q_{secrets.token_hex(4)}"
        self.prefix = f"kwtest:{secrets.token_hex(6)}:"
        self.falkordb_url = falkordb_url
        self.vars = {
            **os.environ, "KNOTWORK_DATA_DIR": str(self.data_dir), "KNOTWORK_GROUP": self.group,
            "KNOTWORK_FALKORDB_URL": falkordb_url, "KNOTWORK_EMBEDDER": "hashing",
            "KNOTWORK_QUEUE_PREFIX": self.prefix, "KNOTWORK_QUEUE_CLAIM_IDLE_S": "1",
            "KNOTWORK_QUEUE_LOCK_TTL_S": "2",
            "HF_HUB_OFFLINE": "1"}

    def settings(self) -> Settings:
        return Settings(data_dir=self.data_dir, group=self.group, falkordb_url=self.falkordb_url,
                        embedder="hashing", queue_prefix=self.prefix)  # type: ignore[arg-type]

    def cli(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "knotwork.services.cli", *args],
                              env=self.vars, capture_output=True, text=True, timeout=timeout,
                              check=False)

    def start_worker(self, *args: str) -> subprocess.Popen[bytes]:
        log = (self.data_dir.parent / f"{self.data_dir.name}-worker.log").open("ab")
        return subprocess.Popen([sys.executable, "-m", "knotwork.services.cli", "worker", *args],
                                env=self.vars, stdout=log, stderr=subprocess.STDOUT)

    def queue(self) -> RedisJobQueue:
        return RedisJobQueue.from_url(self.falkordb_url, prefix=self.prefix)

    def documents(self) -> SqlDocumentStore:
        return SqlDocumentStore(self.settings().resolved_database_url())

    def cleanup(self) -> None:
        client = redis.Redis.from_url(self.falkordb_url)
        keys = list(client.scan_iter(match=self.prefix + "*"))
        if keys:
            client.delete(*keys)
        client.close()


def counts(env: Env) -> dict[str, object]:
    """What a run stored; ids are per tenant, so facts are compared by their content."""
    with Knotwork(env.settings()) as kw:
        rt = kw.runtime
        graph = rt.graph.counts(env.group)
        sql = rt.documents.counts(env.group)
        statuses = sorted({d.processing_status.value for d in rt.documents.list_documents(env.group)})
        names = sorted((e.name, e.type.value) for e in rt.graph.list_entities(env.group))
        by_id = {e.id: e.name for e in rt.graph.list_entities(env.group)}
        facts = sorted((by_id[f.source_id], by_id[f.target_id], f.type.value, f.fact,
                        len(f.episodes), f.invalid_at is None)
                       for f in rt.graph.list_facts(env.group))
        from knotwork.domain.ports import Collection

        chunk_vectors = rt.vectors.count(Collection.CHUNKS, env.group)
        rt.graph.delete_group(env.group)
    return {"documents": sql.documents, "chunks": sql.chunks, "mentions": sql.mentions,
            "entities": graph.entities, "facts": graph.facts, "episodes": graph.episodes,
            "graph_mentions": graph.mentions, "statuses": statuses, "entity_names": names,
            "facts_with_evidence": facts, "chunk_vectors": chunk_vectors}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "corpus", DOCS)


@pytest.fixture
def envs(tmp_path: Path, falkordb_url: str) -> Iterator[tuple[Env, Env]]:
    clean, queued = Env(tmp_path, falkordb_url, "clean"), Env(tmp_path, falkordb_url, "queued")
    try:
        yield clean, queued
    finally:
        clean.cleanup()
        queued.cleanup()


def _completed(env: Env) -> int:
    store = env.documents()
    try:
        return sum(1 for d in store.list_documents(env.group)
                   if d.processing_status is ProcessingStatus.COMPLETED)
    finally:
        store.close()


def test_sigkill_mid_ingest_then_restart_equals_a_clean_run(corpus: Path,
                                                           envs: tuple[Env, Env]) -> None:
    clean, queued = envs
    with Knotwork(clean.settings()) as kw:
        inline = kw.ingest_documents(load_path(corpus).documents)
    assert inline.documents_ingested == DOCS

    enqueued = queued.cli("ingest", str(corpus), "--queue")
    assert enqueued.returncode == 0, enqueued.stderr
    assert f"enqueued {DOCS} " in enqueued.stdout
    queue = queued.queue()
    assert queue.stats().outstanding == DOCS
    status = json.loads(queued.cli("status", "--json").stdout)
    assert status["documents"]["PENDING"] == DOCS and status["queue"]["streams"]["normal"] == DOCS

    worker = queued.start_worker()
    try:
        deadline = time.monotonic() + 600
        while _completed(queued) < 40:  # well into the run, far from its end
            assert worker.poll() is None, "the worker exited early"
            assert time.monotonic() < deadline, "the worker made no progress"
            time.sleep(0.05)
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)
    finally:
        if worker.poll() is None:
            worker.kill()
    done_at_kill = _completed(queued)
    assert 40 <= done_at_kill < DOCS
    stats = queue.stats()
    assert stats.outstanding > 0 and sum(s.pending for s in stats.streams) > 0  # it held jobs

    restarted = queued.cli("worker", "--until-empty", "--json")
    assert restarted.returncode == 0, restarted.stderr
    totals = json.loads(restarted.stdout.strip().splitlines()[-1])
    assert totals["dead"] == 0, (totals, restarted.stderr[-3000:])
    assert totals["extracted"] + totals["unchanged"] >= DOCS - done_at_kill
    assert queue.stats().outstanding == 0, (queue.stats(), totals, restarted.stderr[-3000:])

    assert counts(queued) == counts(clean)

    again = queued.cli("ingest", str(corpus), "--queue")
    assert again.returncode == 0, again.stderr
    assert f"enqueued 0 files documents (0 new, 0 changed, {DOCS} unchanged)" in again.stdout
    assert queue.stats().outstanding == 0  # zero tasks: zero extraction work
    queue.close()


def test_status_and_dlq_show_a_poison_task(tmp_path: Path, falkordb_url: str) -> None:
    env = Env(tmp_path, falkordb_url, "poison")
    try:
        client = redis.Redis.from_url(falkordb_url, decode_responses=True)
        queue = env.queue()
        assert queue.fetch("setup") == []  # creates the streams and their group
        client.xadd(f"{env.prefix}jobs:normal", {"kind": "EXTRACT_ENTITIES", "body": "{oops"})
        ran = env.cli("worker", "--until-empty")
        assert ran.returncode == 0, ran.stderr
        status = json.loads(env.cli("status", "--json").stdout)
        assert status["queue"]["dead"] == 1 and status["queue"]["outstanding"] == 0
        assert status["dead_letters"][0]["error"].startswith("undecodable task")
        listed = env.cli("queue", "dlq", "--json")
        assert listed.returncode == 0
        assert json.loads(listed.stdout)[0]["kind"] == "EXTRACT_ENTITIES"
        table = env.cli("status")
        assert "dead letters" in table.stdout and "undecodable task" in table.stdout
        client.close()
        queue.close()
    finally:
        env.cleanup()


def _workspace(root: Path) -> Path:
    """A Slack export whose users.json holds the staff (one of them deactivated)."""
    slack = root / "workspace"
    (slack / "general").mkdir(parents=True)
    people = [("U1", "Marisol Quenby", False), ("U2", "Teodor Halvik", False),
              ("U3", "Ines Varga", True)]
    (slack / "users.json").write_text(json.dumps([
        {"id": uid, "name": name.split()[0].lower(), "real_name": name, "deleted": left,
         "profile": {"real_name": name, "title": "Engineer (left Mar 2025)" if left else "Engineer",
                     "email": f"{name.split()[0].lower()}@brightwaterlabs.com"}}
        for uid, name, left in people]))
    (slack / "channels.json").write_text(json.dumps([{"id": "C1", "name": "general",
                                                      "members": ["U1", "U2", "U3"]}]))
    (slack / "general" / "2025-02-03.json").write_text(json.dumps([
        {"type": "message", "user": "U1", "ts": "1738576800.000100",
         "text": "Welcome to Brightwater Labs! Marisol Quenby leads the Data Team."},
        {"type": "message", "user": "U2", "ts": "1738577400.000100",
         "text": "Teodor Halvik reports to Marisol Quenby. Ines Varga joined the Data Team."}]))
    return slack


def _employment(env: Env) -> list[tuple[str, str, bool]]:
    with Knotwork(env.settings()) as kw:
        graph = kw.runtime.graph
        by_id = {e.id: e.name for e in graph.list_entities(env.group)}
        return sorted((by_id[f.source_id], by_id[f.target_id], f.invalid_at is None)
                      for f in graph.list_facts(env.group) if f.type.value == "WORKS_AT")


def test_a_queued_workspace_ingest_relates_its_staff_as_an_inline_one_does(
        tmp_path: Path, envs: tuple[Env, Env]) -> None:
    clean, queued = envs
    export = _workspace(tmp_path)
    with Knotwork(clean.settings()) as kw:
        kw.ingest_path(export)
    inline = _employment(clean)
    assert {(p, open_) for p, _, open_ in inline} >= {("Marisol Quenby", True),
                                                      ("Ines Varga", False)}

    enqueued = queued.cli("ingest", str(export), "--queue")
    assert enqueued.returncode == 0, enqueued.stderr
    assert "the 3 people of the workspace" in enqueued.stdout
    done = queued.cli("worker", "--until-empty", "--json")
    assert done.returncode == 0, done.stderr
    totals = json.loads(done.stdout.strip().splitlines()[-1])
    assert totals["dead"] == 0 and totals["employment_facts"] == len(inline), totals
    assert queued.queue().stats().outstanding == 0
    assert _employment(queued) == inline
