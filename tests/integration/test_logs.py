"""Logs: the Python API keeps stdout for the caller, JSON lines on request (--log-json /
KNOTWORK_LOG_FORMAT=json), and one structured line per HTTP request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import structlog
from fastapi.testclient import TestClient
from structlog.testing import capture_logs

from knotwork.core import Knotwork
from knotwork.services.api.app import create_app
from tests.conftest import SettingsFactory
from tests.integration.test_cli import Cli

pytestmark = [pytest.mark.integration]


def test_the_python_api_writes_nothing_on_stdout(make_settings: SettingsFactory,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    structlog.reset_defaults()  # a program that configured no logging
    with Knotwork(make_settings(embedder="hashing")) as kw:
        kw.add_episode("Alice Chen(user): I work at TechCorp.")
        kw.query("Where does Alice Chen work?")
    out = capsys.readouterr()
    assert out.out == ""
    assert "[info" not in out.err  # warnings and errors only, on stderr


def test_log_json_writes_one_json_object_per_line(tmp_path: Path, falkordb_url: str) -> None:
    cli = Cli(tmp_path / "data", falkordb_url)
    proc = cli.run("--log-json", "-v", "episode", "add", "Alice Chen(user): I work at TechCorp.")
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines, "-v logs at INFO"
    for line in lines:
        record = json.loads(line)
        assert {"event", "level", "timestamp"} <= set(record), record
    assert json.loads(proc.stdout)["entities"] >= 1  # the command's output stays on stdout


def test_every_request_is_one_structured_log_line(make_settings: SettingsFactory) -> None:
    app = create_app(make_settings(embedder="hashing"))
    with TestClient(app) as client, capture_logs() as logs:
        assert client.get("/healthz").status_code == 200
        assert client.get("/v1/entities/no-such-entity").status_code == 404
    requests = [entry for entry in logs if entry["event"] == "http.request"]
    assert [(r["method"], r["route"], r["status"]) for r in requests] == [
        ("GET", "/healthz", 200), ("GET", "/v1/entities/{entity_id}", 404)]
    assert all(r["ms"] >= 0 and r["log_level"] == "info" for r in requests)
