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


# What says nothing in a question or a name, spelled out (no \s or \w, whose meaning differs
# between ECMAScript - the OpenAPI schema's regex dialect -, pydantic's Rust engine and
# Python's re), so that the schema's patterns and the code's checks agree on every character.
# every space of Python's str.isspace (what .strip() removes) and of ECMAScript's \s
_WIDE_SPACES = r"\x85\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_SPACES = r"\t\n\v\f\r\x1c-\x1f " + _WIDE_SPACES
_NOTHING = r"\x00-\x2F\x3A-\x40\x5B-\x60\x7B-\x7F" + _WIDE_SPACES  # ASCII but letters/digits
NON_BLANK = f"[^{_SPACES}]"  # a pattern: the text has a character that is not a space
NAMES_SOMETHING = f"[^{_NOTHING}]"  # a pattern: a letter, a digit or a non-ASCII character
_NOTHING_RUN = re.compile(f"[{_NOTHING}]+")


def name_residue(text: str) -> str:
    """What a name says once spaces, ASCII punctuation and controls are gone (single-spaced);
    empty exactly when ``text`` does not match ``NAMES_SOMETHING``."""
    return _NOTHING_RUN.sub(" ", text).strip(" ")
