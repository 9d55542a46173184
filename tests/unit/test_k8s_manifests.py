"""deploy/k8s (no cluster here): every manifest validates against the Kubernetes API schemas
bundled with kubernetes-validate (strict: an unknown field is an error), and the manifests agree
with the code: the settings they set exist, the commands they run exist, every container has
probes and resources, the API scales out behind its Service."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from typer.testing import CliRunner

from knotwork.services.cli import app as cli_app
from knotwork.settings import Settings

K8S = Path(__file__).resolve().parents[2] / "deploy" / "k8s"
TEMPLATE = "secret.template.yaml"

Manifest = dict[str, Any]


def _load(name: str) -> list[Manifest]:
    return [doc for doc in yaml.safe_load_all((K8S / name).read_text()) if doc]


@pytest.fixture(scope="module")
def kustomization() -> Manifest:
    loaded: Manifest = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    return loaded


@pytest.fixture(scope="module")
def manifests(kustomization: Manifest) -> dict[tuple[str, str], Manifest]:
    out: dict[tuple[str, str], Manifest] = {}
    for name in kustomization["resources"]:
        for doc in _load(name):
            out[(doc["kind"], doc["metadata"]["name"])] = doc
    return out


def test_kustomization_lists_every_manifest_but_the_secret_template(
        kustomization: Manifest) -> None:
    files = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml", TEMPLATE}
    assert set(kustomization["resources"]) == files
    assert kustomization["images"][0]["newTag"] == importlib.metadata.version("knotwork")


@pytest.mark.parametrize("name", sorted(p.name for p in K8S.glob("*.yaml")
                                        if p.name != "kustomization.yaml"))
def test_every_manifest_validates_strictly(name: str) -> None:
    version = kubernetes_validate.latest_version()
    for doc in _load(name):
        kubernetes_validate.validate(doc, version, strict=True)  # raises on any mismatch


def test_the_validator_rejects_a_broken_manifest() -> None:
    doc = _load("api-deployment.yaml")[0]
    doc["spec"]["replicas"] = "three"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(doc, kubernetes_validate.latest_version(), strict=True)
    doc = _load("api-service.yaml")[0]
    doc["spec"]["portz"] = []
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(doc, kubernetes_validate.latest_version(), strict=True)


def _pod_specs(manifests: dict[tuple[str, str], Manifest]) -> dict[str, Manifest]:
    return {name: doc["spec"]["template"]["spec"] for (kind, name), doc in manifests.items()
            if kind in ("Deployment", "Job")}


def test_every_container_has_resources_a_non_root_user_and_known_commands(
        manifests: dict[tuple[str, str], Manifest]) -> None:
    runner = CliRunner()
    specs = _pod_specs(manifests)
    assert set(specs) == {"knotwork-api", "knotwork-worker", "knotwork-migrate"}
    for name, spec in specs.items():
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        for container in spec["containers"]:
            resources = container["resources"]
            assert {"cpu", "memory"} <= set(resources["requests"]) <= set(resources["limits"]), name
            command = container["command"]
            assert command[0] == "knotwork"
            words = [w for w in command[1:] if not w.startswith("-")][:2]
            result = runner.invoke(cli_app, [*words, "--help"] if words[0] in ("db", "queue")
                                   else [words[0], "--help"])
            assert result.exit_code == 0, (name, command, result.output)
            refs = {r.get("configMapRef", r.get("secretRef", {})).get("name")
                    for r in container["envFrom"]}
            assert refs == {"knotwork-config", "knotwork-secrets"}, name


def test_api_and_worker_probes(manifests: dict[tuple[str, str], Manifest]) -> None:
    api = manifests[("Deployment", "knotwork-api")]
    assert api["spec"]["replicas"] >= 2  # stateless: any number behind the Service
    container = api["spec"]["template"]["spec"]["containers"][0]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == "/healthz"
    worker = manifests[("Deployment", "knotwork-worker")]["spec"]["template"]["spec"]
    probe = worker["containers"][0]["livenessProbe"]["exec"]["command"]
    assert probe[:4] == ["knotwork", "queue", "alive", "--this-host"]


def test_the_service_selects_the_api_pods(manifests: dict[tuple[str, str], Manifest]) -> None:
    service = manifests[("Service", "knotwork-api")]
    api = manifests[("Deployment", "knotwork-api")]
    labels = api["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert api["spec"]["selector"]["matchLabels"].items() <= labels.items()
    ports = {p["name"] for p in api["spec"]["template"]["spec"]["containers"][0]["ports"]}
    assert {p["targetPort"] for p in service["spec"]["ports"]} <= ports
    worker = manifests[("Deployment", "knotwork-worker")]["spec"]["template"]["metadata"]
    assert not service["spec"]["selector"].items() <= worker["labels"].items()


def test_config_and_secret_keys_are_settings(manifests: dict[tuple[str, str], Manifest]) -> None:
    fields = {name.upper() for name in Settings.model_fields}
    config = manifests[("ConfigMap", "knotwork-config")]["data"]
    secret = _load(TEMPLATE)[0]["stringData"]
    for key in (*config, *secret):
        if key.startswith("KNOTWORK_"):
            assert key.removeprefix("KNOTWORK_") in fields, key
    assert not {k for k in config if any(s in k for s in ("PASSWORD", "API_KEY", "SECRET"))}
    assert {"KNOTWORK_NEO4J_PASSWORD", "KNOTWORK_QDRANT_API_KEY", "KNOTWORK_REDIS_URL",
            "KNOTWORK_DATABASE_URL", "KNOTWORK_ADMIN_API_KEY"} <= set(secret)
    assert all("REPLACE-ME" in value for value in secret.values())  # a template, no real secret
    settings = Settings.model_validate({k.removeprefix("KNOTWORK_").lower(): v
                                        for k, v in {**config, **secret}.items()
                                        if k.startswith("KNOTWORK_")})
    assert settings.graph_backend.value == "neo4j" and settings.vector_backend.value == "qdrant"
