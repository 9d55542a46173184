"""Helpers shared by the prompt modules."""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from knotwork.domain.models import EntityType, RelationType
from knotwork.domain.ports import ChatMessage, ChatRole
from knotwork.ingestion.chunking import count_tokens

ENTITY_TYPES: tuple[str, ...] = tuple(t.value for t in EntityType)
RELATION_TYPES: tuple[str, ...] = tuple(t.value for t in RelationType)

# word-and-punctuation tokens (count_tokens) under-count sub-word tokens by about a quarter
_SUBWORD_FACTOR = 1.3


def estimate_tokens(text: str) -> int:
    """A model-free estimate of the sub-word tokens of ``text`` (for budgets)."""
    return math.ceil(count_tokens(text) * _SUBWORD_FACTOR)


def system(text: str) -> ChatMessage:
    return ChatMessage(role=ChatRole.SYSTEM, content=text.strip())


def user(text: str) -> ChatMessage:
    return ChatMessage(role=ChatRole.USER, content=text.strip())


def one_line(text: str, limit: int = 400) -> str:
    """Whitespace collapsed and cut at ``limit`` characters (on a word)."""
    clean = " ".join(text.split())
    if len(clean) <= limit:
        return clean
    return clean[: limit - 1].rsplit(" ", 1)[0] + "…"


def cut_text(limit: int) -> BeforeValidator:
    """``Annotated[str, cut_text(n)]``: a ``str`` cut to ``n`` characters, never rejected for its
    length. The limit stays out of the JSON schema on purpose: llama.cpp turns ``maxLength``
    into nested optional rules that make the grammar fail to compile (or take minutes); prompts
    state lengths instead."""
    return BeforeValidator(lambda v: v[:limit] if isinstance(v, str) else v)


def cut_list(limit: int) -> BeforeValidator:
    """``Annotated[list[X], cut_list(n), Field(max_length=n)]``: ``maxItems`` in the schema (small
    models loop without it); longer output is cut to the first ``n`` items."""
    return BeforeValidator(lambda v: v[:limit] if isinstance(v, list) else v)


# The prompt modules spell these types out (``Annotated[str, cut_text(n)]``), which a type
# checker reads; these builders make the same types at run time, for ad-hoc models.
def capped_text(limit: int, **schema: Any) -> Any:
    """``Annotated[str, cut_text(limit)]`` (see :func:`cut_text`), with ``Field(**schema)``."""
    if schema:
        return Annotated[str, cut_text(limit), Field(**schema)]
    return Annotated[str, cut_text(limit)]


def capped_list(item: Any, limit: int) -> Any:
    """``Annotated[list[item], cut_list(limit), Field(max_length=limit)]`` (see :func:`cut_list`)."""
    return Annotated[list[item], cut_list(limit), Field(max_length=limit)]
