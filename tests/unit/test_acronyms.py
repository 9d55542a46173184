"""An answer naming an entity by its letters says its name once."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from knotwork.domain.models import Entity, EntityType, Fact, RelationType
from knotwork.retrieval.acronyms import spell_out_acronyms

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def ent(eid: str, name: str, *aliases: str) -> Entity:
    return Entity(id=eid, group_id="g", name=name, canonical_name=name.lower(),
                  type=EntityType.ORGANIZATION, aliases=list(aliases), created_at=T0, updated_at=T0)


TEAM = ent("t", "Claims Automation", "Claims Automation team", "CAT")
OWNS = Fact(id="f", group_id="g", source_id="t", target_id="s", type=RelationType.OWNS,
            fact="The CAT owns Intake.", created_at=T0)


def test_the_letters_are_followed_by_the_name_once() -> None:
    looked: list[Sequence[str]] = []

    def lookup(ids: Sequence[str]) -> list[Entity]:
        looked.append(ids)
        return [TEAM] if "t" in ids else []

    answer = spell_out_acronyms("The CAT owns Intake. The CAT is on call.", [], [OWNS], lookup)
    assert answer == "The CAT (Claims Automation) owns Intake. The CAT is on call."
    assert looked == [["t", "s"]]


def test_an_answer_that_names_it_or_has_no_capitals_is_left_alone() -> None:
    def lookup(ids: Sequence[str]) -> list[Entity]:
        assert "t" not in ids  # the question's entities are at hand
        return []

    named = "Claims Automation (CAT) owns Intake."
    assert spell_out_acronyms(named, [TEAM], [OWNS], lookup) == named
    assert spell_out_acronyms("Intake is owned by claims.", [], [OWNS], _fail) == \
        "Intake is owned by claims."


def _fail(ids: Sequence[str]) -> list[Entity]:
    raise AssertionError("no capitals, no lookup")
