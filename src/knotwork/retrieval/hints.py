"""Fact ranking by the question's wording: the relation it names and the side of it the named
entities are on ("Who does X report to?" asks about X's outgoing facts)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from knotwork.domain.models import Entity, Fact
from knotwork.retrieval.config import LocalSearchConfig
from knotwork.retrieval.question import analyze
from knotwork.retrieval.typed_support import FAMILIES

__all__ = ["hint_bonus"]


class Scored(Protocol):
    fact: Fact | None
    bonus: float


def hint_bonus(question: str, seeds: Mapping[str, tuple[Entity, float]], facts: Sequence[Scored],
               cfg: LocalSearchConfig) -> None:
    """'Who does X report to?' asks about X's outgoing facts; 'Who leads X?' about incoming;
    a fact of the type the wording names ('leads', 'manager of') gains too."""
    hints = analyze(question)
    named = {eid for eid, (_, score) in seeds.items() if score >= 0.8}
    # a kindred type half as much: "Who leads X?" is answered by "Ana manages X" before "Bo
    # works on X" when no fact says "leads"
    kin = frozenset().union(*(FAMILIES.get(t, frozenset()) for t in hints.types)) - hints.types
    for u in facts:
        if u.fact is None:
            continue
        typed = 1.0 if u.fact.type in hints.types else 0.5 if u.fact.type in kin else 0.0
        u.bonus += cfg.bonus_relation_type * typed
        if hints.side is not None and named:
            endpoint = u.fact.source_id if hints.side == "source" else u.fact.target_id
            if endpoint in named:
                u.bonus += cfg.bonus_direction + cfg.bonus_exact_fact * typed
