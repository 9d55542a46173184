"""Admin sign-in: admin-scoped keys (each its own actor) open a signed, expiring session;
changes in a session need its CSRF token; logout, revocation and a changed admin key end it."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from knotwork.domain.auth import Scope
from knotwork.resolution.models import ReviewItem
from knotwork.resolution.workflow import EntityWorkflow
from knotwork.services.api.app import create_app
from knotwork.services.api.sessions import CSRF_HEADER, SESSION_COOKIE, Sessions
from knotwork.settings import EmbedderBackend, Settings

pytestmark = [pytest.mark.integration]
ADMIN_KEY = "the-settings-admin-key"


@pytest.fixture
def client(tmp_path: Path, falkordb_url: str) -> Iterator[TestClient]:
    settings = Settings(data_dir=tmp_path / "data", group=f"sess_{secrets.token_hex(3)}",  # type: ignore[call-arg]
                        falkordb_url=falkordb_url, embedder=EmbedderBackend.HASHING,
                        admin_api_key=ADMIN_KEY)
    with TestClient(create_app(settings), raise_server_exceptions=False) as test_client:
        yield test_client


def _issue(client: TestClient, name: str, *scopes: Scope) -> str:
    keys = client.app.state.knotwork.runtime.documents.api_keys()  # type: ignore[attr-defined]
    secret = keys.create(name, list(scopes)).secret
    client.app.state.auth.forget()  # type: ignore[attr-defined]
    return secret


def _review(client: TestClient) -> str:
    kw = client.app.state.knotwork  # type: ignore[attr-defined]
    wf = EntityWorkflow(kw.runtime, kw.settings.group)
    item = ReviewItem(id=f"rv_{secrets.token_hex(4)}", group_id=kw.settings.group,
                      mention="Bo Lind", entity_type="PERSON", entity_id=None, decision="new",
                      score=0.8, created_at=datetime.now(UTC))
    wf.sql.add_reviews([item])
    return item.id


def _csrf(page: str) -> str:
    marker = "<meta name='csrf-token' content='"
    start = page.index(marker) + len(marker)
    return page[start:page.index("'", start)]


def _sign_in(client: TestClient, key: str) -> str:
    response = client.post("/admin/login", json={"key": key})
    assert response.status_code == 200, response.text
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Max-Age=28800" in cookie
    assert ADMIN_KEY not in cookie and key not in cookie  # the cookie carries no secret
    page = client.get("/admin")
    assert page.status_code == 200 and "Review queue" in page.text
    return _csrf(page.text)


def test_an_admin_scoped_key_signs_in_as_itself_and_changes_need_the_csrf_token(
        client: TestClient) -> None:
    alice = _issue(client, "alice-admin", Scope.ADMIN)
    csrf = _sign_in(client, alice)
    assert "signed in as alice-admin" in client.get("/admin").text
    review = _review(client)
    refused = client.post(f"/v1/review/{review}/reject", json={})
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    wrong = client.post(f"/v1/review/{review}/reject", json={}, headers={CSRF_HEADER: "x" + csrf})
    assert wrong.status_code == 403
    done = client.post(f"/v1/review/{review}/reject", json={}, headers={CSRF_HEADER: csrf})
    assert done.status_code == 200, done.text
    assert done.json()["decided_by"] == "alice-admin"  # the actor is the key, not "admin"
    assert client.get(f"/v1/review/{review}").json()["status"] == "rejected"  # reads need none


def test_logout_ends_the_session_even_for_a_kept_cookie(client: TestClient) -> None:
    csrf = _sign_in(client, ADMIN_KEY)
    token = client.cookies.get(SESSION_COOKIE)
    assert token
    out = client.post("/admin/logout", json={}, headers={CSRF_HEADER: csrf})
    assert out.status_code == 200 and out.json() == {"signed_out": True}
    assert not client.cookies.get(SESSION_COOKIE)
    client.cookies.set(SESSION_COOKIE, token)  # replayed after logout: refused
    page = client.get("/admin")
    assert page.status_code == 401 and "Sign in" in page.text
    assert client.get("/v1/review").status_code == 401


def test_revoking_the_key_or_changing_the_admin_key_ends_its_sessions(client: TestClient) -> None:
    bob = _issue(client, "bob-admin", Scope.ADMIN)
    _sign_in(client, bob)
    keys = client.app.state.knotwork.runtime.documents.api_keys()  # type: ignore[attr-defined]
    assert keys.revoke(next(k.id for k in keys.list() if k.name == "bob-admin"))
    client.app.state.auth.forget()  # type: ignore[attr-defined]
    assert client.get("/v1/review").status_code == 401
    _sign_in(client, ADMIN_KEY)
    auth = client.app.state.auth  # type: ignore[attr-defined]
    auth._settings = auth._settings.model_copy(update={"admin_api_key": SecretStr("rotated")})
    assert client.get("/v1/review").status_code == 401


def test_bad_sign_ins(client: TestClient) -> None:
    query_only = _issue(client, "reader", Scope.QUERY)
    for key in ("wrong", query_only):
        refused = client.post("/admin/login", json={"key": key})
        assert refused.status_code == 401 and SESSION_COOKIE not in refused.headers.get(
            "set-cookie", "")
    client.cookies.set(SESSION_COOKIE, "forged.token.value")
    assert client.get("/admin").status_code == 401
    assert client.get("/v1/review").status_code == 401


def test_the_sign_in_form_posts_without_script(client: TestClient) -> None:
    page = client.get("/admin")
    assert page.status_code == 401
    assert "<form method='post' action='/admin/login'" in page.text and "name='key'" in page.text
    response = client.post("/admin/login", data={"key": ADMIN_KEY}, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/admin"
    assert client.get("/admin").status_code == 200
    wrong = client.post("/admin/login", data={"key": "nope"}, follow_redirects=False)
    assert wrong.status_code == 401 and "Wrong key" in wrong.text


def test_sessions_expire(monkeypatch: pytest.MonkeyPatch) -> None:
    sessions = Sessions("secret", ttl_s=60)
    token, session = sessions.open("k1", "alice", None)
    assert sessions.read(token) == session
    assert Sessions("other secret", ttl_s=60).read(token) is None  # signed
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + 61)
    assert sessions.read(token) is None


def test_every_route_needing_an_admin_is_admin_scoped(client: TestClient) -> None:
    """A route with the Admin dependency must be under an ADMIN scope rule, or a key would
    not be verified (and its actor not known) before the route asks for one."""
    from fastapi.routing import APIRoute

    from knotwork.services.api.auth import scope_for
    from knotwork.services.api.entity_routes import require_admin

    def needs_admin(route: APIRoute) -> bool:
        stack = list(route.dependant.dependencies)
        while stack:
            dep = stack.pop()
            if dep.call is require_admin:
                return True
            stack.extend(dep.dependencies)
        return False

    routes = [r for top in client.app.routes  # type: ignore[attr-defined]
              for r in getattr(getattr(top, "original_router", None), "routes", [top])]
    guarded = [(m, r.path) for r in routes if isinstance(r, APIRoute) and needs_admin(r)
               for m in r.methods]
    assert len(guarded) >= 8
    assert [g for g in guarded if scope_for(*g) is not Scope.ADMIN] == []


def test_a_wrong_method_names_every_method_of_the_path(client: TestClient) -> None:
    response = client.request("OPTIONS", "/v1/entities/some-id")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, PATCH"
    assert client.delete("/v1/graphrag/query").headers["allow"] == "POST"
