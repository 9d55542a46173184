"""Incremental sync end to end: live-API connectors over real HTTP into real stores.

Confluence and Slack are local HTTP servers (``tests/support/fake_apis.py``) whose data the
tests change between syncs; stores are the embedded stack (SQLite, Qdrant edge, the session
FalkorDB) with real spaCy extraction behind an extractor that counts its work.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from knotwork.core import ExportedFact, Knotwork
from knotwork.domain.ids import stable_id
from knotwork.domain.models import SourceSystem
from knotwork.domain.ports import Collection
from knotwork.ingestion.connectors.confluence import ConfluenceClient, ConfluenceSource
from knotwork.ingestion.connectors.http import ConnectorError, RetryPolicy
from knotwork.ingestion.connectors.slack import SlackClient, SlackSource
from knotwork.ingestion.embedding_text import chunk_passage_ids
from knotwork.ingestion.sync import SyncReport
from tests.conftest import SettingsFactory
from tests.support.fake_apis import FakeConfluence, FakeSlack, serve

pytestmark = [pytest.mark.integration, pytest.mark.models]

POLICY = RetryPolicy(max_retries=2, base_delay=0.5, max_delay=5.0)
NORTH = "<h1>Team North</h1><p>Alice Chen works at TechCorp. Bob Stone works at Initech.</p>"
SOUTH = "<h1>Team South</h1><p>Alice Chen works at TechCorp. Carol Diaz leads Project Phoenix.</p>"
EAST = "<h1>Team East</h1><p>Dan Wu works at Globex.</p>"


class CountingExtractor:
    """The real extractor, counting calls and chunks: the measure of extraction work."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls = 0
        self.chunks = 0

    def extract(self, texts: Sequence[str], *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        self.chunks += len(texts)
        return self.inner.extract(texts, *args, **kwargs)


@pytest.fixture
def kw(make_settings: SettingsFactory) -> Iterator[Knotwork]:
    with Knotwork(make_settings(embedder="hashing")) as instance:
        rt = instance.runtime
        rt._extractor = CountingExtractor(rt.extractor)  # type: ignore[assignment]
        yield instance


def work(kw: Knotwork) -> CountingExtractor:
    return kw.runtime._extractor  # type: ignore[return-value]


@pytest.fixture
def confluence() -> Iterator[FakeConfluence]:
    api = FakeConfluence(users={"acc-1": "Ada Lovelace"}, max_limit=2)  # paginated listings
    api.add_page("101", "Team North", NORTH)
    api.add_page("102", "Team South", SOUTH)
    api.add_page("103", "Team East", EAST)
    with serve(api):
        yield api


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def sync_confluence(kw: Knotwork, api: FakeConfluence, sleeps: Sleeps | None = None) -> SyncReport:
    client = ConfluenceClient(api.base_url, api.token, email=api.email, policy=POLICY,
                              sleep=Sleeps() if sleeps is None else sleeps)
    with client:
        return kw.sync(ConfluenceSource(client, "ENG"))


def facts(kw: Knotwork) -> dict[tuple[str, str], ExportedFact]:
    return {(f.source_name, f.target_name): f for f in kw.export_graph().facts}


def entity_names(kw: Knotwork) -> set[str]:
    return {e.name for e in kw.export_graph().entities}


def chunk_ids(kw: Knotwork, page_id: str, count: int = 1) -> list[str]:
    doc_id = stable_id(kw.settings.group, "document", SourceSystem.CONFLUENCE, page_id)
    return [stable_id(doc_id, "chunk", str(i)) for i in range(count)]


def assert_vectors_match_graph(kw: Knotwork) -> None:
    rt, group = kw.runtime, kw.settings.group
    assert rt.vectors.count(Collection.FACTS, group) == len(rt.graph.list_facts(group))
    assert rt.vectors.count(Collection.ENTITIES, group) == len(rt.graph.list_entities(group))
    chunks = rt.documents.get_chunks([stable_id(d.id, "chunk", str(i))
                                      for d in rt.documents.list_documents(group)
                                      for i in range(d.chunk_count)])
    passages = [p for c in chunks for p in chunk_passage_ids(c.id, c.content,
                                                             kw.settings.passage_tokens)]
    assert rt.vectors.count(Collection.CHUNKS, group) == len(passages)


def audit(kw: Knotwork, action: str) -> list[dict[str, Any]]:
    events = kw.runtime.documents.list_audit(kw.settings.group, limit=1000)  # type: ignore[attr-defined]
    return [json.loads(e.detail) for e in events if e.action == action]


# --------------------------------------------------------------------------- Confluence


def test_second_sync_over_unchanged_pages_does_no_work(kw: Knotwork,
                                                      confluence: FakeConfluence) -> None:
    first = sync_confluence(kw, confluence)
    assert sorted(d.source_id for d in first.added) == ["101", "102", "103"]
    assert {d.title for d in first.added} == {"Team North", "Team South", "Team East"}
    assert first.documents_processed == 3 and work(kw).chunks == 3
    assert len(confluence.calls("/wiki/api/v2/spaces/98304/pages")) == 2  # 3 pages, 2 per page
    cursor = kw.runtime.documents.get_sync_cursor(
        kw.settings.group, f"confluence:{confluence.base_url}:ENG")
    assert cursor is not None and json.loads(cursor)["space_id"] == "98304"
    before = (work(kw).calls, len(confluence.calls("/wiki/api/v2/pages")), facts(kw))

    second = sync_confluence(kw, confluence)

    assert (second.added, second.updated, second.deleted) == ([], [], [])
    assert second.unchanged == 3 and second.documents_processed == 0
    assert work(kw).calls == before[0]  # zero extraction work
    assert len(confluence.calls("/wiki/api/v2/pages")) == before[1]  # not even a body fetched
    assert facts(kw) == before[2]


def test_edited_page_retires_only_the_facts_it_alone_evidenced(
        kw: Knotwork, confluence: FakeConfluence) -> None:
    sync_confluence(kw, confluence)
    [north], [south] = chunk_ids(kw, "101"), chunk_ids(kw, "102")
    shared = facts(kw)[("Alice Chen", "TechCorp")]
    assert sorted(shared.episodes) == sorted([north, south])
    assert ("Bob Stone", "Initech") in facts(kw)
    chunks_before = work(kw).chunks

    confluence.edit_page("101", "<h1>Team North</h1><p>Alice Chen works at TechCorp. "
                                "Erin Fox works at Umbrella.</p>")
    report = sync_confluence(kw, confluence)

    assert [d.source_id for d in report.updated] == ["101"] and report.unchanged == 2
    assert work(kw).chunks - chunks_before == 1  # only the edited page was re-extracted
    now = facts(kw)
    assert ("Bob Stone", "Initech") not in now  # its only evidence was the old version
    assert ("Erin Fox", "Umbrella") in now
    kept = now[("Alice Chen", "TechCorp")]  # restated: same fact, both pieces of evidence
    assert (kept.id, sorted(kept.episodes)) == (shared.id, sorted([north, south]))
    assert {"Bob Stone", "Initech"}.isdisjoint(entity_names(kw))
    assert report.facts_retired == 1 and report.entities_retired == 2
    [retired] = audit(kw, "fact.retired")
    assert retired["fact"] == "Bob Stone works at Initech."
    assert retired["reason"] == "edited" and retired["documents"] == ["confluence:101"]
    assert_vectors_match_graph(kw)

    confluence.edit_page("101", "<h1>Team North</h1><p>Erin Fox works at Umbrella.</p>")
    sync_confluence(kw, confluence)

    kept = facts(kw)[("Alice Chen", "TechCorp")]  # still evidenced by Team South
    assert kept.id == shared.id and kept.episodes == [south]
    [document] = kw.runtime.documents.get_documents(
        [stable_id(kw.settings.group, "document", SourceSystem.CONFLUENCE, "101")])
    assert document.metadata["version"] == "3"
    assert_vectors_match_graph(kw)


def test_page_deleted_at_the_source_cascades(kw: Knotwork, confluence: FakeConfluence) -> None:
    sync_confluence(kw, confluence)
    rt, group = kw.runtime, kw.settings.group
    [north], [south], [east] = (chunk_ids(kw, p) for p in ("101", "102", "103"))
    assert rt.graph.counts(group).episodes == 3
    kw.build_communities()
    assert any("Dan Wu" in c.summary for c in rt.graph.list_communities(group))

    del confluence.pages["103"]  # purged
    confluence.pages["102"]["status"] = "trashed"
    report = sync_confluence(kw, confluence)

    assert sorted(d.source_id for d in report.deleted) == ["102", "103"]
    assert report.documents_processed == 0 and report.unchanged == 1
    for page in ("102", "103"):
        assert rt.documents.get_document_by_source(group, "confluence", page) is None
    assert rt.documents.get_chunks([south, east]) == []
    counts = rt.documents.counts(group)
    assert (counts.documents, counts.chunks) == (1, 1)
    assert rt.graph.get_episodes(group, [north, south, east])[0].id == north
    assert rt.graph.counts(group).episodes == 1
    now = facts(kw)
    assert set(now) == {("Alice Chen", "TechCorp"), ("Bob Stone", "Initech")}
    assert now[("Alice Chen", "TechCorp")].episodes == [north]  # the other evidence stays
    assert {"Dan Wu", "Globex", "Carol Diaz", "Project Phoenix"}.isdisjoint(entity_names(kw))
    assert {"Alice Chen", "TechCorp", "Bob Stone"} <= entity_names(kw)
    assert sorted(d["source"] for d in audit(kw, "document.deleted")) == [
        "confluence:102", "confluence:103"]
    assert_vectors_match_graph(kw)
    live = {e.id for e in rt.graph.list_entities(group)}
    for community in rt.graph.list_communities(group):  # re-detected or re-summarised
        assert community.entity_ids and set(community.entity_ids) <= live
        assert "Dan Wu" not in community.summary and not community.summary_stale
    rt.graph.ensure_schema(group)
    assert rt.graph.unevidenced_facts(group) == [] and rt.graph.orphan_entity_ids(group) == []


def test_sync_waits_out_a_429_and_a_failed_sync_is_redone(
        kw: Knotwork, confluence: FakeConfluence) -> None:
    sleeps = Sleeps()
    confluence.failures.append(("/wiki/api/v2/spaces/98304/pages", 429, {"Retry-After": "2"}))
    assert len(sync_confluence(kw, confluence, sleeps).added) == 3
    assert sleeps == [2.0]

    confluence.edit_page("103", "<p>Dan Wu works at Initech.</p>")
    confluence.failures += [("/wiki/api/v2/pages", 503, {})] * 3  # more than 2 retries
    cursor = kw.runtime.documents.get_sync_cursor(
        kw.settings.group, f"confluence:{confluence.base_url}:ENG")
    with pytest.raises(ConnectorError, match="HTTP 503"):
        sync_confluence(kw, confluence)
    assert kw.runtime.documents.get_sync_cursor(
        kw.settings.group, f"confluence:{confluence.base_url}:ENG") == cursor
    assert ("Dan Wu", "Globex") in facts(kw)  # nothing lost

    report = sync_confluence(kw, confluence)
    assert [d.source_id for d in report.updated] == ["103"]
    assert ("Dan Wu", "Initech") in facts(kw) and ("Dan Wu", "Globex") not in facts(kw)


# --------------------------------------------------------------------------- Slack


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    api = FakeSlack(page_size=2)
    for user_id, name in (("U1", "Alice Chen"), ("U2", "Carol Diaz"), ("U3", "Dan Wu")):
        api.add_user(user_id, name)
    api.add_channel("C1", "general")
    api.post("C1", "1700000000.000100", "U1", "Alice Chen works at TechCorp.")
    api.post("C1", "1700000100.000100", "U1", "Who leads Project Phoenix?")
    api.post("C1", "1700000110.000100", "U2", "Carol Diaz leads Project Phoenix.",
             thread_ts="1700000100.000100")
    api.post("C1", "1700000200.000100", "U3", "Dan Wu works at Globex.")
    with serve(api):
        yield api


def sync_slack(kw: Knotwork, api: FakeSlack, **options: Any) -> SyncReport:
    with SlackClient(api.token, base_url=api.base_url + "/api", policy=POLICY,
                     sleep=Sleeps()) as client:
        return kw.sync(SlackSource(client, **options))


def test_slack_sync_edits_deletions_and_no_work_when_unchanged(kw: Knotwork,
                                                               slack: FakeSlack) -> None:
    first = sync_slack(kw, slack)
    assert sorted(d.source_id for d in first.added) == [
        "general/1700000000.000100", "general/1700000100.000100", "general/1700000200.000100"]
    assert ("Carol Diaz", "Project Phoenix") in facts(kw)
    calls = work(kw).calls

    second = sync_slack(kw, slack)
    assert second.documents_processed == 0 and second.unchanged == 3
    assert work(kw).calls == calls
    oldest = slack.calls("/api/conversations.history")[-1].query["oldest"]
    assert float(oldest) == pytest.approx(1700000200.0001 - 7 * 86_400)

    slack.find("C1", "1700000110.000100").update(text="Carol Diaz leads Project Atlas.",
                                                 edited={"user": "U2", "ts": "1700000300.0"})
    slack.messages["C1"].remove(slack.find("C1", "1700000200.000100"))
    report = sync_slack(kw, slack)

    assert [d.source_id for d in report.updated] == ["general/1700000100.000100"]
    assert [d.source_id for d in report.deleted] == ["general/1700000200.000100"]
    now = facts(kw)
    assert ("Carol Diaz", "Project Atlas") in now
    assert ("Carol Diaz", "Project Phoenix") not in now and ("Dan Wu", "Globex") not in now
    assert ("Alice Chen", "TechCorp") in now
    assert_vectors_match_graph(kw)


# --------------------------------------------------------------------------- CLI


def _cli(tmp_path: Path, falkordb_url: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("knotwork")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "knotwork.services.cli"]
    base = {k: v for k, v in os.environ.items() if not k.startswith("KNOTWORK_")}
    base.update(KNOTWORK_DATA_DIR=str(tmp_path / "cli"), KNOTWORK_FALKORDB_URL=falkordb_url,
                KNOTWORK_EMBEDDER="hashing", KNOTWORK_GROUP="cli_sync", HF_HUB_OFFLINE="1",
                NO_COLOR="1", KNOTWORK_SYNC_MAX_RETRIES="0", **env)
    return subprocess.run([*command, *args], capture_output=True, text=True, env=base,
                          timeout=300, check=False)


def test_cli_sync_prints_changes_and_fails_in_one_line(
        tmp_path: Path, falkordb_url: str, confluence: FakeConfluence, slack: FakeSlack) -> None:
    args = ("sync", "confluence", "--base-url", confluence.base_url, "--space", "ENG",
            "--email", confluence.email)
    done = _cli(tmp_path, falkordb_url, *args, KNOTWORK_CONFLUENCE_TOKEN=confluence.token)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("synced confluence ENG: 3 added, 0 updated, 0 unchanged, 0 deleted")
    assert "  + Team North (101)" in lines

    bad = _cli(tmp_path, falkordb_url, *args, "--token", "wrong")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "wrong" not in bad.stderr
    assert bad.stderr.startswith("knotwork: error: Confluence refused the credentials (HTTP 401)")

    done = _cli(tmp_path, falkordb_url, "sync", "slack", "--channels", "general",
                KNOTWORK_SLACK_TOKEN=slack.token, KNOTWORK_SLACK_API_URL=slack.base_url + "/api")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("synced slack #general: 3 added, 0 updated, 0 unchanged")

    missing = _cli(tmp_path, falkordb_url, "sync", "slack", "--channels", "nope",
                   KNOTWORK_SLACK_TOKEN=slack.token, KNOTWORK_SLACK_API_URL=slack.base_url + "/api")
    assert (missing.returncode, missing.stderr) == (
        2, "knotwork: error: unknown Slack channel(s): #nope\n")


def test_a_page_grown_over_the_size_limit_is_skipped_and_its_stored_version_kept(
        make_settings: SettingsFactory, confluence: FakeConfluence) -> None:
    with Knotwork(make_settings(embedder="hashing", max_document_chars=1000)) as small:
        first = sync_confluence(small, confluence)
        assert first.oversized == [] and len(first.added) == 3
        before = facts(small)
        assert ("Dan Wu", "Globex") in before

        confluence.add_page("103", "Team East", EAST + "<p>" + "Padding text. " * 200 + "</p>",
                            version=2)
        confluence.add_page("104", "Team West", "<p>" + "Huge page. " * 300 + "</p>")
        report = sync_confluence(small, confluence)

        assert sorted(d.source_id for d in report.oversized) == ["103", "104"]
        assert report.skipped >= 2 and report.documents_processed == 0
        assert report.updated == [] and report.deleted == []
        assert facts(small) == before  # the stored version of page 103 is kept as it was
        group = small.settings.group
        assert small.runtime.documents.get_document_by_source(group, "confluence", "104") is None
