"""A fact read from a table row yields to a prose sentence that states the same thing.

Table rows give the graph many typed facts ("Ana Ruiz — Unit: Ledger; Reports to: Bo Chen").
As answer candidates they compete with the sentences of the source text; when a sentence among
the candidates names both ends of a row's fact ("Ana joined the Ledger team in May"), that
sentence says the same thing in words, often with more (a date, a reason), and its document is
where a reader checks it. So the sentence takes the row fact's place in the ranking (the fact
stays, just behind it): the row keeps adding recall where no sentence states the relation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol

from knotwork.domain.models import Entity, Fact
from knotwork.ingestion.extraction.table_headers import TABLE_METHOD

# a candidate that is itself a table row ("Name: Ana; Unit: Ledger"), not prose
_ROW = re.compile(r"^[^:;|\n]{1,40}:\s*[^;|\n]*[;|]")


class Candidate(Protocol):
    text: str
    fact: Fact | None
    score: float


def _names(entity: Entity) -> list[str]:
    return [n for n in (entity.name, *entity.aliases) if len(n) >= 3]


def _names_any(text: str, names: Sequence[str]) -> bool:
    lowered = text.lower()
    return any(re.search(r"(?<!\w)" + re.escape(n.lower()) + r"(?!\w)", lowered) for n in names)


def prose_over_rows(ranked: list[Candidate], entities: Callable[[Sequence[str]], list[Entity]],
                    head: int = 8, floor: float = 0.5) -> int:
    """Move, within the first ``head`` candidates, a prose sentence naming both ends of a
    table-row fact ahead of that fact, when the sentence scores at least ``floor`` times the
    fact. Returns how many moved (``ranked`` is changed in place)."""
    rows = [u.fact for u in ranked[:head] if u.fact is not None and u.fact.extraction_method == TABLE_METHOD]
    if not rows:
        return 0
    ids = list({i for f in rows for i in (f.source_id, f.target_id)})
    names = {e.id: _names(e) for e in entities(ids)}
    moved = 0
    i = 0
    while i < min(head, len(ranked)):
        unit = ranked[i]
        fact = unit.fact
        if fact is None or fact.extraction_method != TABLE_METHOD:
            i += 1
            continue
        ends = names.get(fact.source_id, []), names.get(fact.target_id, [])
        for j in range(i + 1, len(ranked)):
            other = ranked[j]
            if other.fact is not None or other.score < unit.score * floor or _ROW.match(other.text):
                continue
            if all(_names_any(other.text, end) for end in ends):
                ranked.insert(i, ranked.pop(j))
                other.score = max(other.score, unit.score)
                moved += 1
                i += 1  # the row fact now stands one further
                break
        i += 1
    return moved
