"""``knotwork documents list|show|delete`` as subprocesses on the embedded stack."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_cli import Cli

pytestmark = [pytest.mark.integration, pytest.mark.models]


def test_list_show_and_delete_with_cascade(tmp_path: Path, falkordb_url: str) -> None:
    cli = Cli(tmp_path / "data", falkordb_url)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "harbor.md").write_text("# Harbor\n\nOndrej Vasko leads the Harbor Team.\n")
    (docs / "pricing.md").write_text("# Pricing\n\nMarta Vasko owns the Pricing Engine.\n")
    cli.run("ingest", str(docs))
    rows = cli.json("documents", "list", "--json")
    assert {r["title"] for r in rows} == {"Harbor", "Pricing"}
    assert {r["status"] for r in rows} == {"COMPLETED"}
    pricing = next(r for r in rows if r["title"] == "Pricing")
    assert cli.json("documents", "show", pricing["id"])["entities"] >= 1

    done = json.loads(cli.run("documents", "delete", pricing["id"]).stdout)
    assert done["deleted"] == pricing["id"] and done["facts"] >= 1
    assert [r["title"] for r in cli.json("documents", "list", "--json")] == ["Harbor"]
    assert "Marta Vasko" not in {e["name"] for e in cli.export()["entities"]}
    gone = cli.run("documents", "delete", pricing["id"], ok=False)
    assert gone.returncode == 2 and "no document" in gone.stderr
    bad = cli.run("documents", "list", "--status", "done", ok=False)
    assert bad.returncode == 2 and "COMPLETED" in bad.stderr
