"""Fact ranking by the question's wording: the named relation first, a kindred one next."""

from __future__ import annotations

from datetime import UTC, datetime

from knotwork.domain.models import Entity, EntityType, Fact, RelationType
from knotwork.retrieval.config import LocalSearchConfig
from knotwork.retrieval.hints import hint_bonus
from knotwork.retrieval.local import Unit

T0 = datetime(2025, 1, 1, tzinfo=UTC)
R = RelationType
TEAM = Entity(id="t", group_id="g", name="Dispatch team", canonical_name="dispatch team",
              type=EntityType.ORGANIZATION, subtype="TEAM", created_at=T0, updated_at=T0)


def unit(rtype: RelationType, text: str) -> Unit:
    fact = Fact(id=text, group_id="g", source_id="p", target_id="t", type=rtype, fact=text,
                created_at=T0)
    return Unit(text, ["c"], fact=fact)


def test_a_manager_outranks_a_member_when_nothing_says_who_leads() -> None:
    manages = unit(R.MANAGES, "Ana Ruiz manages the Dispatch team.")
    member = unit(R.MEMBER_OF, "Bo Lind works on the Dispatch team.")
    leads = unit(R.LEADS, "Cy Ong leads the Dispatch team.")
    hint_bonus("Who leads the Dispatch team?", {"t": (TEAM, 1.0)}, [manages, member, leads],
                LocalSearchConfig())
    assert leads.bonus > manages.bonus > member.bonus
