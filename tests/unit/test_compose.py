"""docker-compose.yml (no Docker engine here): every service, health check, command and
setting it uses must exist, so the production stack cannot drift from the code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from knotwork.services.cli import app as cli_app
from knotwork.settings import Settings

COMPOSE = Path(__file__).resolve().parents[2] / "docker-compose.yml"


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return loaded


def test_the_stack_has_every_store_the_api_a_worker_and_migrations(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert {"neo4j", "qdrant", "postgres", "redis", "migrate", "api", "worker"} <= set(services)
    for name in ("neo4j", "qdrant", "postgres", "redis", "api", "worker"):
        assert "healthcheck" in services[name], name
    for name in ("api", "worker"):
        needs = services[name]["depends_on"]
        assert needs["migrate"]["condition"] == "service_completed_successfully"
        assert all(needs[s]["condition"] == "service_healthy"
                   for s in ("neo4j", "qdrant", "postgres", "redis"))


def test_every_knotwork_setting_in_compose_exists(compose: dict[str, Any]) -> None:
    fields = {name.upper() for name in Settings.model_fields}
    for name, service in compose["services"].items():
        for key in (service.get("environment") or {}):
            if key.startswith("KNOTWORK_"):
                assert key.removeprefix("KNOTWORK_") in fields, (name, key)
    env = compose["services"]["api"]["environment"]
    assert env["KNOTWORK_GRAPH_BACKEND"] == "neo4j" and env["KNOTWORK_VECTOR_BACKEND"] == "qdrant"
    assert env["KNOTWORK_DATABASE_URL"].startswith("postgresql+psycopg://")


def test_every_knotwork_command_in_compose_exists(compose: dict[str, Any]) -> None:
    runner = CliRunner()
    commands = [service["command"] for service in compose["services"].values()
                if isinstance(service.get("command"), list) and service["command"][0] == "knotwork"]
    commands += [service["healthcheck"]["test"][1:] for service in compose["services"].values()
                 if service.get("healthcheck", {}).get("test", [None])[0] == "CMD"
                 and service["healthcheck"]["test"][1] == "knotwork"]
    assert len(commands) >= 4
    for command in commands:
        words = [w for w in command[1:] if not w.startswith("-")][:2]
        result = runner.invoke(cli_app, [*words[:1], "--help"] if words[0] != "db" else [*words, "--help"])
        assert result.exit_code == 0, (command, result.output)
