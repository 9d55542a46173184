"""Text every store accepts: no NUL characters (PostgreSQL and FalkorDB's parameter parser
refuse them) and no lone UTF-16 surrogates (not encodable as UTF-8; JSON can carry them)."""

from __future__ import annotations

import re
from typing import TypeVar

_BAD = re.compile(r"[\x00\ud800-\udfff]")
T = TypeVar("T")


def clean_text(text: str) -> str:
    """NUL removed, lone surrogates replaced by U+FFFD; other text unchanged."""
    if not _BAD.search(text):
        return text
    return _BAD.sub(lambda m: "" if m.group() == "\x00" else "\ufffd", text)


def clean_value(value: T) -> T:
    """``clean_text`` applied to every string inside lists, tuples and dicts."""
    if isinstance(value, str):
        return clean_text(value)  # type: ignore[return-value]
    if isinstance(value, list):
        return [clean_value(v) for v in value]  # type: ignore[return-value]
    if isinstance(value, tuple):
        return tuple(clean_value(v) for v in value)  # type: ignore[return-value]
    if isinstance(value, dict):
        return {clean_value(k): clean_value(v) for k, v in value.items()}  # type: ignore[return-value]
    return value
