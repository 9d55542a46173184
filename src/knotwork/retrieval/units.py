"""The candidate units of a local search and the pure steps over a ranked list of them:
which units answer (the best and those close to it), a sentence paired with its follow-up,
newer evidence winning close calls, one unit per text."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from knotwork.domain.models import Fact
from knotwork.retrieval.config import LocalSearchConfig
from knotwork.retrieval.lexical import overlap

__all__ = ["Unit", "choose", "dedupe", "recency_bonus", "with_follow_ups"]


@dataclass
class Unit:
    """A candidate piece of evidence: a fact or a sentence of a source chunk."""

    text: str
    chunk_ids: list[str]
    fact: Fact | None = None
    bonus: float = 0.0
    context: str = ""  # document title, section heading, speaker: scored, never shown
    display: str = ""  # what an answer shows, when it differs from the scored text
    time: datetime | None = None
    score: float = 0.0
    parts: dict[str, float] = field(default_factory=dict)
    cosine: float | None = None  # to the question, when the vector store already gave it


def choose(ranked: list[Unit], cfg: LocalSearchConfig, opened: str | None) -> list[Unit]:
    """The best unit and the next ones close to it (not of another time, not repeating one)."""
    top = ranked[0]
    chosen = [top]
    units, cutoff = (cfg.open_answer_units, cfg.open_answer_relative_cutoff) if opened \
        else (cfg.answer_units, cfg.answer_relative_cutoff)
    words = len((top.display or top.text).split())
    for u in ranked[1 : units * 2 + 2]:
        if len(chosen) >= units or u.score < top.score * cutoff:
            break
        if u.parts.get("time", 0.0) < 0 <= top.parts.get("time", 0.0):
            continue  # not of the time asked for
        if opened and words >= cfg.open_answer_words:
            break
        if all(overlap(u.text, c.text) < 0.5 for c in chosen):
            chosen.append(u)
            words += len((u.display or u.text).split())
    return chosen


def with_follow_ups(chosen: list[Unit], ranked: list[Unit], cutoff: float) -> list[Unit]:
    """Each chosen sentence, or its pair with the follow-up sentence when that pair scored
    nearly as well: "Lighthouse moves to Snowflake." → "… Decided by Hannah Björk."."""
    out: list[Unit] = []
    for unit in chosen:
        pair = next((p for p in ranked if p is not unit and p.fact is None
                     and unit.text.rstrip(".") in p.text and p.score >= unit.score * cutoff
                     and len(p.text) > len(unit.text)), None)
        out.append(pair if pair is not None and all(pair is not o for o in out) else unit)
    return out


def recency_bonus(units: list[Unit], bonus: float) -> None:
    """Newer evidence wins close calls: up to ``bonus`` for the newest unit."""
    times = [u.time.timestamp() for u in units if u.time is not None]
    if len(times) < 2 or max(times) == min(times):
        return
    low, span = min(times), max(times) - min(times)
    for u in units:
        if u.time is not None:
            u.bonus += bonus * (u.time.timestamp() - low) / span


def dedupe(units: list[Unit]) -> list[Unit]:
    """Facts first: a source sentence already stated as a fact adds nothing."""
    seen: dict[str, Unit] = {}
    for u in units:
        key = re.sub(r"\W+", " ", u.text.lower()).strip()
        if key not in seen:
            seen[key] = u
        else:
            seen[key].bonus = max(seen[key].bonus, u.bonus)
    return list(seen.values())
