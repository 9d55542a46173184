"""Tenant isolation under attack: every route of the OpenAPI schema (and the admin pages), with
keys bound to tenant ``alpha`` of every scope, tries to reach tenant ``beta`` by naming it in
the body, the query string, an escaped JSON key, duplicate keys (body and query) and headers,
and by beta's own ids in the path.

Pass: no response carries beta's data (its names and texts), naming beta is refused with 403
(or 401/403 for a scope the key lacks), and beta's graph, documents, vectors, review queue and
audit trail are exactly as they were.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from knotwork.core import Knotwork
from knotwork.domain.auth import Scope
from knotwork.domain.models import EntityType
from knotwork.domain.ports import Collection
from knotwork.resolution.models import ReviewItem
from knotwork.resolution.workflow import EntityWorkflow
from knotwork.services.api.app import create_app
from knotwork.settings import EmbedderBackend, Settings

pytestmark = [pytest.mark.integration]

ALPHA_TEXT = "Aino Arnesen leads Project Larkspur. Aino Arnesen works in Lisbon."
BETA_TEXT = ("Bram Bakkerud leads Project Quillfeather. Bram Bakkerud works in Trondheim. "
             "Cleo Castellano reports to Bram Bakkerud.")
# beta's data: none of these may appear in any response to an alpha key
BETA_MARKERS = ("Bakkerud", "Quillfeather", "Trondheim", "Castellano")


OPEN = ("/healthz", "/metrics")  # no tenant, no key: naming one changes nothing


@dataclass
class Stage:
    client: TestClient
    kw: Knotwork
    alpha: str
    beta: str
    keys: dict[str, str]  # scope name -> secret of a key bound to alpha
    beta_entity: str
    beta_other: str
    beta_review: str
    beta_merge: str
    beta_community: str
    beta_action: str
    beta_document: str


def _settings(tmp_path: Path, falkordb_url: str) -> Settings:
    return Settings(data_dir=tmp_path / "data", group=f"dflt_{secrets.token_hex(3)}",  # type: ignore[call-arg]
                    falkordb_url=falkordb_url, embedder=EmbedderBackend.HASHING,
                    admin_api_key="settings-admin-secret")


@pytest.fixture(scope="module")
def stage(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> Iterator[Stage]:
    tmp_path = tmp_path_factory.mktemp("attacks")
    with TestClient(create_app(_settings(tmp_path, falkordb_url)),
                    raise_server_exceptions=False) as client:
        kw: Knotwork = client.app.state.knotwork  # type: ignore[attr-defined]
        alpha, beta = f"alpha_{secrets.token_hex(3)}", f"beta_{secrets.token_hex(3)}"
        when = datetime(2026, 3, 1, tzinfo=UTC)
        kw.add_episode(ALPHA_TEXT, group_id=alpha, reference_time=when)
        kw.add_episode(BETA_TEXT, group_id=beta, reference_time=when)
        kw.build_communities(beta)
        kw.build_communities(alpha)
        entities = kw.runtime.graph.list_entities(beta)
        people = sorted((e for e in entities if "Bakkerud" in e.name or "Castellano" in e.name),
                        key=lambda e: e.name)
        assert len(people) == 2, [e.name for e in entities]
        wf = EntityWorkflow(kw.runtime, beta)
        review = ReviewItem(id=f"rv_{secrets.token_hex(4)}", group_id=beta, mention="Bram B.",
                            entity_type="PERSON", entity_id=people[0].id, decision="merge_flagged",
                            score=0.8, created_at=when)
        decided = review.model_copy(update={"id": f"rv_{secrets.token_hex(4)}"})
        wf.sql.add_reviews([review, decided])
        wf.approve(decided.id, "setup")
        action = wf.actions(1)[0].id
        extra = wf.create("Quillfeather Castellano", EntityType.PERSON, {}, None)
        merge = wf.merge(people[1].id, [extra.entity_id], "setup")
        community = kw.communities(beta).communities(None)[0].id
        store = kw.runtime.documents.api_keys()
        keys = {scope.value: store.create(f"alpha-{scope.value}", [scope], tenant=alpha).secret
                for scope in (Scope.QUERY, Scope.INGEST, Scope.ADMIN)}
        client.app.state.auth.forget()  # type: ignore[attr-defined]
        yield Stage(client, kw, alpha, beta, keys, people[0].id, people[1].id, review.id,
                    merge.id, community, action, kw.list_documents(beta)[0].id)


def _snapshot(stage: Stage) -> dict[str, object]:
    """Everything of beta that a write could change."""
    kw, beta = stage.kw, stage.beta
    wf = EntityWorkflow(kw.runtime, beta)
    entities = sorted((e.id, e.name, e.type, tuple(e.aliases), e.version)
                      for e in kw.runtime.graph.list_entities(beta))
    return {
        "graph": kw.runtime.graph.counts(beta),
        "entities": entities,
        "documents": kw.runtime.documents.counts(beta),
        "vectors": [kw.runtime.vectors.count(c, beta) for c in Collection],
        "reviews": sorted((r.id, r.status) for r in wf.reviews(None, "", 500)),
        "audit": sorted(len(wf.audit_trail(e[0])) for e in entities),
        "actions": sorted((a.id, a.undone_at) for a in wf.actions(500)),
    }


def _bodies(stage: Stage) -> dict[tuple[str, str], dict[str, object] | None]:
    """A valid request for every route, asking about beta's things."""
    # no marker in any request: a response carrying one got it from beta's stores
    ask = {"query": "Who leads the project Bram works on, and where does Bram work?"}
    ids = [stage.beta_entity, stage.beta_other]
    return {
        ("GET", "/healthz"): None,
        ("GET", "/metrics"): None,
        ("POST", "/v1/graphrag/query"): {**ask, "mode": "LOCAL", "include_context": True},
        ("POST", "/v1/graphrag/query/stream"): {**ask, "mode": "LOCAL"},
        ("POST", "/v1/graphrag/local"): {**ask, "seed_entity_ids": ids},
        ("POST", "/v1/graphrag/global"): ask,
        ("POST", "/v1/graphrag/drift"): ask,
        ("POST", "/v1/episodes"): {"content": "Dana Dorn joined as a designer."},
        ("POST", "/v1/entities/resolve"): {"mention_text": "Bram Bakkerd"},
        ("POST", "/v1/entities"): {"display_name": "Eero Eskola", "entity_type": "PERSON"},
        ("POST", "/v1/entities/search"): {"query": "Bram"},
        ("GET", "/v1/entities/{entity_id}"): None,
        ("PATCH", "/v1/entities/{entity_id}"): {"version": 1, "summary": "rewritten"},
        ("GET", "/v1/entities/{entity_id}/audit"): None,
        ("POST", "/v1/entities/merge"): {"target_id": stage.beta_entity,
                                         "source_ids": [stage.beta_other]},
        ("POST", "/v1/merges/{merge_id}/unmerge"): {},
        ("GET", "/v1/review"): None,
        ("GET", "/v1/review/{review_id}"): None,
        ("POST", "/v1/review/{review_id}/approve"): {},
        ("POST", "/v1/review/{review_id}/reject"): {},
        ("POST", "/v1/review/{review_id}/merge"): {"target_id": stage.beta_other},
        ("POST", "/v1/review/bulk"): {"action": "reject"},
        ("GET", "/v1/entities/{entity_id}/mentions"): None,
        ("POST", "/v1/entities/{entity_id}/split"): {"surface_forms": ["Bram Bakkerud"],
                                                     "into": stage.beta_other},
        ("GET", "/v1/actions"): None,
        ("POST", "/v1/documents"): {"name": "notes.md", "content": "Dana Dorn joined as a designer."},
        ("GET", "/v1/documents"): None,
        ("GET", "/v1/documents/{document_id}"): None,
        ("DELETE", "/v1/documents/{document_id}"): None,
        ("POST", "/v1/actions/{action_id}/undo"): {},
        ("GET", "/v1/communities"): None,
        ("GET", "/v1/communities/{community_id}"): None,
        ("GET", "/v1/reports/latest"): None,
        ("POST", "/v1/graph/traverse"): {"entity_ids": ids},
        ("POST", "/v1/graph/subgraph"): {"entity_ids": ids, "include_hops": 1},
        ("POST", "/v1/graph/paths"): {"source_entity_id": stage.beta_entity,
                                      "target_entity_id": stage.beta_other},
        # the admin pages are outside the schema
        ("GET", "/admin"): None,
        ("GET", "/admin/entities"): None,
        ("GET", "/admin/entities/{entity_id}"): None,
    }


def _path(stage: Stage, template: str) -> str:
    return (template.replace("{entity_id}", stage.beta_entity)
            .replace("{merge_id}", stage.beta_merge)
            .replace("{review_id}", stage.beta_review)
            .replace("{community_id}", stage.beta_community)
            .replace("{action_id}", stage.beta_action)
            .replace("{document_id}", stage.beta_document))


@dataclass(frozen=True)
class Attack:
    name: str
    names_beta: bool  # the request names beta: it must be refused


def _variants(body: dict[str, object] | None, alpha: str, beta: str
              ) -> Iterator[tuple[Attack, str, bytes | None, dict[str, str]]]:
    """(attack, query string, raw body, extra headers) for each way of naming a tenant."""
    def raw(obj: dict[str, object]) -> bytes:
        return json.dumps(obj).encode()

    base = dict(body or {})
    plain = raw(base) if body is not None else None
    yield Attack("ids only", False), "", plain, {}
    yield Attack("headers", False), "", plain, {"X-Group-Id": beta, "X-Tenant": beta,
                                                  "X-Knotwork-Tenant": beta}
    yield Attack("query", True), f"group_id={beta}", plain, {}
    yield Attack("query twice", True), f"group_id={alpha}&group_id={beta}", plain, {}
    if body is None:
        return
    yield Attack("body", True), "", raw({**base, "group_id": beta}), {}
    yield Attack("query alpha, body beta", True), f"group_id={alpha}", raw({**base, "group_id": beta}), {}
    inner = raw(base)[1:-1]
    sep = b", " if inner else b""
    yield (Attack("escaped key", True), "",
           b'{' + inner + sep + b'"group\\u005fid": "' + beta.encode() + b'"}', {})
    yield (Attack("duplicate key", True), "",
           b'{' + inner + sep + b'"group_id": "' + alpha.encode() + b'", "group_id": "'
           + beta.encode() + b'"}', {})
    yield (Attack("no content type", True), "", raw({**base, "group_id": beta}),
           {"Content-Type": ""})


def _schema_routes(client: TestClient) -> set[tuple[str, str]]:
    paths = client.app.openapi()["paths"]  # type: ignore[attr-defined]
    return {(method.upper(), path) for path, item in paths.items() for method in item}


def test_every_route_of_the_schema_is_attacked(stage: Stage) -> None:
    missing = _schema_routes(stage.client) - set(_bodies(stage))
    assert not missing, f"routes without an attack request: {sorted(missing)}"


@pytest.mark.parametrize("scope", ["query", "ingest", "admin"])
def test_an_alpha_key_never_reaches_beta(stage: Stage, scope: str) -> None:
    before = _snapshot(stage)
    secret = stage.keys[scope]
    leaks: list[str] = []
    accepted_naming_beta: list[str] = []
    for (method, template), body in _bodies(stage).items():
        url = _path(stage, template)
        for attack, query, raw, headers in _variants(body, stage.alpha, stage.beta):
            sent = {"Authorization": f"Bearer {secret}", **headers}
            if raw is not None and "Content-Type" not in headers:
                sent["Content-Type"] = "application/json"
            if headers.get("Content-Type") == "":
                sent.pop("Content-Type")
            response = stage.client.request(method, f"{url}?{query}" if query else url,
                                            content=raw, headers=sent)
            where = f"{scope} key, {method} {template}, {attack.name}: {response.status_code}"
            if any(marker in response.text for marker in BETA_MARKERS):
                leaks.append(where)
            refused = response.status_code in (401, 403) or (
                template.startswith("/admin") and response.status_code >= 400)
            if attack.names_beta and template not in OPEN and not refused:
                accepted_naming_beta.append(where)
    assert not leaks, "beta's data reached an alpha key:\n" + "\n".join(leaks)
    assert not accepted_naming_beta, "a request naming beta was not refused:\n" + "\n".join(
        accepted_naming_beta)
    assert _snapshot(stage) == before, "an alpha key changed beta"


def test_naming_beta_is_refused_before_the_route_runs(stage: Stage) -> None:
    """403 for a bound key naming another tenant, even where the body would not validate."""
    secret = stage.keys["ingest"]
    response = stage.client.post("/v1/episodes", content=b'{"group\\u005fid": "' +
                                 stage.beta.encode() + b'"}',
                                 headers={"Authorization": f"Bearer {secret}",
                                          "Content-Type": "application/json"})
    assert response.status_code == 403, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert stage.alpha in response.json()["detail"]


def test_the_alpha_key_works_in_alpha(stage: Stage) -> None:
    """The refusals above are not a broken API: the same keys read and write their own tenant."""
    auth = {"Authorization": f"Bearer {stage.keys['query']}"}
    answer = stage.client.post("/v1/graphrag/query", json={"query": "Who leads Project Larkspur?",
                                                          "mode": "LOCAL"}, headers=auth)
    assert answer.status_code == 200 and "Aino Arnesen" in answer.json()["answer"]
    named = stage.client.post(f"/v1/graphrag/query?group_id={stage.alpha}",
                              json={"query": "Who leads Project Larkspur?", "group_id": stage.alpha},
                              headers=auth)
    assert named.status_code == 200 and "Aino Arnesen" in named.json()["answer"]
    ingest = {"Authorization": f"Bearer {stage.keys['ingest']}"}
    before = stage.kw.runtime.documents.counts(stage.alpha).documents
    wrote = stage.client.post("/v1/episodes", json={"content": "Farid Ferraro joined Project Larkspur."},
                              headers={**ingest, "X-Group-Id": stage.beta})
    assert wrote.status_code == 200, wrote.text
    assert stage.kw.runtime.documents.counts(stage.alpha).documents == before + 1


def test_an_unbound_key_naming_two_tenants_is_refused(stage: Stage) -> None:
    response = stage.client.post(
        f"/v1/graphrag/query?group_id={stage.alpha}",
        json={"query": "Who leads Project Larkspur?", "group_id": stage.beta},
        headers={"X-Admin-Key": "settings-admin-secret"})
    assert response.status_code == 403, response.text
    assert "more than one tenant" in response.json()["detail"]


# --------------------------------------------------------------------------- MCP at /mcp

MCP_HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "MCP-Protocol-Version": "2025-06-18"}


def _mcp_attacks(stage: Stage) -> list[tuple[str, str, str]]:
    """(label, query string, raw JSON-RPC body): every way an MCP request can name beta."""
    a, b = stage.alpha, stage.beta

    def call(tool: str, arguments: str) -> str:
        return ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
                f'"params": {{"name": "{tool}", "arguments": {arguments}}}}}')

    ask = '"query": "Who leads the project Bram works on?"'
    return [
        ("argument", "", call("query", f'{{{ask}, "group_id": "{b}"}}')),
        ("escaped key", "", call("search", f'{{{ask}, "group\\u005fid": "{b}"}}')),
        ("duplicate key, beta first", "", call("query", f'{{{ask}, "group_id": "{b}", "group_id": "{a}"}}')),
        ("duplicate key, beta last", "", call("query", f'{{{ask}, "group_id": "{a}", "group_id": "{b}"}}')),
        ("query string", f"?group_id={b}", call("query", f"{{{ask}}}")),
        ("nested", "", call("query", f'{{{ask}, "x": {{"group_id": "{b}"}}}}')),
        ("batch", "", "[" + call("query", f"{{{ask}}}") + ","
         + call("entity", f'{{"name": "Bram Bakkerud", "group_id": "{b}"}}') + "]"),
        ("resource", "", ('{"jsonrpc": "2.0", "id": 1, "method": "resources/read", '
                         f'"params": {{"uri": "knotwork://tenants/{b}/documents"}}}}')),
        ("report", "", ('{"jsonrpc": "2.0", "id": 1, "method": "resources/read", '
                       f'"params": {{"uri": "knotwork://tenants/{b}/reports/latest"}}}}')),
        ("write", "", call("add_episode", f'{{"content": "Dana Dorn left.", "group_id": "{b}"}}')),
        ("delete", "", call("delete_document",
                            f'{{"document_id": "{stage.beta_document}", "group_id": "{b}"}}')),
        ("not a string", "", call("query", f'{{{ask}, "group_id": ["{b}"]}}')),
    ]


@pytest.mark.parametrize("scope", ["query", "ingest", "admin"])
def test_mcp_naming_beta_is_refused(stage: Stage, scope: str) -> None:
    """The same tenant decision as REST: an alpha key naming beta anywhere in an MCP request
    gets 403 before any tool runs, and beta is unchanged."""
    before = _snapshot(stage)
    for label, query, raw in _mcp_attacks(stage):
        response = stage.client.post(f"/mcp{query}", content=raw, headers={
            **MCP_HEADERS, "Authorization": f"Bearer {stage.keys[scope]}"})
        assert response.status_code == 403, (scope, label, response.status_code, response.text)
        assert response.headers["content-type"].startswith("application/problem+json")
        assert not any(marker in response.text for marker in BETA_MARKERS), (scope, label)
    assert _snapshot(stage) == before, "an MCP request of an alpha key changed beta"


def test_mcp_with_beta_ids_finds_nothing(stage: Stage) -> None:
    """An alpha key using beta's ids (no tenant named) acts in alpha: errors, no beta data."""
    before = _snapshot(stage)
    calls = [("entity", {"entity_id": stage.beta_entity}),
             ("traverse", {"entity_ids": [stage.beta_entity, stage.beta_other]}),
             ("search", {"query": "Bram Bakkerud", "center_entity_id": stage.beta_entity}),
             ("delete_document", {"document_id": stage.beta_document})]
    for scope in ("query", "ingest", "admin"):
        for tool, arguments in calls:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": tool, "arguments": arguments}}
            response = stage.client.post("/mcp", json=body, headers={
                **MCP_HEADERS, "Authorization": f"Bearer {stage.keys[scope]}"})
            assert response.status_code in (200, 403), (scope, tool, response.text)
            assert not any(marker in response.text for marker in BETA_MARKERS), (scope, tool)
            if response.status_code == 200:
                assert response.json()["result"]["isError"] is True, (scope, tool, response.text)
    assert _snapshot(stage) == before


def test_mcp_alpha_key_works_in_alpha(stage: Stage) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "query", "arguments": {"query": "Who leads Project Larkspur?",
                                                      "group_id": stage.alpha}}}
    response = stage.client.post("/mcp", json=body, headers={
        **MCP_HEADERS, "Authorization": f"Bearer {stage.keys['query']}"})
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["isError"] is False and "Aino Arnesen" in result["structuredContent"]["answer"]
    # the resource of "the caller's tenant" is alpha's for an alpha key (reads: not ingest-only)
    for scope in ("query", "admin"):
        read = {"jsonrpc": "2.0", "id": 2, "method": "resources/read",
                "params": {"uri": "knotwork://documents"}}
        response = stage.client.post("/mcp", json=read, headers={
            **MCP_HEADERS, "Authorization": f"Bearer {stage.keys[scope]}"})
        assert response.status_code == 200, response.text
        listing = json.loads(response.json()["result"]["contents"][0]["text"])
        assert listing["total"] >= 1 and not any(m in response.text for m in BETA_MARKERS)
