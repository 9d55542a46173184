"""The ``knotwork`` console script, run for real in subprocesses (design doc 003 CLI contract).

One module-scoped knowledge base (the bundled sample data, ingested once into a temp data dir
and a fresh tenant) serves every read-only test; tests that write use their own data dir and
tenant. Every process shares the session FalkorDB (``KNOTWORK_FALKORDB_URL``) and uses the
model-free ``hashing`` embedder, so a command costs about a second of start-up instead of the
MiniLM/torch import (the MiniLM path is covered in-process by test_api and the scenario test).
spaCy extraction is real.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import knotwork
from knotwork.settings import EmbedderBackend, Settings

pytestmark = [pytest.mark.integration, pytest.mark.models]

SAMPLE_DATA = Path(knotwork.__file__).parent / "sample_data"
TRASHED_PAGE = "393222"  # "Atlas Launch Plan (draft)": status trashed, says "April 15"
CITATION_KEYS = {"document_id", "source_system", "source_id", "title", "url", "created_at",
                 "chunk_id", "text"}
ENTITY_KEYS = {"id", "name", "type", "aliases", "summary"}
FACT_KEYS = {"id", "source", "target", "type", "fact", "valid_at", "invalid_at", "episodes"}

_SCRIPT = Path(sys.executable).with_name("knotwork")
COMMAND = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "knotwork.services.cli"]


@dataclass
class Cli:
    """The console script bound to one data dir and one tenant."""

    data_dir: Path
    falkordb_url: str
    group: str = field(default_factory=lambda: f"cli_{secrets.token_hex(4)}")
    database_url: str | None = None

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KNOTWORK_")}
        env.update({
            "KNOTWORK_DATA_DIR": str(self.data_dir),
            "KNOTWORK_FALKORDB_URL": self.falkordb_url,
            "KNOTWORK_EMBEDDER": "hashing",
            "HF_HUB_OFFLINE": "1",
            "NO_COLOR": "1",
        })
        if self.database_url:
            env["KNOTWORK_DATABASE_URL"] = self.database_url
        return env

    def run(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([*COMMAND, "--group", self.group, *args], env=self.env(),
                              capture_output=True, text=True, timeout=300, check=False)
        if ok:
            assert proc.returncode == 0, f"knotwork {' '.join(args)} failed:\n{proc.stderr}"
        return proc

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args).stdout)

    def export(self) -> dict[str, Any]:
        return self.json("graph", "export", "--json")

    def snapshot(self) -> dict[str, Any]:
        """What ``graph export --json`` prints, read in-process (a second cheaper than a run)."""
        from knotwork.core import Knotwork

        settings = Settings(data_dir=self.data_dir, group=self.group,  # type: ignore[arg-type]
                            falkordb_url=self.falkordb_url, database_url=self.database_url,
                            embedder=EmbedderBackend.HASHING)
        with Knotwork(settings) as kw:
            return kw.export_graph().model_dump(mode="json")

    def ask(self, question: str, *extra: str) -> dict[str, Any]:
        payload = self.json("query", question, "--json", *extra)
        _check_answer_shape(payload)
        return payload


@dataclass
class KnowledgeBase:
    cli: Cli
    ingest_output: str
    export: dict[str, Any]


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> KnowledgeBase:
    cli = Cli(tmp_path_factory.mktemp("cli_kb"), falkordb_url)
    ingest = cli.run("ingest", str(SAMPLE_DATA))
    return KnowledgeBase(cli, ingest.stdout, cli.export())


@pytest.fixture
def fresh(tmp_path: Path, falkordb_url: str) -> Iterator[Cli]:
    yield Cli(tmp_path / "data", falkordb_url)


def _check_answer_shape(payload: dict[str, Any]) -> None:
    assert {"answer", "citations", "confidence", "mode_used", "context"} <= set(payload)
    assert isinstance(payload["answer"], str)
    assert isinstance(payload["context"], str)
    assert 0.0 <= payload["confidence"] <= 1.0
    assert payload["mode_used"] in {"local", "global", "drift"}  # a concrete mode, never "auto"
    for citation in payload["citations"]:
        assert set(citation) == CITATION_KEYS, citation
        assert citation["source_id"] != TRASHED_PAGE, "the trashed page was cited"
    assert "April 15" not in payload["answer"]


def _cited(payload: dict[str, Any]) -> set[tuple[str, str]]:
    return {(c["source_system"], c["source_id"]) for c in payload["citations"]}


def _sample_document_count() -> int:
    from knotwork.ingestion.loaders.detect import load_path

    return len(load_path(SAMPLE_DATA).documents)


# --------------------------------------------------------------------------- ingest / query


def test_ingest_reports_every_sample_document_as_new(kb: KnowledgeBase) -> None:
    count = _sample_document_count()
    assert f"ingested {count} mixed documents (0 unchanged," in kb.ingest_output
    assert kb.export["entities"] and kb.export["facts"]


def test_who_leads_project_atlas_is_answered_from_the_confluence_page(kb: KnowledgeBase) -> None:
    result = kb.cli.ask("Who leads Project Atlas?")
    assert "Priya Raman" in result["answer"]
    page = [c for c in result["citations"] if c["source_id"] == "393219"]
    assert page, result["citations"]
    assert page[0]["source_system"] == "confluence"
    assert page[0]["title"] == "Project Atlas"
    assert "/pages/393219/" in page[0]["url"]
    assert page[0]["created_at"].startswith("2024-12-10")
    assert "Priya Raman leads Project Atlas" in page[0]["text"]
    assert result["confidence"] > 0.3


def test_a_slack_question_cites_the_slack_message(kb: KnowledgeBase) -> None:
    result = kb.cli.ask("Who is taking over the on-call rotation for the Billing Service?")
    assert "Sofia Lindqvist" in result["answer"]
    message = [c for c in result["citations"]
               if c["source_id"] == "eng-platform/1740996120.000200"]
    assert message, result["citations"]
    assert message[0]["source_system"] == "slack"
    assert message[0]["created_at"] == "2025-03-03T10:02:00Z"
    assert "on-call rotation" in message[0]["text"]


def test_as_of_answers_from_what_was_known_then(kb: KnowledgeBase) -> None:
    then = kb.cli.ask("When is the Atlas launch?", "--as-of", "2025-03-01")
    assert "June 3, 2025" in then["answer"]
    assert "June 10" not in then["answer"]  # moved in Slack on 2025-03-05
    assert ("confluence", "393219") in _cited(then)
    assert all(c["created_at"] <= "2025-03-01" for c in then["citations"])


def test_the_trashed_draft_page_is_never_cited(kb: KnowledgeBase) -> None:
    result = kb.cli.ask("Was the Atlas launch scheduled for April 15?")
    assert TRASHED_PAGE not in {c["source_id"] for c in result["citations"]}
    assert "April 15" not in result["answer"] and "April 15" not in result["context"]
    texts = [f["fact"] for f in kb.export["facts"]] + [e["summary"] for e in kb.export["entities"]]
    assert not any("April 15" in text for text in texts)


def test_mode_is_case_insensitive_and_plain_output_is_readable(kb: KnowledgeBase) -> None:
    out = kb.cli.run("query", "Who leads Project Atlas?", "--mode", "LOCAL").stdout
    assert "Priya Raman" in out.splitlines()[0]
    assert "/pages/393219/" in out
    assert "mode local" in out


def test_reingesting_the_same_path_changes_nothing(kb: KnowledgeBase) -> None:
    count = _sample_document_count()
    again = kb.cli.run("ingest", str(SAMPLE_DATA)).stdout
    assert (f"ingested 0 mixed documents ({count} unchanged, 0 chunks, 0 entities, "
            "0 facts touched)") in again
    assert kb.cli.export() == kb.export


# --------------------------------------------------------------------------- graph / entities


def test_graph_export_has_the_contract_shape(kb: KnowledgeBase) -> None:
    export = kb.export
    assert set(export) == {"entities", "facts"}
    ids = {e["id"] for e in export["entities"]}
    assert len(ids) == len(export["entities"])
    for entity in export["entities"]:
        assert ENTITY_KEYS <= set(entity), entity
        assert entity["name"] and entity["type"].isupper()
        assert isinstance(entity["aliases"], list) and isinstance(entity["summary"], str)
    for fact in export["facts"]:
        assert FACT_KEYS <= set(fact), fact
        assert fact["source"] in ids and fact["target"] in ids
        assert fact["valid_at"] is None or fact["valid_at"].endswith("Z")
        assert fact["invalid_at"] is None or fact["invalid_at"] >= (fact["valid_at"] or "")
        assert fact["episodes"] and all(isinstance(e, str) for e in fact["episodes"])
    by_name = {e["name"]: e for e in export["entities"]}
    assert by_name["Priya Raman"]["type"] == "PERSON"
    assert by_name["Sofia Lindqvist"]["type"] == "PERSON"
    priya, atlas = by_name["Priya Raman"]["id"], by_name["Project Atlas"]["id"]
    assert any(f["source"] == priya and f["target"] == atlas
               and "Priya Raman leads Project Atlas" in f["fact"] for f in export["facts"])

    summary = kb.cli.run("graph", "export", "--summary").stdout.strip()
    assert summary == f"{len(export['entities'])} entities, {len(export['facts'])} facts"
    assert kb.cli.snapshot() == export  # the in-process read the error tests compare with


def test_entities_resolve_full_name_given_name_and_unknown(kb: KnowledgeBase) -> None:
    priya_id = next(e["id"] for e in kb.export["entities"] if e["name"] == "Priya Raman")

    full = kb.cli.json("entities", "resolve", "Priya Raman", "--json")
    assert {"entity_id", "name", "confidence", "alternatives"} <= set(full)
    assert full["entity_id"] == priya_id
    assert full["name"] == "Priya Raman"
    assert 0.0 < full["confidence"] <= 1.0
    assert all({"entity_id", "name", "confidence"} <= set(a) for a in full["alternatives"])
    assert priya_id not in {a["entity_id"] for a in full["alternatives"]}

    given = kb.cli.json("entities", "resolve", "Priya", "--type", "person", "--json")
    assert given["entity_id"] == priya_id

    unknown = kb.cli.json("entities", "resolve", "Zebulon Quarterhorse", "--json")
    assert unknown["entity_id"] is None
    assert unknown["name"] is None


# --------------------------------------------------------------------------- episodes


def test_episode_add_with_time_and_source(fresh: Cli) -> None:
    content = json.dumps({"speaker": "Alice Chen",
                          "message": "Alice Chen works at TechCorp as a senior software engineer."})
    added = fresh.json("episode", "add", content, "--source", "json",
                       "--time", "2026-02-03T13:00:00+01:00")
    assert set(added) == {"episode_ids", "entities", "facts", "unchanged"}
    assert len(added["episode_ids"]) == 1 and added["unchanged"] is False
    assert added["entities"] >= 2 and added["facts"] >= 1

    export = fresh.export()
    assert {"Alice Chen", "TechCorp"} <= {e["name"] for e in export["entities"]}
    works = [f for f in export["facts"] if f["type"] == "WORKS_AT"]
    assert len(works) == 1
    assert works[0]["valid_at"] == "2026-02-03T12:00:00Z"  # --time, normalised to UTC
    assert works[0]["episodes"] == added["episode_ids"]


# --------------------------------------------------------------------------- errors


def _corrupt_zip(tmp: Path) -> Path:
    path = tmp / "slack-export.zip"
    path.write_bytes(b"PK\x03\x04 this is not really a zip archive")
    return path


def _malformed_confluence_export(tmp: Path) -> Path:
    folder = tmp / "confluence"
    folder.mkdir()
    (folder / "393300-broken-page.json").write_text('{"id": "393300", "title": ', encoding="utf-8")
    return folder


ERRORS = {
    "nonexistent path": (lambda tmp: ["ingest", str(tmp / "no-such-export")], "does not exist"),
    "corrupt zip": (lambda tmp: ["ingest", str(_corrupt_zip(tmp))], "zip"),
    "malformed JSON": (lambda tmp: ["ingest", str(_malformed_confluence_export(tmp))],
                       "malformed JSON"),
    "unknown mode": (lambda tmp: ["query", "Who leads Project Atlas?", "--mode", "sideways"],
                     "mode"),
    "bad --as-of": (lambda tmp: ["query", "Who leads Project Atlas?", "--as-of", "last tuesday"],
                    "ISO-8601"),
    "bad --time": (lambda tmp: ["episode", "add", "Priya Raman left.", "--time", "2025-13-45"],
                   "ISO-8601"),
    "unknown --source": (lambda tmp: ["episode", "add", "Priya Raman left.", "--source", "fax"],
                         "source"),
    "invalid JSON episode": (lambda tmp: ["episode", "add", "{not json", "--source", "json"],
                             "JSON"),
    "missing argument": (lambda tmp: ["query"], "question"),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_an_error_is_one_line_and_loses_nothing(case: str, kb: KnowledgeBase,
                                                tmp_path: Path) -> None:
    build_args, mentions = ERRORS[case]
    proc = kb.cli.run(*build_args(tmp_path), ok=False)
    assert proc.returncode != 0
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].strip(), proc.stderr
    assert mentions.lower() in lines[0].lower(), lines[0]
    assert "Traceback" not in proc.stderr
    assert kb.cli.snapshot() == kb.export


def test_query_where_nothing_was_ingested_says_so_and_creates_nothing(fresh: Cli) -> None:
    proc = fresh.run("query", "Who leads Project Atlas?", ok=False)
    assert proc.returncode != 0 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "nothing has been ingested" in lines[0], proc.stderr
    assert not fresh.data_dir.exists()


def test_query_on_a_tenant_with_nothing_ingested_says_so(kb: KnowledgeBase) -> None:
    other = Cli(kb.cli.data_dir, kb.cli.falkordb_url)  # the same data dir, another tenant
    proc = other.run("query", "Who leads Project Atlas?", ok=False)
    assert proc.returncode != 0 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "nothing has been ingested" in lines[0], proc.stderr
    assert f"--group {other.group} ingest" in lines[0]
    assert kb.cli.ask("Who leads Project Atlas?")["citations"]  # the ingested tenant still answers


def test_version_is_one_line_and_opens_nothing(fresh: Cli) -> None:
    proc = fresh.run("--version")
    assert proc.stdout.strip() == f"knotwork {knotwork.__version__}"
    assert not fresh.data_dir.exists()


# --------------------------------------------------------------------------- PostgreSQL


def test_ingest_and_query_with_a_postgres_document_store(fresh: Cli, postgres_url: str) -> None:
    fresh.database_url = postgres_url
    first = fresh.run("ingest", str(SAMPLE_DATA / "slack")).stdout
    assert "slack documents (0 unchanged," in first
    result = fresh.ask("Who is taking over the on-call rotation for the Billing Service?")
    assert "Sofia Lindqvist" in result["answer"]
    assert ("slack", "eng-platform/1740996120.000200") in _cited(result)
    assert not (fresh.data_dir / "knotwork.db").exists()  # documents went to PostgreSQL


# --------------------------------------------------------------------------- serve


def test_serve_answers_healthz(fresh: Cli) -> None:
    import socket
    import time
    import urllib.request

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([*COMMAND, "--group", fresh.group, "serve", "--port", str(port)],
                              env=fresh.env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                    assert json.loads(r.read()) == {"status": "ok"}
                    break
            except OSError:
                assert server.poll() is None, server.communicate()[1]
                assert time.monotonic() < deadline, "knotwork serve did not come up"
                time.sleep(0.2)
    finally:
        server.terminate()
        try:
            _, log = server.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            _, log = server.communicate()
    # uvicorn shuts down cleanly on SIGTERM (lifespan closed), then re-raises the signal
    assert server.returncode in (0, -signal.SIGTERM, 128 + signal.SIGTERM), log
    assert "Application shutdown complete" in log, log
