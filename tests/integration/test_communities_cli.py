"""``knotwork communities build|status|show|list`` and ``knotwork report``, run for real in
subprocesses against the session FalkorDB (``KNOTWORK_FALKORDB_URL``)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import knotwork

pytestmark = [pytest.mark.integration, pytest.mark.models]

SAMPLE_DATA = Path(knotwork.__file__).parent / "sample_data"
_SCRIPT = Path(sys.executable).with_name("knotwork")
COMMAND = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "knotwork.services.cli"]


@dataclass
class Cli:
    data_dir: Path
    falkordb_url: str
    group: str = field(default_factory=lambda: f"clic_{secrets.token_hex(4)}")
    prefix: str = field(default_factory=lambda: f"kwtest:{secrets.token_hex(6)}:")

    def run(self, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KNOTWORK_")}
        env.update({"KNOTWORK_DATA_DIR": str(self.data_dir),
                    "KNOTWORK_FALKORDB_URL": self.falkordb_url, "KNOTWORK_EMBEDDER": "hashing",
                    "KNOTWORK_COMMUNITY_MAX_SIZE": "5", "KNOTWORK_QUEUE_PREFIX": self.prefix,
                    "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"})
        proc = subprocess.run([*COMMAND, "--group", self.group, *args], env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode == code, f"knotwork {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
        return proc

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "--json").stdout)


@dataclass
class Built:
    cli: Cli
    status_before: str
    build_output: str


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> Built:
    cli = Cli(tmp_path_factory.mktemp("communities_cli"), falkordb_url)
    cli.run("ingest", str(SAMPLE_DATA))
    before = cli.run("communities", "status").stdout
    output = cli.run("communities", "build").stdout
    return Built(cli, before, output)


def _one_error_line(proc: subprocess.CompletedProcess[str], needle: str) -> None:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("knotwork: error:"), proc.stderr
    assert needle in lines[0]


def test_build_and_status(built: Built) -> None:
    assert built.status_before.startswith("no communities yet")
    assert built.build_output.startswith("built ")
    status = built.cli.json("communities", "status")
    assert status["built"] is True and status["stale"] == 0
    assert status["levels"] >= 2 and status["max_size"] == 5
    assert sum(int(n) for n in status["per_level"].values()) == status["communities"]
    text = built.cli.run("communities", "status").stdout
    assert f"{status['communities']} communities" in text


def test_build_json_is_deterministic(built: Built) -> None:
    listed = built.cli.json("communities", "list")
    report = built.cli.json("communities", "build")
    assert report["communities"] == len(listed)
    assert [c["id"] for c in built.cli.json("communities", "list")] == [c["id"] for c in listed]
    assert built.cli.run("communities", "build", "--stale").stdout.startswith(
        "re-summarized 0 stale communities")


def test_list_and_show(built: Built) -> None:
    listed = built.cli.json("communities", "list", "--level", "0")
    assert listed and all(c["level"] == 0 and c["entity_count"] <= 5 for c in listed)
    target = listed[0]
    shown = built.cli.run("communities", "show", target["id"]).stdout
    assert shown.splitlines()[0] == target["name"]
    assert target["id"] in shown and "entities:" in shown
    detail = built.cli.json("communities", "show", target["id"])
    assert detail["community"]["id"] == target["id"]
    assert len(detail["entities"]) == target["entity_count"]
    assert [f["id"] for f in detail["key_facts"]] == target["key_facts"]
    if target["parent_id"]:
        assert detail["parent"]["id"] == target["parent_id"]


def test_report_writes_html_and_markdown(built: Built, tmp_path: Path) -> None:
    out = tmp_path / "digest"
    proc = built.cli.run("report", "--out", str(out))
    assert proc.stdout.startswith(f"wrote {out / 'report.html'}")
    html = (out / "report.html").read_text()
    markdown = (out / "report.md").read_text()
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html and "<script" not in html
    assert "## Community map" in markdown and "(community-map.svg)" in markdown
    assert (out / "community-map.svg").read_text().startswith("<svg")
    data = json.loads((out / "report.json").read_text())
    assert data["communities"][0]["facts"][0]["citations"][0]["source_system"]
    second = built.cli.run("report", "--level", "0", "--out", str(tmp_path / "again"))
    assert "at level 0" in second.stdout
    assert "Since " in (tmp_path / "again" / "report.md").read_text()


def test_errors_are_one_line_and_exit_2(built: Built, tmp_path: Path) -> None:
    _one_error_line(built.cli.run("communities", "show", "no-such-id", code=2), "no-such-id")
    _one_error_line(built.cli.run("report", "--level", "99", "--out", str(tmp_path), code=2),
                    "level must be between 0 and")
    _one_error_line(built.cli.run("report", code=2), "--out")
    afile = tmp_path / "file.txt"
    afile.write_text("x")
    _one_error_line(built.cli.run("report", "--out", str(afile), code=2), "not a directory")
    empty = Cli(tmp_path / "empty", built.cli.falkordb_url)
    _one_error_line(empty.run("report", "--out", str(tmp_path / "r"), code=2),
                    "no communities yet")
