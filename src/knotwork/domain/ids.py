"""Deterministic ids: re-ingesting the same input yields the same ids (idempotency)."""

from __future__ import annotations

import hashlib
import uuid

_NAMESPACE = uuid.UUID("6f1c1a0e-4b8e-4a53-9a51-6b6e6f74776b")


def stable_id(*parts: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, "\x1f".join(parts)))


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
