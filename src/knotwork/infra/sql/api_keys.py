"""API keys in SQL: only SHA-256 digests at rest; lookup by prefix, constant-time comparison."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from collections.abc import Sequence

from sqlalchemy import Engine, select, update
from sqlalchemy.orm import Session

from knotwork.domain.auth import ApiKey, IssuedKey, Scope
from knotwork.domain.timeutil import utcnow
from knotwork.infra.sql.models import ApiKeyRow

_PREFIX_BYTES = 6  # 12 hex characters


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def split_secret(secret: str) -> str | None:
    """The prefix of a well-formed ``kw_<prefix>_<random>`` secret, else None."""
    parts = secret.split("_")
    if len(parts) != 3 or parts[0] != "kw" or len(parts[1]) != 2 * _PREFIX_BYTES:
        return None
    return parts[1]


def _model(row: ApiKeyRow) -> ApiKey:
    return ApiKey(id=row.id, prefix=row.prefix, name=row.name, scopes=[Scope(s) for s in row.scopes],
                  tenant=row.tenant, principals=list(row.principals),
                  rate_limit_per_minute=row.rate_limit_per_minute, created_at=row.created_at,
                  revoked_at=row.revoked_at)


class SqlApiKeyStore:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def create(self, name: str, scopes: Sequence[Scope], *, tenant: str | None = None,
               principals: Sequence[str] = (), rate_limit_per_minute: int | None = None) -> IssuedKey:
        if not scopes:
            raise ValueError("an API key needs at least one scope")
        if not name.strip():
            raise ValueError("an API key needs a name")
        prefix = secrets.token_hex(_PREFIX_BYTES)
        secret = f"kw_{prefix}_{secrets.token_urlsafe(32).replace('_', '-')}"
        row = ApiKeyRow(id=str(uuid.uuid4()), prefix=prefix, key_hash=digest(secret),
                        name=name.strip(), scopes=sorted({Scope(s).value for s in scopes}),
                        tenant=tenant, principals=sorted(set(principals)),
                        rate_limit_per_minute=rate_limit_per_minute, created_at=utcnow(),
                        revoked_at=None)
        with Session(self._engine) as session, session.begin():
            session.add(row)
            session.flush()
            key = _model(row)
        return IssuedKey(key=key, secret=secret)

    def authenticate(self, secret: str) -> ApiKey | None:
        """The live key this secret belongs to, or None (unknown, malformed or revoked)."""
        prefix = split_secret(secret)
        if prefix is None:
            return None
        with Session(self._engine) as session:
            row = session.scalar(select(ApiKeyRow).where(ApiKeyRow.prefix == prefix))
            if row is None or row.revoked_at is not None:
                return None
            if not hmac.compare_digest(row.key_hash, digest(secret)):
                return None
            return _model(row)

    def list(self) -> list[ApiKey]:
        with Session(self._engine) as session:
            rows = session.scalars(select(ApiKeyRow).order_by(ApiKeyRow.created_at)).all()
            return [_model(r) for r in rows]

    def revoke(self, key_id_or_prefix: str) -> bool:
        with Session(self._engine) as session, session.begin():
            result = session.execute(
                update(ApiKeyRow)
                .where((ApiKeyRow.id == key_id_or_prefix) | (ApiKeyRow.prefix == key_id_or_prefix))
                .where(ApiKeyRow.revoked_at.is_(None))
                .values(revoked_at=utcnow()))
            return bool(result.rowcount)  # type: ignore[attr-defined]

    def any_issued(self) -> bool:
        """True once a key was ever created (revoking every key must not open the API)."""
        with Session(self._engine) as session:
            return session.scalar(select(ApiKeyRow.id).limit(1)) is not None
