"""Fault tests on the embedded stack: the graph server (FalkorDB, also the Redis of the event
streams) killed during ingestion and restarted; a locked vector store.

After the crash, ingesting the same source again and ``knotwork reconcile`` must end with the
same counts as a clean run: documents, chunks, mentions, entities, facts, episodes, vectors.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.models]

_SCRIPT = Path(sys.executable).with_name("knotwork")
COMMAND = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "knotwork.services.cli"]
TEAMS = ["Payments", "Search", "Identity", "Billing", "Platform", "Data", "Mobile", "Security"]
PEOPLE = ["Ana Ruiz", "Bo Lindgren", "Chen Wei", "Dara Okoye", "Emil Novak", "Farah Aziz",
          "Gus Moreno", "Hana Sato", "Ivo Petrov", "Jia Li", "Kofi Mensah", "Lea Roth"]
PAGES = 48


def _pages(root: Path) -> Path:
    folder = root / "space"
    folder.mkdir(parents=True)
    for i in range(PAGES):
        team, lead, member = TEAMS[i % 8], PEOPLE[i % 12], PEOPLE[(i * 5 + 3) % 12]
        html = (f"<h1>Project P{i}</h1><p>{lead} leads Project P{i} for the {team} team. "
                f"{member} works on Project P{i}. Project P{i} uses PostgreSQL and depends on "
                f"Project P{(i + 1) % PAGES}.</p>")
        page = {"id": str(5000 + i), "status": "current", "title": f"Project P{i}",
                "spaceId": "7", "createdAt": "2026-02-01T10:00:00.000Z",
                "version": {"number": 1, "createdAt": f"2026-02-{1 + i % 27:02d}T10:00:00.000Z"},
                "body": {"storage": {"representation": "storage", "value": html}}}
        (folder / f"{5000 + i}.json").write_text(json.dumps(page))
    return folder


def _env(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KNOTWORK_")}
    env.update({"KNOTWORK_DATA_DIR": str(data), "KNOTWORK_EMBEDDER": "hashing",
                "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"})
    return env


def _run(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*COMMAND, *args], env=_env(data), capture_output=True, text=True,
                          timeout=600, check=False)


def _counts(data: Path) -> dict[str, Any]:
    from knotwork.core import Knotwork
    from knotwork.domain.ports import Collection
    from knotwork.settings import EmbedderBackend, Settings

    with Knotwork(Settings(data_dir=data, embedder=EmbedderBackend.HASHING)) as kw:  # type: ignore[arg-type]
        group = kw.settings.group
        graph = kw.runtime.graph.counts(group)
        docs = kw.runtime.documents.counts(group)
        statuses = sorted({d.processing_status.value
                           for d in kw.runtime.documents.list_documents(group)})
        vectors = {c.value: kw.runtime.vectors.count(c, group)
                   for c in (Collection.ENTITIES, Collection.FACTS, Collection.CHUNKS)}
        names = sorted(e.name for e in kw.runtime.graph.list_entities(group))
        return {"graph": graph.model_dump(), "documents": docs.model_dump(),
                "statuses": statuses, "vectors": vectors, "entity_names": names}


def _completed(data: Path) -> int:
    db = data / "knotwork.db"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            row = conn.execute("select count(*) from documents where processing_status = "
                               "'COMPLETED'").fetchone()
            return int(row[0])
    except sqlite3.Error:
        return 0


def test_graph_server_killed_mid_ingest_then_resumed_and_reconciled(tmp_path: Path) -> None:
    source = _pages(tmp_path)
    clean = tmp_path / "clean"
    assert _run(clean, "ingest", str(source)).returncode == 0
    expected = _counts(clean)
    assert expected["documents"]["documents"] == PAGES

    crashed = tmp_path / "crashed"
    proc = subprocess.Popen([*COMMAND, "ingest", str(source)], env=_env(crashed),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while _completed(crashed) == 0 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    state = json.loads((crashed / "falkordb" / "server.json").read_text())
    os.kill(int(state["pid"]), signal.SIGKILL)  # the graph server dies mid-ingest
    _, stderr = proc.communicate(timeout=300)
    assert 0 < _completed(crashed) < PAGES, "the kill came too late to test anything"
    assert proc.returncode == 2, stderr  # errors exit 2 with one line (a store outage too)
    # one error line; a slow ingest may have printed its periodic progress lines before it
    lines = stderr.strip().splitlines()
    errors = [line for line in lines if not line.startswith("ingest: ")]
    assert len(errors) == 1 and errors[0].startswith("knotwork: error:"), stderr
    assert "run the command again" in stderr

    resumed = _run(crashed, "ingest", str(source))  # restarts the server from its AOF
    assert resumed.returncode == 0, resumed.stderr
    reconciled = _run(crashed, "reconcile", "--json")
    assert reconciled.returncode == 0, reconciled.stderr
    assert _counts(crashed) == expected
    again = json.loads(_run(crashed, "reconcile", "--json").stdout)
    assert again["orphan_episode_documents"] == [] and again["entity_vectors_added"] == 0


def test_a_locked_vector_store_is_a_clear_error(tmp_path: Path) -> None:
    from knotwork.core import Knotwork
    from knotwork.settings import EmbedderBackend, Settings

    data = tmp_path / "data"
    with Knotwork(Settings(data_dir=data, embedder=EmbedderBackend.HASHING)) as kw:  # type: ignore[arg-type]
        kw.add_episode("Ana Ruiz leads Project Kestrel.")
        proc = _run(data, "query", "Who leads Project Kestrel?")
        assert proc.returncode == 2
        [line] = proc.stderr.strip().splitlines()
        assert "another process" in line and "qdrant" in line
        # what to do about it: which process to stop, or how to share the stores
        assert "knotwork serve" in line and "KNOTWORK_QDRANT_URL" in line
    assert _run(data, "query", "Who leads Project Kestrel?").returncode == 0  # free again


def test_sigterm_stops_the_embedded_graph_server_with_the_cli(tmp_path: Path) -> None:
    source = _pages(tmp_path)
    data = tmp_path / "data"
    proc = subprocess.Popen([*COMMAND, "ingest", str(source)], env=_env(data),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    state_file = data / "falkordb" / "server.json"
    deadline = time.monotonic() + 120
    server_pid = None
    while server_pid is None and time.monotonic() < deadline:
        try:  # the file may exist before its content is written
            server_pid = int(json.loads(state_file.read_text())["pid"])
        except (OSError, ValueError, KeyError):
            time.sleep(0.1)
    assert server_pid is not None, "the embedded FalkorDB never started"
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=120)
    assert proc.returncode != 0
    gone_by = time.monotonic() + 60  # a loaded machine may take a while to reap it
    while True:  # the server is gone (no orphan left behind)
        try:
            os.kill(server_pid, 0)
        except ProcessLookupError:
            break
        if time.monotonic() > gone_by:
            pytest.fail(f"the embedded FalkorDB (pid {server_pid}) outlived the CLI")
        time.sleep(0.1)


def test_queue_redis_killed_under_a_worker_then_reconciled(tmp_path: Path) -> None:
    """Embedded, the job queue lives in the FalkorDB server's Redis: kill that server while a
    worker drains ``ingest --queue``; the worker reconnects (restarting it from its append-only
    file), redelivered tasks are idempotent, and after reconcile the counts equal a clean run."""
    source = _pages(tmp_path)
    clean = tmp_path / "clean"
    assert _run(clean, "ingest", str(source)).returncode == 0
    expected = _counts(clean)

    crashed = tmp_path / "crashed"
    queued = _run(crashed, "ingest", str(source), "--queue")
    assert queued.returncode == 0, queued.stderr
    worker = subprocess.Popen([*COMMAND, "worker", "--until-empty", "--json"], env=_env(crashed),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while _completed(crashed) < 3 and time.monotonic() < deadline and worker.poll() is None:
        time.sleep(0.1)
    state = json.loads((crashed / "falkordb" / "server.json").read_text())
    os.kill(int(state["pid"]), signal.SIGKILL)  # the queue's Redis dies under the worker
    stdout, stderr = worker.communicate(timeout=600)
    assert 0 < _completed(crashed), "the worker never started"
    assert "lost the queue's Redis" in stderr or worker.returncode != 0, stderr
    if worker.returncode == 0:  # reconnected and drained the queue itself
        assert json.loads(stdout.strip().splitlines()[-1])["jobs"] > 0
    else:  # gave up reconnecting: a second worker finishes the queue
        again = _run(crashed, "worker", "--until-empty", "--json")
        assert again.returncode == 0, again.stderr
    status = json.loads(_run(crashed, "status", "--json").stdout)
    assert status["queue"]["dead"] == 0 and status["queue"]["outstanding"] == 0, status
    assert status["documents"]["COMPLETED"] == PAGES, status
    reconciled = _run(crashed, "reconcile", "--json")
    assert reconciled.returncode == 0, reconciled.stderr
    assert _counts(crashed) == expected
