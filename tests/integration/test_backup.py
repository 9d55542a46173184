"""``knotwork export`` / ``import``: a tenant round-trips exactly (documents, graph, vectors)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.test_cli import SAMPLE_DATA, Cli

pytestmark = [pytest.mark.integration, pytest.mark.models]
QUESTION = "Who leads Project Atlas?"


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != "manifest.json"}


def test_export_import_round_trips_a_tenant(tmp_path: Path, falkordb_url: str,
                                            postgres_url: str) -> None:
    source = Cli(tmp_path / "a", falkordb_url, database_url=postgres_url)
    source.run("ingest", str(SAMPLE_DATA))
    source.run("communities", "build")
    answer = source.ask(QUESTION)
    first = tmp_path / "export1"
    source.run("export", str(first))
    files = _files(first)
    assert files["graph/entities.jsonl"].count("\n") > 10
    assert files["graph/facts.jsonl"] and files["graph/mentions.jsonl"]
    assert files["vectors/entities.jsonl"] and files["sql/documents.jsonl"]
    assert files["graph/communities.jsonl"]

    # into a second, empty instance (SQLite, its own vector files), same tenant id
    target = Cli(tmp_path / "b", falkordb_url, group=source.group)
    # the same tenant id on the shared FalkorDB already holds data: refused, nothing lost
    before = source.snapshot()
    refused = target.run("import", str(first), ok=False)
    assert refused.returncode == 2
    assert "already holds data" in refused.stderr.strip().splitlines()[-1]
    assert source.snapshot() == before

    replaced = target.run("import", str(first), "--replace")
    assert "imported tenant" in replaced.stdout
    second = tmp_path / "export2"
    target.run("export", str(second))
    assert _files(second) == files  # byte-for-byte equal apart from the manifest's timestamp
    again = target.ask(QUESTION)
    assert again["answer"] == answer["answer"]
    assert {c["source_id"] for c in again["citations"]} == {c["source_id"] for c in answer["citations"]}


def test_export_and_import_errors_are_one_line(tmp_path: Path, falkordb_url: str) -> None:
    cli = Cli(tmp_path / "d", falkordb_url)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("keep me")
    refused = cli.run("export", str(busy), ok=False)
    assert refused.returncode == 2 and "is not empty" in refused.stderr
    assert (busy / "x").read_text() == "keep me"
    missing = cli.run("import", str(tmp_path / "nothing"), ok=False)
    assert missing.returncode == 2
    assert len(missing.stderr.strip().splitlines()) == 1 and "manifest.json" in missing.stderr
    broken = tmp_path / "broken"
    (broken / "graph").mkdir(parents=True)
    (broken / "manifest.json").write_text('{"format": "knotwork-export", "version": 1, '
                                          '"group_id": "x", "exported_at": "now", '
                                          '"embedding_dimension": 384, "counts": {}}')
    (broken / "graph/entities.jsonl").write_text("{not json\n")
    bad = cli.run("import", str(broken), ok=False)
    assert bad.returncode == 2 and "malformed" in bad.stderr.strip().splitlines()[-1]
