"""Source ACLs: restricted Confluence pages and private Slack channels never reach a reader
who may not read them (citations, answers, context, entity and community reads)."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from knotwork.core import Knotwork
from knotwork.domain.auth import Scope
from knotwork.domain.models import QueryMode
from knotwork.services.api.app import create_app
from knotwork.settings import EmbedderBackend, Settings

pytestmark = [pytest.mark.integration, pytest.mark.models]
SECRET_WORDS = ("Omar", "Shah", "4.2", "June")
BOB = ["user:bob@acme.com", "group:engineering"]
ANA = ["user:ana@acme.com"]
FINANCE = ["group:finance"]


def _page(page_id: str, title: str, html: str, restrictions: dict[str, Any] | None = None
          ) -> dict[str, Any]:
    page: dict[str, Any] = {
        "id": page_id, "status": "current", "title": title, "spaceId": "42",
        "authorId": "acc-1", "createdAt": "2026-03-01T09:00:00.000Z",
        "version": {"number": 1, "createdAt": "2026-03-01T09:00:00.000Z", "authorId": "acc-1"},
        "body": {"storage": {"representation": "storage", "value": html}},
        "_links": {"webui": f"/spaces/ENG/pages/{page_id}", "base": "https://acme.atlassian.net/wiki"},
    }
    if restrictions is not None:
        page["restrictions"] = restrictions
    return page


def _write_sources(root: Path) -> Path:
    confluence = root / "export" / "confluence"
    confluence.mkdir(parents=True)
    (confluence / "users.json").write_text(json.dumps({"acc-1": "Lena Fischer"}))
    pages = [
        _page("1001", "Project Kestrel", "<p>Lena Fischer leads Project Kestrel. Kestrel uses "
              "PostgreSQL. Project Nightjar is a new initiative in the Platform group.</p>"),
        _page("1002", "Project Nightjar (confidential)", "<p>Omar Shah leads Project Nightjar. "
              "The Nightjar budget is 4.2 million euros.</p>",
              {"read": {"restrictions": {"user": {"results": [{"accountId": "acc-9",
                                                               "email": "Ana@Acme.com"}]},
                                         "group": {"results": [{"name": "finance"}]}}}}),
    ]
    for page in pages:
        (confluence / f"{page['id']}.json").write_text(json.dumps(page))
    slack = root / "export" / "slack"
    (slack / "general").mkdir(parents=True)
    (slack / "nightjar-core").mkdir(parents=True)
    (slack / "users.json").write_text(json.dumps([
        {"id": "U1", "name": "lena", "real_name": "Lena Fischer",
         "profile": {"real_name": "Lena Fischer", "email": "lena@acme.com"}},
        {"id": "U2", "name": "ana", "real_name": "Ana Ruiz",
         "profile": {"real_name": "Ana Ruiz", "email": "ana@acme.com"}}]))
    (slack / "channels.json").write_text(json.dumps([{"id": "C1", "name": "general",
                                                      "members": ["U1", "U2"]}]))
    (slack / "groups.json").write_text(json.dumps([{"id": "G9", "name": "nightjar-core",
                                                    "is_private": True, "members": ["U2"]}]))
    (slack / "general" / "2026-03-02.json").write_text(json.dumps([
        {"type": "message", "user": "U1", "ts": "1772442000.000100",
         "text": "Kestrel standup moved to 10:00."}]))
    (slack / "nightjar-core" / "2026-03-02.json").write_text(json.dumps([
        {"type": "message", "user": "U2", "ts": "1772442600.000100",
         "text": "Omar Shah says the Nightjar launch moves to June."}]))
    return root / "export"


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> Iterator[Knotwork]:
    root = tmp_path_factory.mktemp("acl")
    settings = Settings(data_dir=root / "data", group=f"acl_{secrets.token_hex(4)}",  # type: ignore[arg-type]
                        falkordb_url=falkordb_url, embedder=EmbedderBackend.HASHING)
    with Knotwork(settings) as kw:
        kw.ingest_path(_write_sources(root))
        kw.build_communities()
        yield kw


def _leaks(text: str) -> list[str]:
    return [w for w in SECRET_WORDS if w in text]


def test_acls_are_read_from_the_sources(kb: Knotwork) -> None:
    docs = {d.title: d for d in kb.runtime.documents.list_documents(kb.settings.group)}
    restricted = docs["Project Nightjar (confidential)"]
    assert set(restricted.acl) == {"user:acc-9", "user:ana@acme.com", "group:finance"}
    assert docs["Project Kestrel"].acl == []
    private = [d for d in docs.values() if d.metadata.get("channel") == "nightjar-core"]
    assert private and set(private[0].acl) >= {"user:U2", "user:ana@acme.com", "slack-channel:G9"}
    general = [d for d in docs.values() if d.metadata.get("channel") == "general"]
    assert general and general[0].acl == []


@pytest.mark.parametrize("mode", list(QueryMode))
def test_a_reader_without_access_never_sees_restricted_text(kb: Knotwork, mode: QueryMode) -> None:
    restricted_ids = {d.id for d in kb.runtime.documents.list_documents(kb.settings.group) if d.acl}
    for question in ("Who leads Project Nightjar?", "What is the Nightjar budget?",
                     "When does the Nightjar launch happen?", "What are the main projects?"):
        result = kb.query(question, mode=mode, principals=BOB)
        assert not {c.document_id for c in result.citations} & restricted_ids, (question, mode)
        assert not _leaks(f"{result.answer}\n{result.context}"), (question, mode, result.answer)


def test_a_reader_with_access_gets_the_restricted_answer(kb: Knotwork) -> None:
    for principals in (ANA, FINANCE, None):
        result = kb.query("Who leads Project Nightjar?", mode=QueryMode.LOCAL, principals=principals)
        assert "Omar Shah" in result.answer, (principals, result.answer)
        assert any(c.source_id == "1002" for c in result.citations)


def test_api_keys_carry_principals(kb: Knotwork) -> None:
    keys = kb.runtime.documents.api_keys()
    bob = keys.create("bob", [Scope.QUERY], principals=BOB).secret
    ana = keys.create("ana", [Scope.QUERY], principals=ANA).secret
    with TestClient(create_app(kb.settings, knotwork=kb)) as client:
        def ask(secret: str, question: str) -> dict[str, Any]:
            response = client.post("/v1/graphrag/query", json={"query": question, "mode": "LOCAL",
                                                               "include_context": True},
                                   headers={"Authorization": f"Bearer {secret}"})
            assert response.status_code == 200, response.text
            body: dict[str, Any] = response.json()
            return body

        hidden = ask(bob, "Who leads Project Nightjar?")
        assert not _leaks(json.dumps(hidden))
        assert "Omar Shah" in ask(ana, "Who leads Project Nightjar?")["answer"]
        bob_header = {"Authorization": f"Bearer {bob}"}
        found = client.post("/v1/entities/search", json={"query": "Omar Shah"}, headers=bob_header)
        assert found.status_code == 200 and not _leaks(json.dumps(found.json()))
        communities = client.get("/v1/communities", headers=bob_header)
        assert communities.status_code == 200 and not _leaks(json.dumps(communities.json()))
