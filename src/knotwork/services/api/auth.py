"""API keys on every request: who calls (401), may they (403), how often (429), which tenant.

Scopes come from the route, by rules kept as data (``SCOPE_RULES``), so routers need no
decorations; a key bound to a tenant may only name that tenant and is its default tenant.
"""

from __future__ import annotations

import hmac
import re
import secrets
import threading
import time
from dataclasses import dataclass

import anyio.to_thread
from fastapi import HTTPException, Request

from knotwork.domain.auth import ApiKey, Scope
from knotwork.domain.ports import ApiKeyStore
from knotwork.domain.timeutil import utcnow
from knotwork.infra.sql.api_keys import digest
from knotwork.services.api.ratelimit import InMemoryRateLimiter, RateLimiter, RedisRateLimiter
from knotwork.services.api.sessions import (
    CSRF_HEADER,
    SAFE_METHODS,
    SESSION_COOKIE,
    Session,
    Sessions,
    fingerprint,
)
from knotwork.services.api.tenancy import Named, decide, named_tenants
from knotwork.settings import AuthMode, Settings

OPEN_PATHS = ("/healthz", "/metrics", "/docs", "/redoc", "/openapi.json",
              # the sign-in checks the key it is given itself
              "/admin/login", "/admin/admin.js")


@dataclass(frozen=True)
class ScopeRule:
    """Requests whose route template matches ``pattern`` (and method, if given) need ``scope``."""

    pattern: str
    scope: Scope
    methods: frozenset[str] = frozenset()

    def matches(self, method: str, path: str) -> bool:
        return (not self.methods or method in self.methods) and re.search(self.pattern, path) is not None


# first match wins; anything else under /v1 needs QUERY
SCOPE_RULES: tuple[ScopeRule, ...] = (
    ScopeRule(r"^/admin", Scope.ADMIN),
    ScopeRule(r"^/v1/(review|admin|keys|actions)\b", Scope.ADMIN),
    ScopeRule(r"/(merge|unmerge|approve|reject|audit|split|mentions|undo)\b", Scope.ADMIN),
    ScopeRule(r"^/v1/(episodes|documents|ingest|sync)\b", Scope.INGEST,
              frozenset({"POST", "PUT", "PATCH", "DELETE"})),
    ScopeRule(r"^/v1/entities$", Scope.INGEST, frozenset({"POST"})),
    ScopeRule(r"^/v1/entities/\{[^}]+\}$", Scope.INGEST, frozenset({"PUT", "PATCH", "DELETE"})),
    ScopeRule(r"^/v1/communities/(build|refresh)\b", Scope.INGEST, frozenset({"POST"})),
)


def scope_for(method: str, template: str) -> Scope | None:
    if template.startswith(OPEN_PATHS) or not template.startswith(("/v1", "/admin")):
        return None
    for rule in SCOPE_RULES:
        if rule.matches(method, template):
            return rule.scope
    return Scope.QUERY


class Authenticator:
    """Built once per app: the key store, a short cache of verified keys, the rate limiter."""

    CACHE_SECONDS = 5.0

    def __init__(self, settings: Settings, keys: ApiKeyStore) -> None:
        self._settings = settings
        self._keys = keys
        self._cache: dict[str, tuple[float, ApiKey | None]] = {}
        self._enforce: tuple[float, bool] | None = None
        self._lock = threading.Lock()
        self.limiter: RateLimiter = (
            RedisRateLimiter(settings.redis_url, settings.queue_prefix) if settings.redis_url
            else InMemoryRateLimiter())
        secret = settings.admin_session_secret
        self.sessions = Sessions(secret.get_secret_value() if secret else secrets.token_urlsafe(32),
                                 settings.admin_session_minutes * 60)
        self._live: tuple[float, dict[str, ApiKey]] | None = None

    def enforced_cached(self, scope: Scope) -> bool | None:
        """``enforced`` when it needs no store read (settings, or a fresh cached answer);
        None otherwise. Lets the request path skip a worker thread in the common case."""
        mode = self._settings.auth_mode
        if mode is not AuthMode.AUTO:
            return mode is AuthMode.ON
        if scope is Scope.ADMIN and self._settings.admin_api_key is not None:
            return True
        with self._lock:
            if self._enforce is not None and time.monotonic() - self._enforce[0] < self.CACHE_SECONDS:
                return self._enforce[1]
        return None

    def enforced(self, scope: Scope) -> bool:
        """ON: always. AUTO: once a key was issued; admin routes also when admin_api_key is set."""
        cached = self.enforced_cached(scope)
        if cached is not None:
            return cached
        now = time.monotonic()
        on = self._keys.any_issued()
        with self._lock:
            self._enforce = (now, on)
        return on

    def verify(self, secret: str) -> ApiKey | None:
        admin = self.verify_admin_digest(digest(secret))
        if admin is not None:
            return admin
        now = time.monotonic()
        token = digest(secret)
        with self._lock:
            cached = self._cache.get(token)
            if cached is not None and now - cached[0] < self.CACHE_SECONDS:
                return cached[1]
        key = self._keys.authenticate(secret)
        with self._lock:
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[token] = (now, key)
        return key

    def verify_admin_digest(self, presented: str) -> ApiKey | None:
        """``admin_api_key`` as a key, when ``presented`` is its SHA-256 (a header's secret
        digested, or the admin page's cookie)."""
        admin = self._settings.admin_api_key
        if admin is None or not hmac.compare_digest(presented, digest(admin.get_secret_value())):
            return None
        return _settings_admin()

    def admin_fingerprint(self) -> str:
        admin = self._settings.admin_api_key
        return fingerprint(admin.get_secret_value()) if admin is not None else ""

    def session_key(self, token: str) -> tuple[ApiKey, Session] | None:
        """The admin key a session cookie was opened with, while the session and the key
        live; None otherwise."""
        session = self.sessions.read(token)
        if session is None:
            return None
        if session.key_id == SETTINGS_ADMIN_ID:
            if not session.fingerprint or session.fingerprint != self.admin_fingerprint():
                return None  # admin_api_key unset or changed since
            return _settings_admin(), session
        key = self._live_keys().get(session.key_id)
        if key is None or not key.allows(Scope.ADMIN):
            return None
        return key, session

    def _live_keys(self) -> dict[str, ApiKey]:
        now = time.monotonic()
        with self._lock:
            if self._live is not None and now - self._live[0] < self.CACHE_SECONDS:
                return self._live[1]
        live = {k.id: k for k in self._keys.list() if k.revoked_at is None}
        with self._lock:
            self._live = (now, live)
        return live

    def forget(self) -> None:
        with self._lock:
            self._cache.clear()
            self._enforce = None
            self._live = None


SETTINGS_ADMIN_ID = "settings-admin"


def _settings_admin() -> ApiKey:
    return ApiKey(id=SETTINGS_ADMIN_ID, prefix="settings", name="admin_api_key",
                  scopes=[Scope.ADMIN], created_at=utcnow())


def _secret(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip() or None
    return request.headers.get("x-api-key") or request.headers.get("x-admin-key") or None


def _unauthorized(detail: str) -> HTTPException:
    return HTTPException(401, detail, headers={"WWW-Authenticate": 'Bearer realm="knotwork"'})


async def authorize(request: Request) -> None:
    """App-wide dependency: sets ``request.state.api_key``, ``request.state.scope`` and
    ``request.state.tenant`` (decided by :func:`tenancy.decide`, on every path: routes read
    it, never the request's ``group_id``)."""
    request.state.api_key = None
    request.state.tenant = None
    request.state.scope = None
    request.state.session = None
    route = request.scope.get("route")
    template = getattr(route, "path", request.url.path)
    scope = scope_for(request.method, template)
    request.state.scope = scope
    key, tenant = await admit(request, template, scope, await named_tenants(request))
    request.state.tenant = tenant
    request.state.api_key = key


async def admit(request: Request, template: str, scope: Scope | None,
                named: Named) -> tuple[ApiKey | None, str]:
    """The one decision for every request, REST or MCP: its verified key (401 / 403), its
    tenant (:func:`tenancy.decide` over every tenant the request names) and the key's rate
    limit (429)."""
    key = await _authenticate(request, template, scope)
    settings: Settings = request.app.state.knotwork.settings
    tenant = decide(key.tenant if key else None, named, settings.group)
    if key is not None:
        auth: Authenticator = request.app.state.auth
        limit = key.rate_limit_per_minute or auth._settings.rate_limit_per_minute
        wait = await anyio.to_thread.run_sync(auth.limiter.hit, key.id, limit)
        if wait is not None:
            raise HTTPException(429, f"rate limit of {limit} requests per minute exceeded",
                                headers={"Retry-After": str(wait)})
    return key, tenant


async def _authenticate(request: Request, template: str, scope: Scope | None) -> ApiKey | None:
    """The request's verified key; None where no key is needed (open paths, auth not
    enforced, an admin page without credentials). 401 / 403 for a missing, unknown or
    insufficient key."""
    auth: Authenticator | None = getattr(request.app.state, "auth", None)
    if scope is None or auth is None:
        return None
    enforced = auth.enforced_cached(scope)
    if enforced is None:  # the "was a key ever issued" answer is stale: read it in a thread
        enforced = await anyio.to_thread.run_sync(auth.enforced, scope)
    if not enforced:
        return None
    secret = _secret(request)
    cookie = request.cookies.get(SESSION_COOKIE)
    if secret is None and cookie is not None:
        opened = await anyio.to_thread.run_sync(auth.session_key, cookie)
        if opened is not None:
            key, session = opened
            request.state.session = session
            if request.method not in SAFE_METHODS and not hmac.compare_digest(
                    request.headers.get(CSRF_HEADER, ""), session.csrf):
                raise HTTPException(403, f"a signed-in session's request that changes something "
                                         f"needs its CSRF token ({CSRF_HEADER})")
            if not key.allows(scope):
                raise HTTPException(403, f"this key lacks the {scope.value!r} scope")
            return key
    if secret is None:
        if template.startswith("/admin"):
            return None  # the admin pages answer with their sign-in page (and guard themselves)
        raise _unauthorized("an API key is required (Authorization: Bearer <key> or X-API-Key); "
                            "an admin session expired or ended: sign in again")
    verified = await anyio.to_thread.run_sync(auth.verify, secret)
    if verified is None:
        raise _unauthorized("the API key is unknown or revoked")
    if not verified.allows(scope):
        raise HTTPException(403, f"this key lacks the {scope.value!r} scope "
                                 f"(it has: {', '.join(s.value for s in verified.scopes)})")
    return verified
