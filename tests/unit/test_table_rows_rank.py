"""A table-row fact yields its rank to a prose sentence naming both of its ends."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from knotwork.domain.models import Entity, EntityType, Fact, RelationType
from knotwork.retrieval.table_rows import prose_over_rows


@dataclass
class _Unit:
    text: str
    fact: Fact | None
    score: float


_NOW = datetime.now(UTC)
_PEOPLE = {"p": Entity(id="p", group_id="g", name="Ondrej Vasko", canonical_name="ondrej vasko",
                       type=EntityType.PERSON, aliases=["Ondrej"], created_at=_NOW, updated_at=_NOW),
           "t": Entity(id="t", group_id="g", name="Harbor Team", canonical_name="harbor team",
                       type=EntityType.ORGANIZATION, aliases=["Harbor"], created_at=_NOW,
                       updated_at=_NOW)}


def _entities(ids: Sequence[str]) -> list[Entity]:
    return [_PEOPLE[i] for i in ids if i in _PEOPLE]


def _row_fact(method: str = "table") -> Fact:
    return Fact(id="f", group_id="g", source_id="p", target_id="t", type=RelationType.MEMBER_OF,
                fact="Ondrej Vasko — Unit: Harbor Team", created_at=datetime.now(UTC),
                extraction_method=method)


def test_a_sentence_naming_both_ends_moves_ahead_of_the_row_fact() -> None:
    row = _Unit("Ondrej Vasko — Unit: Harbor Team", _row_fact(), 0.9)
    other = _Unit("The release slipped a week.", None, 0.8)
    prose = _Unit("Ondrej joined Harbor in May to work on pricing.", None, 0.6)
    ranked = [row, other, prose]
    assert prose_over_rows(ranked, _entities) == 1
    assert ranked == [prose, row, other]
    assert prose.score == 0.9


def test_a_row_sentence_a_weak_sentence_or_a_prose_fact_changes_nothing() -> None:
    row = _Unit("Ondrej Vasko — Unit: Harbor Team", _row_fact(), 0.9)
    cells = _Unit("Name: Ondrej Vasko; Unit: Harbor Team", None, 0.85)  # the row itself
    weak = _Unit("Ondrej once visited Harbor.", None, 0.2)  # far below the fact
    ranked = [row, cells, weak]
    assert prose_over_rows(ranked, _entities) == 0
    assert ranked == [row, cells, weak]
    stated = _Unit("Ondrej Vasko is on the Harbor Team.", _row_fact("rule"), 0.9)
    prose = _Unit("Ondrej joined Harbor in May.", None, 0.7)
    ranked = [stated, prose]
    assert prose_over_rows(ranked, _entities) == 0
