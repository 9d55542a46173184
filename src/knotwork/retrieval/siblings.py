"""List answers: every fact of the answer's relation at the named entity ("Who reports to X?")."""

from __future__ import annotations

import re
from typing import Protocol, TypeVar

from knotwork.domain.models import Entity, Fact
from knotwork.retrieval.lexical import overlap
from knotwork.retrieval.question import analyze

__all__ = ["siblings"]


class _Unit(Protocol):
    text: str
    fact: Fact | None
    bonus: float


U = TypeVar("U", bound=_Unit)


_LIST_QUESTION = re.compile(
    r"^\s*(?:who|what|which)\s+(?:are|were)\b|\b(?:members|list|all|every)\b|^\s*which\s+\w+s\b",
    re.IGNORECASE)


def siblings(question: str, top: U, chosen: list[U], facts: list[U],
             seeds: dict[str, tuple[Entity, float]], limit: int) -> list[U]:
    """A question about a relation of a named entity is answered by every fact of that
    relation at that entity ("Who reports to X?" lists all reports), not just the best."""
    hints = analyze(question)
    named = {eid for eid, (_, score) in seeds.items() if score >= 0.8}
    if not named or not hints.types:
        return []
    if top.fact is not None and top.fact.type in hints.types:
        anchor = top.fact
        ends = [e for e in (anchor.source_id, anchor.target_id) if e in named]
        if not ends:
            return []
        end = ends[0]
        same = [u for u in facts if u.fact is not None and u.fact.type is anchor.type
                and (u.fact.source_id if end == anchor.source_id else u.fact.target_id) == end]
    elif _LIST_QUESTION.search(question):
        same = [u for u in facts if u.fact is not None and u.fact.type in hints.types
                and (u.fact.source_id in named or u.fact.target_id in named)]
        if len(same) < 2:
            return []
    else:
        return []
    have = {id(u) for u in chosen}
    texts = [c.text for c in chosen]
    out: list[U] = []
    for u in sorted(same, key=lambda u: (-u.bonus, u.text)):
        if id(u) not in have and all(overlap(u.text, t) < 0.8 for t in texts):
            out.append(u)
            texts.append(u.text)
        if len(out) >= limit:
            break
    return out
