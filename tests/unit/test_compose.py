"""docker-compose.yml (no Docker engine here): every service, health check, command and
setting it uses must exist, so the production stack cannot drift from the code."""

from __future__ import annotations

import importlib.metadata
import re
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


STORES = ("neo4j", "qdrant", "postgres", "redis")
LONG_RUNNING = (*STORES, "api", "worker")


def test_only_the_api_is_published_on_the_host(compose: dict[str, Any]) -> None:
    published = {name for name, service in compose["services"].items() if service.get("ports")}
    assert published == {"api"}
    for name, service in compose["services"].items():
        assert "network_mode" not in service, name  # host networking would publish everything


def _values(node: object) -> list[str]:
    if isinstance(node, dict):
        return [v for value in node.values() for v in _values(value)]
    if isinstance(node, list):
        return [v for value in node for v in _values(value)]
    return [node] if isinstance(node, str) else []


def test_every_secret_is_required_never_defaulted() -> None:
    text = COMPOSE.read_text()
    secrets = ("NEO4J_PASSWORD", "POSTGRES_PASSWORD", "REDIS_PASSWORD", "QDRANT_API_KEY",
               "KNOTWORK_ADMIN_API_KEY")
    for secret in secrets:
        # `$${X}` is the container's own variable at run time, not a compose interpolation
        uses = re.findall(r"(?<!\$)\$\{" + secret + r"(:?[-?=+])?([^}]*)\}", text)
        assert uses, secret
        for operator, _ in uses:
            assert operator in (":?", "?"), (secret, operator)  # `${X:-default}` is a default password
    # no literal password anywhere: every credential-looking value interpolates a variable
    loaded = yaml.safe_load(text)
    for name, service in loaded["services"].items():
        for key, value in (service.get("environment") or {}).items():
            if re.search(r"PASSWORD|API_KEY|SECRET|AUTH$", key) and key != "KNOTWORK_AUTH_MODE":
                assert "${" in str(value), (name, key)


def test_stores_demand_credentials(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert "--requirepass" in services["redis"]["command"]
    assert services["qdrant"]["environment"]["QDRANT__SERVICE__API_KEY"].startswith("${")
    assert services["neo4j"]["environment"]["NEO4J_AUTH"].startswith("neo4j/${")
    env = services["api"]["environment"]
    assert re.match(r"redis://:\$\{REDIS_PASSWORD", env["KNOTWORK_REDIS_URL"])
    assert "KNOTWORK_QDRANT_API_KEY" in env
    settings = Settings(qdrant_api_key="qk-Bluefin-7", neo4j_password="np-Harbor-9")  # type: ignore[call-arg]
    shown = repr(settings) + str(settings.model_dump())
    assert "qk-Bluefin-7" not in shown and "np-Harbor-9" not in shown  # secrets never printed


def test_restart_policies_limits_and_healthchecks(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in LONG_RUNNING:
        assert services[name]["restart"] in ("unless-stopped", "always"), name
        assert "healthcheck" in services[name], name
    assert services["migrate"]["restart"] == "on-failure"  # one-shot: never restarted on success
    for name, service in services.items():
        limits = service["deploy"]["resources"]["limits"]
        assert float(limits["cpus"]) > 0 and re.fullmatch(r"\d+[MG]", limits["memory"]), name


def test_the_worker_healthcheck_asks_the_worker_itself(compose: dict[str, Any]) -> None:
    test = compose["services"]["worker"]["healthcheck"]["test"]
    assert test[:4] == ["CMD", "knotwork", "queue", "alive"] and "--this-host" in test
    result = CliRunner().invoke(cli_app, ["queue", "alive", "--help"])
    assert result.exit_code == 0 and "--this-host" in result.output


def _minor(version: str) -> tuple[int, int]:
    major, minor = re.findall(r"\d+", version)[:2]
    return int(major), int(minor)


def test_images_are_pinned_and_qdrant_matches_its_client(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in STORES:
        image = services[name]["image"]
        assert ":" in image and not image.endswith((":latest", ":")), image
        assert re.search(r":v?\d+\.\d+", image), image
    server = services["qdrant"]["image"].rsplit(":", 1)[1]
    assert _minor(server) == _minor(importlib.metadata.version("qdrant-client"))
    built = {services[n]["image"] for n in ("migrate", "api", "worker")}
    assert built == {f"knotwork:{importlib.metadata.version('knotwork')}"}


DOCKERFILE = COMPOSE.parent / "Dockerfile"


def test_dockerfile_two_stages_non_root_healthcheck() -> None:
    lines = [line.strip() for line in DOCKERFILE.read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    stages = [i for i, line in enumerate(lines) if line.upper().startswith("FROM ")]
    assert len(stages) == 2
    build, runtime = lines[stages[0]:stages[1]], lines[stages[1]:]
    # dependencies before the code: `COPY src` comes after the dependency install
    install_deps = next(i for i, line in enumerate(build) if "pip install" in line and "." in line.split())
    copy_src = next(i for i, line in enumerate(build) if line.startswith("COPY src"))
    assert install_deps < copy_src
    assert "COPY pyproject.toml" in " ".join(build[:install_deps])
    user = [line for line in runtime if line.startswith("USER ")]
    assert user and user[-1].split()[1].split(":")[0] not in ("root", "0")
    assert any(line.startswith("HEALTHCHECK ") for line in runtime)
    assert any(line.startswith("COPY --from=build") for line in runtime)
    ignored = (COMPOSE.parent / ".dockerignore").read_text().split()
    assert {".git", ".venv", "tests", ".env"} <= set(ignored)
