"""Malformed input through the CLI: a truncated zip, an invalid JSON day file, a 50 MB page, a
binary file, an unknown Slack user id. Each is a clear one-line error (exit 2) or a
skipped-and-reported item, and nothing already stored is lost (real stores: the session
FalkorDB, SQLite and qdrant-edge in a temp dir)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from knotwork.domain.models import ProcessingStatus
from knotwork.infra.sql.store import SqlDocumentStore
from knotwork.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.models]

BASE_NOTES = {
    "atlas.md": "# Atlas launch\n\nPriya Raman leads Project Atlas. Atlas launches in May.\n",
    "billing.md": "# Billing\n\nOmar Haddad works at Initech. Omar owns the Billing Service.\n",
}


class Kb:
    def __init__(self, tmp: Path, falkordb_url: str) -> None:
        self.data_dir = tmp / "data"
        self.group = f"bad_{secrets.token_hex(4)}"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("KNOTWORK_")}
        self.env.update({"KNOTWORK_DATA_DIR": str(self.data_dir), "KNOTWORK_GROUP": self.group,
                         "KNOTWORK_FALKORDB_URL": falkordb_url, "KNOTWORK_EMBEDDER": "hashing",
                         "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"})

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "knotwork.services.cli", *args],
                              env=self.env, capture_output=True, text=True, timeout=600,
                              check=False)

    def stored(self) -> dict[str, str]:
        """source id -> processing status of every stored document."""
        url = Settings(data_dir=self.data_dir).resolved_database_url()
        store = SqlDocumentStore(url)
        try:
            return {d.source_id: d.processing_status.value for d in store.list_documents(self.group)}
        finally:
            store.close()

    def graph_export(self) -> str:
        proc = self.run("graph", "export", "--summary")
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> Kb:
    tmp = tmp_path_factory.mktemp("malformed")
    notes = tmp / "notes"
    notes.mkdir()
    for name, text in BASE_NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    base = Kb(tmp, falkordb_url)
    proc = base.run("ingest", str(notes))
    assert proc.returncode == 0, proc.stderr
    assert base.stored() == {"atlas.md": "COMPLETED", "billing.md": "COMPLETED"}
    return base


def _slack_export(root: Path, day_text: str | None = None,
                  messages: list[dict[str, str]] | None = None) -> Path:
    (root / "general").mkdir(parents=True)
    (root / "channels.json").write_text(json.dumps([{"id": "C1", "name": "general"}]))
    (root / "users.json").write_text(json.dumps([
        {"id": "U1", "name": "priya", "profile": {"real_name": "Priya Raman"}}]))
    body = day_text if day_text is not None else json.dumps(messages or [
        {"type": "message", "user": "U1", "ts": "1709290000.000100",
         "text": "Atlas is on track for May."}])
    (root / "general" / "2024-03-01.json").write_text(body, encoding="utf-8")
    return root


def _one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("knotwork: error: ")
    return lines[0]


def _unchanged(kb: Kb, before: dict[str, str], graph_before: str) -> None:
    assert kb.stored() == before
    assert kb.graph_export() == graph_before


def test_truncated_zip_is_one_clear_error_and_loses_nothing(kb: Kb, tmp_path: Path) -> None:
    before, graph_before = kb.stored(), kb.graph_export()
    export = _slack_export(tmp_path / "export")
    archive = tmp_path / "slack.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for file in sorted(export.rglob("*.json")):
            z.write(file, file.relative_to(export).as_posix())
    data = archive.read_bytes()
    (tmp_path / "truncated.zip").write_bytes(data[: len(data) // 2])
    line = _one_line_error(kb.run("ingest", str(tmp_path / "truncated.zip")))
    assert "zip" in line and "truncated.zip" in line
    line = _one_line_error(kb.run("ingest", "--queue", str(tmp_path / "truncated.zip")))
    assert "zip" in line
    _unchanged(kb, before, graph_before)


def test_invalid_json_day_file_names_the_file(kb: Kb, tmp_path: Path) -> None:
    before, graph_before = kb.stored(), kb.graph_export()
    export = _slack_export(tmp_path / "export", day_text='[{"type": "message", "ts": "17')
    line = _one_line_error(kb.run("ingest", str(export)))
    assert "general/2024-03-01.json" in line and "JSON" in line
    _unchanged(kb, before, graph_before)


def test_a_50_mb_page_is_skipped_and_reported(kb: Kb, tmp_path: Path) -> None:
    before = kb.stored()
    pages = tmp_path / "confluence"
    pages.mkdir()
    small = {"id": "9001", "title": "Runbook", "status": "current", "spaceId": "1",
             "version": {"number": 1, "createdAt": "2024-03-01T10:00:00Z"},
             "body": {"storage": {"value": "<p>Omar Haddad owns the Billing Service.</p>",
                                  "representation": "storage"}}}
    paragraph = "<p>" + "The cluster was restarted again. " * 30 + "</p>"
    huge = {**small, "id": "9002", "title": "Giant log page",
            "body": {"storage": {"value": paragraph * (50_000_000 // len(paragraph) + 1),
                                 "representation": "storage"}}}
    (pages / "small.json").write_text(json.dumps(small))
    (pages / "huge.json").write_text(json.dumps(huge))
    assert (pages / "huge.json").stat().st_size > 50_000_000
    proc = kb.run("ingest", str(pages))
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("knotwork: skipped:")]
    assert len(warnings) == 1 and "9002" in warnings[0] and "Giant log page" in warnings[0]
    assert "limit" in warnings[0]
    after = kb.stored()
    assert after == {**before, "9001": "COMPLETED"}  # the small page in, the huge one out


def test_a_binary_file_is_skipped_in_a_folder_and_refused_alone(kb: Kb, tmp_path: Path) -> None:
    before, graph_before = kb.stored(), kb.graph_export()
    blob = bytes(range(256)) * 64
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "blob.txt").write_bytes(blob)
    line = _one_line_error(kb.run("ingest", str(folder / "blob.txt")))
    assert "blob.txt" in line and "binary" in line
    _unchanged(kb, before, graph_before)
    (folder / "faq.md").write_text("# FAQ\n\nLena Vogel runs the Help Desk.\n", encoding="utf-8")
    proc = kb.run("ingest", str(folder))
    assert proc.returncode == 0, proc.stderr
    assert "knotwork: skipped: blob.txt: binary content" in proc.stderr
    assert kb.stored() == {**before, "faq.md": "COMPLETED"}


def test_an_unknown_slack_user_id_is_kept_and_reported(kb: Kb, tmp_path: Path) -> None:
    before = kb.stored()
    export = _slack_export(tmp_path / "export", messages=[
        {"type": "message", "user": "U1", "ts": "1709290000.000100",
         "text": "Handing the Atlas rollout to <@U0GHOST> this week."},
        {"type": "message", "user": "U0STRANGER", "ts": "1709290100.000200",
         "text": "Thanks, on it."}])
    proc = kb.run("ingest", str(export))
    assert proc.returncode == 0, proc.stderr
    warning = next(line for line in proc.stderr.splitlines() if "users.json" in line)
    assert "#general" in warning and "U0GHOST" in warning and "U0STRANGER" in warning
    after = kb.stored()
    assert {k: v for k, v in after.items() if k in before} == before
    new = {k: v for k, v in after.items() if k not in before}
    assert new and set(new.values()) == {ProcessingStatus.COMPLETED.value}
