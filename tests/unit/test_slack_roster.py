"""A Slack workspace's members work at the company its e-mail domain names."""

from __future__ import annotations

from knotwork.domain.models import EntityType, EpisodeSource, RelationType
from knotwork.ingestion.extraction.types import KnownName
from knotwork.ingestion.extraction.workspace import (
    ROSTER_METHOD,
    domain_label,
    roster_extraction,
    workspace_company,
)
from knotwork.ingestion.loaders.slack_roster import roster_document, roster_lines, workspace_domain


def _user(uid: str, name: str, email: str = "", **extra: object) -> dict[str, object]:
    profile = {"real_name": name, "display_name": extra.pop("display", ""), "email": email,
               "title": extra.pop("title", "")}
    return {"id": uid, "name": name.lower().replace(" ", "."), "profile": profile, **extra}


USERS = [
    _user("U1", "Ondrej Vasko", "ondrej@bluefin-labs.io", display="Ondra", title="Staff Engineer"),
    _user("U2", "Marta Vasko", "marta@bluefin-labs.io", deleted=True),
    _user("U3", "Deploy Bot", "", is_bot=True),
    _user("U4", "Harbor", "harbor@bluefin-labs.io"),  # a first name alone names nobody for sure
]
KNOWN = {
    "bluefin labs ltd": KnownName("Bluefin Labs Ltd", EntityType.ORGANIZATION, None),
    "bluefin labs": KnownName("Bluefin Labs Ltd", EntityType.ORGANIZATION, None),
    "bluefin labs platform": KnownName("Bluefin Labs Platform", EntityType.ORGANIZATION, "TEAM"),
}


def test_the_roster_lists_people_with_the_workspace_domain_and_marks_the_deactivated() -> None:
    assert workspace_domain(USERS) == "bluefin-labs.io"
    lines = roster_lines(USERS)
    assert lines == [
        "Member: Ondrej Vasko; Display name: Ondra; Title: Staff Engineer; Domain: bluefin-labs.io",
        "Member: Marta Vasko; Domain: bluefin-labs.io; Status: deactivated",
    ]
    doc = roster_document(USERS, None)
    assert doc is not None and doc.episode_source is EpisodeSource.DIRECTORY
    assert roster_document([], None) is None


def test_the_company_is_the_known_organisation_the_domain_names() -> None:
    assert domain_label("mail.bluefin-labs.co.uk") == "bluefinlabs"
    assert workspace_company("bluefin-labs.io", KNOWN) == "Bluefin Labs Ltd"
    assert workspace_company("harbor.io", KNOWN) is None
    assert workspace_company("bluefin-labs.io", {}) is None


def test_members_work_at_the_company_and_a_deactivated_member_no_longer_does() -> None:
    ex = roster_extraction("\n".join(roster_lines(USERS)), KNOWN)
    names = [e.name for e in ex.entities]
    facts = {(names[r.source], r.type, names[r.target], r.ended) for r in ex.relations}
    assert facts == {("Ondrej Vasko", RelationType.WORKS_AT, "Bluefin Labs Ltd", False),
                     ("Marta Vasko", RelationType.WORKS_AT, "Bluefin Labs Ltd", True)}
    assert all(r.method == ROSTER_METHOD for r in ex.relations)
    assert "Ondra" in ex.entities[names.index("Ondrej Vasko")].aliases


def test_without_a_known_company_the_roster_states_no_employer() -> None:
    ex = roster_extraction("\n".join(roster_lines(USERS)), {})
    assert ex.relations == [] and {e.type for e in ex.entities} == {EntityType.PERSON}
