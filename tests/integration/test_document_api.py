"""Documents over REST on the embedded stack: upload (text, Markdown, HTML), versions, list
with status, read, delete with cascade (a query afterwards cites nothing from it), source ACLs
on reads, scopes and clear 4xx errors that store nothing."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from knotwork.domain.auth import Scope
from knotwork.domain.ports import Collection
from knotwork.services.api.app import create_app
from knotwork.settings import Settings
from tests.integration.test_api import _problem

pytestmark = [pytest.mark.integration]

PLAN = ("# Harbor plan\n\nOndrej Vasko leads the Harbor Team. The Harbor Team maintains the "
        "Ledger Service.\n")
PRICING = ("<html><head><title>Pricing notes</title></head><body><p>Marta Vasko owns the "
           "Pricing Engine.</p></body></html>")


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> Iterator[TestClient]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("doc_api") / "data",  # type: ignore[call-arg]
                        group=f"docs_{secrets.token_hex(3)}", falkordb_url=falkordb_url,
                        embedder="hashing")
    with TestClient(create_app(settings)) as client:
        yield client


def _group() -> str:
    return f"d_{secrets.token_hex(4)}"


def _upload(api: TestClient, group: str, **body: Any) -> Any:
    return api.post("/v1/documents", json={"group_id": group, **body})


def test_upload_list_read_and_versions(api: TestClient) -> None:
    group = _group()
    first = _upload(api, group, name="plans/harbor.md", content=PLAN, format="markdown")
    assert first.status_code == 201, first.text
    doc = first.json()
    assert doc["outcome"] == "added" and doc["status"] == "COMPLETED"
    assert doc["title"] == "Harbor plan" and doc["entities"] >= 2 and doc["chunk_count"] >= 1
    html = _upload(api, group, name="pricing.html", content=PRICING, format="html")
    assert html.status_code == 201 and html.json()["title"] == "Pricing notes"

    again = _upload(api, group, name="plans/harbor.md", content=PLAN, format="markdown")
    assert again.status_code == 200 and again.json()["outcome"] == "unchanged"
    changed = _upload(api, group, name="plans/harbor.md", format="markdown",
                      content=PLAN.replace("Ledger Service", "Billing Gateway"))
    assert changed.status_code == 200 and changed.json()["outcome"] == "updated"
    assert changed.json()["id"] == doc["id"]  # the same document, a new version

    listed = api.get("/v1/documents", params={"group_id": group}).json()
    assert listed["total"] == 2 and listed["counts"] == {"COMPLETED": 2}
    assert {d["title"] for d in listed["items"]} == {"Harbor plan", "Pricing notes"}
    only = api.get("/v1/documents", params={"group_id": group, "q": "pricing"}).json()
    assert [d["title"] for d in only["items"]] == ["Pricing notes"]
    paged = api.get("/v1/documents", params={"group_id": group, "limit": 1, "offset": 1}).json()
    assert len(paged["items"]) == 1 and paged["total"] == 2
    one = api.get(f"/v1/documents/{doc['id']}", params={"group_id": group})
    assert one.status_code == 200 and one.json()["status"] == "COMPLETED"
    _problem(api.get("/v1/documents/nope", params={"group_id": group}), 404)
    # another tenant does not see it
    _problem(api.get(f"/v1/documents/{doc['id']}", params={"group_id": _group()}), 404)


def test_delete_cascades_and_the_answer_no_longer_cites_it(api: TestClient) -> None:
    group = _group()
    kw = api.app.state.knotwork  # type: ignore[attr-defined]
    _upload(api, group, name="harbor.md", content=PLAN, format="markdown")
    pricing = _upload(api, group, name="pricing.html", content=PRICING, format="html").json()
    ask = {"query": "Who owns the Pricing Engine?", "group_id": group, "mode": "LOCAL"}
    before = api.post("/v1/graphrag/query", json=ask).json()
    assert any(c["document_id"] == pricing["id"] for c in before["citations"])
    facts_before = kw.runtime.graph.counts(group)

    gone = api.delete(f"/v1/documents/{pricing['id']}", params={"group_id": group})
    assert gone.status_code == 200, gone.text
    assert gone.json()["documents"] == 1 and gone.json()["facts"] >= 1

    after = api.post("/v1/graphrag/query", json=ask).json()
    assert not any(c["document_id"] == pricing["id"] for c in after["citations"])
    assert "Marta" not in after["answer"]
    names = {e.name for e in kw.runtime.graph.list_entities(group)}
    assert "Marta Vasko" not in names and "Ondrej Vasko" in names
    assert kw.runtime.graph.counts(group) != facts_before
    points = list(kw.runtime.vectors.scan(Collection.FACTS, group, with_vectors=False))
    assert not any("Pricing" in str(p.payload) for p in points)
    assert [d["title"] for d in api.get("/v1/documents", params={"group_id": group})
            .json()["items"]] == ["Harbor plan"]
    _problem(api.delete(f"/v1/documents/{pricing['id']}", params={"group_id": group}), 404)


def test_bad_uploads_are_refused_and_store_nothing(api: TestClient) -> None:
    group = _group()
    for body in ({"name": "../etc/passwd", "content": "x y z"},
                 {"name": "a.txt", "content": "   "},
                 {"name": "a.txt", "content": "text", "format": "pdf"},
                 {"name": "a.txt", "content": "text", "acl": ["everyone"]},
                 {"name": "a.html", "content": "<p> </p>", "format": "html"}):
        _problem(_upload(api, group, **body))
    assert api.get("/v1/documents", params={"group_id": group}).json()["total"] == 0


def test_reads_honour_source_acls_and_writes_need_the_ingest_scope(api: TestClient) -> None:
    group = _group()
    kw = api.app.state.knotwork  # type: ignore[attr-defined]
    store = kw.runtime.documents.api_keys()
    reader = store.create(f"r-{group}", [Scope.QUERY], tenant=group, principals=["user:ann"]).secret
    writer = store.create(f"w-{group}", [Scope.INGEST, Scope.QUERY], tenant=group).secret
    api.app.state.auth.forget()  # type: ignore[attr-defined]
    try:
        as_reader = {"Authorization": f"Bearer {reader}"}
        as_writer = {"Authorization": f"Bearer {writer}"}
        assert api.post("/v1/documents", headers=as_reader,
                        json={"name": "x.md", "content": PLAN}).status_code == 403
        ok = api.post("/v1/documents", headers=as_writer,
                      json={"name": "open.md", "content": PLAN, "format": "markdown"})
        assert ok.status_code == 201, ok.text
        hidden = api.post("/v1/documents", headers=as_writer, json={
            "name": "secret.html", "content": PRICING, "format": "html", "acl": ["group:pricing"]})
        assert hidden.status_code == 201, hidden.text
        seen = api.get("/v1/documents", headers=as_reader).json()
        assert [d["title"] for d in seen["items"]] == ["Harbor plan"]
        _problem(api.get(f"/v1/documents/{hidden.json()['id']}", headers=as_reader), 404)
        assert api.delete(f"/v1/documents/{ok.json()['id']}", headers=as_reader).status_code == 403
    finally:
        for key in store.list():
            if key.name.endswith(group):
                store.revoke(key.id)
        api.app.state.auth.forget()  # type: ignore[attr-defined]
