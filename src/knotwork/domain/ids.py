"""Deterministic ids: re-ingesting the same input yields the same ids (idempotency)."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence

_NAMESPACE = uuid.UUID("6f1c1a0e-4b8e-4a53-9a51-6b6e6f74776b")


def stable_id(*parts: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, "\x1f".join(parts)))


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def document_digest(title: str, content: str, acl: Sequence[str] = ()) -> str:
    """The change-detection hash of a source document: title, text and (when restricted) its
    ACL, so a changed ACL alone is a change; public documents keep their earlier hashes."""
    from knotwork.domain.text import clean_text

    readers = sorted(set(acl))
    text = f"{clean_text(title)}\n{clean_text(content)}"
    return content_hash(text + (f"\n\x00acl:{readers}" if readers else ""))
