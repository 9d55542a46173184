"""WORKS_AT for the people of the tenant's own workspace: which organisation is the tenant's,
who its members are (users.json), and the facts the pass writes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from knotwork.domain.models import Entity, EntityType, Fact, RelationType
from knotwork.ingestion.employment import (
    METHOD,
    TENANT_CUES,
    match_members,
    plan_employment,
    tenant_organization,
)
from knotwork.ingestion.loaders.slack_members import (
    WorkspaceMember,
    left_date,
    load_members,
    workspace_members,
)

_NOW = datetime(2025, 6, 1, tzinfo=UTC)
P, O = EntityType.PERSON, EntityType.ORGANIZATION
R = RelationType


def _e(name: str, etype: EntityType = P, aliases: tuple[str, ...] = (),
       subtype: str | None = None) -> Entity:
    return Entity(id=name, group_id="g", name=name, canonical_name=name.lower(), type=etype,
                  subtype=subtype, aliases=list(aliases), created_at=_NOW, updated_at=_NOW)


def _f(src: str, tgt: str, rtype: RelationType, method: str = "rule") -> Fact:
    return Fact(id=f"{src}-{rtype}-{tgt}", group_id="g", source_id=src, target_id=tgt, type=rtype,
                fact=f"{src} {rtype} {tgt}", episodes=[f"ep-{src}"], created_at=_NOW,
                extraction_method=method)


def _user(name: str, email: str = "", **extra: object) -> dict:
    return {"id": "U" + name.replace(" ", ""), "name": name.lower(), "real_name": name,
            "profile": {"real_name": name, "email": email, "title": extra.pop("title", "")},
            **extra}


def test_members_are_full_people_not_bots_guests_or_handles() -> None:
    users = [_user("Orla Penhallow", "orla@brackenfield.io"),
             _user("Build Robot", is_bot=True),
             _user("Guest Auditor", "x@auditfirm.com", is_restricted=True),
             _user("Single Guest", is_ultra_restricted=True),
             _user("mononym")]
    assert [m.name for m in workspace_members(users)] == ["Orla Penhallow"]


def test_a_deactivated_account_left_and_its_title_says_when() -> None:
    users = [_user("Tamsin Quarrie", deleted=True, title="Data Engineer (left Mar 2024)"),
             _user("Ivo Drennan", deleted=True)]
    tamsin, ivo = workspace_members(users)
    assert tamsin.left and tamsin.left_at == datetime(2024, 3, 31, tzinfo=UTC)
    assert ivo.left and ivo.left_at is None
    assert left_date("Designer, until 2024-11-15") == datetime(2024, 11, 15, tzinfo=UTC)
    assert left_date("Senior Designer") is None


def test_members_load_from_an_export_folder(tmp_path: Path) -> None:
    (tmp_path / "channels.json").write_text("[]")
    (tmp_path / "users.json").write_text(json.dumps([_user("Orla Penhallow", "o@b.io")]))
    assert [m.name for m in load_members(tmp_path)] == ["Orla Penhallow"]
    assert load_members(tmp_path / "missing") == []


def test_the_email_domain_names_the_tenant_over_a_client_more_people_talk_about() -> None:
    own = _e("Brackenfield Robotics Ltd", O, aliases=("Brackenfield",))
    client = _e("Harrowgate Freight", O)
    orla, ivo = _e("Orla Penhallow"), _e("Ivo Drennan")
    facts = [_f("Orla Penhallow", client.id, R.RELATED_TO), _f("Ivo Drennan", client.id, R.RELATED_TO)]
    members = [WorkspaceMember("Orla Penhallow", email="orla@brackenfield.io"),
               WorkspaceMember("Ivo Drennan", email="ivo@brackenfield.io")]
    choice = tenant_organization([own, client, orla, ivo], facts, members, {orla.id, ivo.id})
    assert choice.organization is own
    assert choice.votes["email_domain"] == {own.id: 1.0}


def test_teams_chaining_up_break_a_tie_but_never_name_the_tenant_alone() -> None:
    own = _e("Quillmoor Labs", O)
    sister = _e("Quillmoor Foundation", O)
    division = _e("Platform Division", O, subtype="DIVISION")
    team = _e("Ledger Team", O, subtype="TEAM")
    facts = [_f(team.id, division.id, R.MEMBER_OF), _f(division.id, own.id, R.MEMBER_OF)]
    with_mail = [WorkspaceMember("Orla Penhallow", email="orla@quillmoor.io")]
    choice = tenant_organization([own, sister, division, team], facts, with_mail, {"Orla Penhallow"})
    assert choice.organization is own
    without = [WorkspaceMember("Orla Penhallow")]
    assert tenant_organization([own, division, team], facts, without, {"Orla Penhallow"}).organization is None


def test_the_domain_names_the_company_a_mention_mistyped_as_a_person() -> None:
    mistyped = _e("Brackenfield Robotics")  # typed PERSON by one mention
    team = _e("Quicklime", O)
    members = [WorkspaceMember("Orla Penhallow", email="orla@brackenfieldrobotics.com")]
    choice = tenant_organization([mistyped, team], [_f(team.id, "x", R.MEMBER_OF)], members, set())
    assert choice.organization is mistyped


def test_no_cue_no_tenant() -> None:
    vendor = _e("Saltmarsh Hosting", O)
    choice = tenant_organization([vendor], [_f("Orla Penhallow", vendor.id, R.RELATED_TO)],
                                 [WorkspaceMember("Orla Penhallow", email="o@gmail.com")],
                                 {"Orla Penhallow"})
    assert choice.organization is None
    assert set(choice.votes) == set(TENANT_CUES)


def test_members_match_persons_by_folded_name_and_left_members_get_an_ended_fact() -> None:
    own = _e("Brackenfield Robotics Ltd", O)
    orla, tamsin, other = _e("Orla Pénhallow"), _e("Tamsin Quarrie"), _e("Ivo Drennan")
    entities = [own, orla, tamsin, other]
    facts = [_f(orla.id, "Ledger Team", R.MEMBER_OF, method="table")]
    members = [WorkspaceMember("Orla Penhallow", title="Engineer"),
               WorkspaceMember("Tamsin Quarrie", left=True, left_at=datetime(2024, 3, 31, tzinfo=UTC)),
               WorkspaceMember("Nobody Known")]
    people = match_members(entities, facts, members)
    assert set(people) == {orla.id, tamsin.id}
    planned = plan_employment("g", own, people, {e.id: e for e in entities}, facts,
                              {orla.id: "ep-row", tamsin.id: "ep-msg"}, _NOW)
    by_source = {f.source_id: f for f in planned}
    assert by_source[orla.id].type is R.WORKS_AT and by_source[orla.id].target_id == own.id
    assert by_source[orla.id].episodes == ["ep-row"] and by_source[orla.id].invalid_at is None
    assert by_source[orla.id].extraction_method == METHOD and by_source[orla.id].derived
    assert by_source[tamsin.id].invalid_at == datetime(2024, 3, 31, tzinfo=UTC)
    assert "worked at" in by_source[tamsin.id].fact


def test_an_existing_employment_is_kept_and_only_closed_when_the_member_left() -> None:
    own = _e("Brackenfield Robotics Ltd", O)
    orla, tamsin = _e("Orla Penhallow"), _e("Tamsin Quarrie")
    stated = [_f(orla.id, own.id, R.WORKS_AT), _f(tamsin.id, own.id, R.WORKS_AT)]
    people = {orla.id: WorkspaceMember(orla.name), tamsin.id: WorkspaceMember(tamsin.name, left=True)}
    planned = plan_employment("g", own, people, {e.id: e for e in (own, orla, tamsin)}, stated,
                              {orla.id: "a", tamsin.id: "b"}, _NOW)
    assert [(f.id, f.invalid_at) for f in planned] == [(stated[1].id, _NOW)]


class _Graph:
    """The slice of a graph store the employment pass reads and writes."""

    def __init__(self, entities: list[Entity], facts: list[Fact]) -> None:
        self.entities = {e.id: e for e in entities}
        self.facts = {f.id: f for f in facts}

    def list_entities(self, group_id: str) -> list[Entity]:
        return list(self.entities.values())

    def list_facts(self, group_id: str) -> list[Fact]:
        return list(self.facts.values())

    def entity_episode_ids(self, group_id: str, entity_id: str) -> list[str]:
        return [f"ep-{entity_id}"]

    def upsert_entities(self, entities: list[Entity]) -> None:
        self.entities.update({e.id: e for e in entities})

    def upsert_facts(self, facts: list[Fact]) -> None:
        self.facts.update({f.id: f for f in facts})


def test_the_tenant_a_mention_typed_as_a_person_becomes_an_organisation() -> None:
    from types import SimpleNamespace

    from knotwork.ingestion.employment import derive_employment

    mistyped, orla = _e("Brackenfield Robotics"), _e("Orla Penhallow")
    graph = _Graph([mistyped, orla], [])
    members = [WorkspaceMember("Orla Penhallow", email="orla@brackenfieldrobotics.com")]
    report = derive_employment(SimpleNamespace(graph=graph), "g", members, _NOW)  # type: ignore[arg-type]
    assert report.organization == "Brackenfield Robotics" and report.retyped
    assert graph.entities[mistyped.id].type is O and graph.entities[orla.id].type is P
    [works] = graph.facts.values()
    assert (works.source_id, works.target_id, works.type) == (orla.id, mistyped.id, R.WORKS_AT)
    again = derive_employment(SimpleNamespace(graph=graph), "g", members, _NOW)  # type: ignore[arg-type]
    assert not again.retyped and again.facts == 0 and len(graph.facts) == 1
