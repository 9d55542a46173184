"""Admin sign-in sessions: a signed, expiring cookie naming the admin key it was opened with.

The cookie holds no secret: the key's id and name (the actor of every action taken in the
session), its tenant, a CSRF token and the time it was signed (``itsdangerous``). A session
ends at its expiry, at logout, when its key is revoked, or - for ``admin_api_key`` - when that
key changes. Requests a session authenticates that change something must carry its CSRF token
in ``X-CSRF-Token`` (the admin pages' script does); header keys need none.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from dataclasses import dataclass

from itsdangerous import BadSignature, URLSafeTimedSerializer

SESSION_COOKIE = "knotwork_admin"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True)
class Session:
    key_id: str
    actor: str
    tenant: str | None
    csrf: str
    token_id: str
    fingerprint: str  # of admin_api_key, for sessions opened with it ("" otherwise)


def fingerprint(secret: str) -> str:
    """A short digest of a key, to tell whether the settings' admin key changed."""
    return hashlib.sha256(f"session:{secret}".encode()).hexdigest()[:16]


class Sessions:
    """Opens, reads and ends sessions; one per app (its logged-out tokens are per process)."""

    def __init__(self, secret: str, ttl_s: int) -> None:
        self._signer = URLSafeTimedSerializer(secret, salt="knotwork-admin-session")
        self.ttl_s = ttl_s
        self._ended: dict[str, float] = {}  # token id -> when it would have expired
        self._lock = threading.Lock()

    def open(self, key_id: str, actor: str, tenant: str | None, admin_fingerprint: str = ""
             ) -> tuple[str, Session]:
        session = Session(key_id=key_id, actor=actor, tenant=tenant,
                          csrf=secrets.token_urlsafe(24), token_id=secrets.token_urlsafe(12),
                          fingerprint=admin_fingerprint)
        token = self._signer.dumps([session.key_id, session.actor, session.tenant, session.csrf,
                                    session.token_id, session.fingerprint])
        return token, session

    def read(self, token: str) -> Session | None:
        """The session of a cookie; None when forged, expired or logged out."""
        try:
            fields = self._signer.loads(token, max_age=self.ttl_s)
        except BadSignature:  # SignatureExpired is one
            return None
        if not isinstance(fields, list) or len(fields) != 6:
            return None
        key_id, actor, tenant, csrf, token_id, admin = fields
        with self._lock:
            if token_id in self._ended:
                return None
        return Session(key_id=str(key_id), actor=str(actor),
                       tenant=None if tenant is None else str(tenant), csrf=str(csrf),
                       token_id=str(token_id), fingerprint=str(admin))

    def end(self, session: Session) -> None:
        now = time.time()
        with self._lock:
            self._ended = {t: until for t, until in self._ended.items() if until > now}
            self._ended[session.token_id] = now + self.ttl_s
