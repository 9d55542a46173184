"""Reporting lines implied by a team's ended lead or an ended membership (ingestion.team_lines)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from knotwork.domain.models import EntityType, Episode, Fact, RelationType
from knotwork.ingestion.extraction.types import ChunkExtraction, LocalEntity, LocalRelation, Mention
from knotwork.ingestion.graph_builder import BatchBuilder
from knotwork.ingestion.team_lines import METHOD, RULES, derived_id, team_lines
from knotwork.resolution.normalize import normalize_name

G = "g"
NOW = datetime(2025, 7, 1, tzinfo=UTC)
R = RelationType
P, O = EntityType.PERSON, EntityType.ORGANIZATION
KINDS = {"ana": (P, None), "bo": (P, None), "cy": (P, None), "ledger": (O, "TEAM"),
         "acme": (O, None)}


def d(y: int, m: int = 1, day: int = 1) -> datetime:
    return datetime(y, m, day, tzinfo=UTC)


def kind(entity_id: str) -> tuple[EntityType, str | None] | None:
    return KINDS.get(entity_id)


def fact(source: str, target: str, rtype: RelationType, text: str = "a sentence",
         valid_at: datetime | None = None, invalid_at: datetime | None = None,
         episode: str = "ep") -> Fact:
    return Fact(id=f"{source}-{rtype.value}-{target}", group_id=G, source_id=source,
                target_id=target, type=rtype, fact=text, episodes=[episode], valid_at=valid_at,
                invalid_at=invalid_at, created_at=d(2024))


def lines(facts: Sequence[Fact]) -> dict[tuple[str, str, RelationType], Fact]:
    return {(f.source_id, f.target_id, f.type): f for f in team_lines(G, facts, kind, NOW)}


def test_rules_are_named_data() -> None:
    assert len({r.name for r in RULES}) == len(RULES)
    assert all(r.says for r in RULES)


def test_people_on_a_team_reported_to_its_former_lead_until_the_post_ended() -> None:
    got = lines([fact("ana", "ledger", R.LEADS, "Ana led the team until March.", invalid_at=d(2024, 3)),
                 fact("bo", "ledger", R.MEMBER_OF, "Bo works on the ledger.", episode="ep2"),
                 fact("cy", "ledger", R.MEMBER_OF)])
    bo = got[("bo", "ana", R.REPORTS_TO)]
    assert bo.invalid_at == d(2024, 3)
    assert bo.extraction_method == METHOD and bo.derived
    assert bo.id == derived_id(G, "bo", "ana", R.REPORTS_TO)
    assert set(bo.episodes) == {"ep", "ep2"}
    assert ("cy", "ana", R.REPORTS_TO) in got
    # the former lead was one of the team while leading it
    assert got[("ana", "ledger", R.MEMBER_OF)].invalid_at == d(2024, 3)
    assert ("ana", "ana", R.REPORTS_TO) not in got


def test_a_current_lead_implies_nothing() -> None:
    assert lines([fact("ana", "ledger", R.LEADS), fact("bo", "ledger", R.MEMBER_OF)]) == {}


def test_someone_who_left_the_team_reported_to_its_lead_until_then() -> None:
    got = lines([fact("ana", "ledger", R.LEADS),
                 fact("bo", "ledger", R.MEMBER_OF, invalid_at=d(2024, 5))])
    assert got[("bo", "ana", R.REPORTS_TO)].invalid_at == d(2024, 5)
    assert ("ana", "ledger", R.MEMBER_OF) not in got


def test_both_ended_the_line_ends_at_the_earlier_end() -> None:
    got = lines([fact("ana", "ledger", R.LEADS, invalid_at=d(2024, 9)),
                 fact("bo", "ledger", R.MEMBER_OF, invalid_at=d(2024, 5))])
    assert got[("bo", "ana", R.REPORTS_TO)].invalid_at == d(2024, 5)


def test_a_member_who_joined_after_the_lead_left_never_reported_to_them() -> None:
    got = lines([fact("ana", "ledger", R.LEADS, invalid_at=d(2024, 3)),
                 fact("bo", "ledger", R.MEMBER_OF, "Bo joined the team on 1 June 2024.",
                      valid_at=d(2024, 6))])
    assert ("bo", "ana", R.REPORTS_TO) not in got


def test_a_start_known_only_from_the_page_date_does_not_rule_out_the_line() -> None:
    # a team page read after the lead left still lists the people who were there before
    got = lines([fact("ana", "ledger", R.LEADS, invalid_at=d(2024, 3)),
                 fact("bo", "ledger", R.MEMBER_OF, "Bo — backend engineer", valid_at=d(2024, 6))])
    assert ("bo", "ana", R.REPORTS_TO) in got


def test_a_stated_line_is_left_as_it_is() -> None:
    got = lines([fact("ana", "ledger", R.LEADS, invalid_at=d(2024, 3)),
                 fact("bo", "ledger", R.MEMBER_OF),
                 fact("bo", "ana", R.REPORTS_TO, "Bo reports to Ana.")])
    assert ("bo", "ana", R.REPORTS_TO) not in got


def test_units_are_teams_or_organisations_nobody_works_at() -> None:
    # a company people work at is an employer, not a unit; a product's lead implies no line
    KINDS.update({"atlas": (EntityType.PRODUCT, "PROJECT"), "guild": (O, None)})
    got = lines([fact("ana", "acme", R.LEADS, invalid_at=d(2024, 3)), fact("bo", "acme", R.MEMBER_OF),
                 fact("cy", "acme", R.WORKS_AT),
                 fact("ana", "atlas", R.LEADS, invalid_at=d(2024, 3)), fact("bo", "atlas", R.MEMBER_OF)])
    assert got == {}
    got = lines([fact("ana", "guild", R.LEADS, invalid_at=d(2024, 3)), fact("bo", "guild", R.MEMBER_OF)])
    assert ("bo", "ana", R.REPORTS_TO) in got


def test_the_lead_of_a_part_reported_to_the_units_former_lead() -> None:
    KINDS["ledger ops"] = (O, "TEAM")
    got = lines([fact("ana", "ledger", R.LEADS, invalid_at=d(2024, 3)),
                 fact("ledger ops", "ledger", R.MEMBER_OF),
                 fact("cy", "ledger ops", R.LEADS)])
    assert got[("cy", "ana", R.REPORTS_TO)].invalid_at == d(2024, 3)
    # while the unit's lead holds the post, nothing is derived
    assert lines([fact("ana", "ledger", R.LEADS), fact("ledger ops", "ledger", R.MEMBER_OF),
                  fact("cy", "ledger ops", R.LEADS)]) == {}


def test_a_former_lead_who_left_is_no_report_of_the_new_lead() -> None:
    got = lines([fact("ana", "ledger", R.LEADS, invalid_at=d(2024, 3)),
                 fact("ana", "ledger", R.MEMBER_OF, invalid_at=d(2024, 3)),
                 fact("bo", "ledger", R.LEADS)])
    assert ("ana", "bo", R.REPORTS_TO) not in got
    assert ("bo", "ana", R.REPORTS_TO) not in got  # bo is no member the facts name


# ------------------------------------------------------------------ in a batch
def _local(name: str, etype: EntityType, subtype: str | None = None) -> LocalEntity:
    return LocalEntity(name, normalize_name(name), etype, subtype, 0.85,
                       [Mention(0, len(name), name, etype, 0.85, "rule", subtype)], set())


def _episode(eid: str, when: datetime) -> Episode:
    return Episode(id=eid, group_id=G, name=eid, content="...", document_id="doc",
                   valid_at=when, created_at=NOW)


def test_batches_in_either_order_derive_the_line() -> None:
    roster = ChunkExtraction([_local("Bo Lind", P), _local("Ledger Team", O, "TEAM")],
                             [LocalRelation(0, 1, R.MEMBER_OF, "Bo Lind — engineer", 0.8, 0, 10)])
    ended = ChunkExtraction([_local("Ana Ruiz", P), _local("Ledger Team", O, "TEAM")],
                            [LocalRelation(0, 1, R.LEADS, "Ana Ruiz led the Ledger Team until 31 March 2024.",
                                           0.8, 0, 10)])
    for first, second in ((roster, ended), (ended, roster)):
        entities: dict = {}
        facts: dict[str, Fact] = {}

        def find(keys: Sequence[str], entities: dict = entities) -> list:
            return [e for e in entities.values() if set(keys) & set(e.name_keys)]

        def facts_of(ids: Sequence[str], facts: dict = facts) -> list[Fact]:
            return [f for f in facts.values() if {f.source_id, f.target_id} & set(ids)]

        for eid, ex in (("ep1", first), ("ep2", second)):
            result = BatchBuilder(G, NOW, find, facts_of, entities_of=lambda ids, entities=entities: [
                entities[i] for i in ids if i in entities]).build([(_episode(eid, d(2024, 6)), ex)])
            entities.update(result.entities)
            facts.update(result.facts)
        derived = [f for f in facts.values() if f.derived]
        names = {e.id: e.name for e in entities.values()}
        got = {(names[f.source_id], names[f.target_id], f.type) for f in derived}
        assert ("Bo Lind", "Ana Ruiz", R.REPORTS_TO) in got
        assert all(f.invalid_at is not None and f.invalid_at <= d(2024, 4) for f in derived)


def test_a_stand_in_changes_no_reporting_line() -> None:
    got = lines([fact("ana", "ledger", R.LEADS, "Ana is interim lead while Cy is on leave (back in June).",
                      invalid_at=d(2024, 6)),
                 fact("bo", "ledger", R.MEMBER_OF)])
    assert got == {}


def test_a_division_head_is_no_member_of_the_division() -> None:
    KINDS["ops"] = (O, None)
    got = lines([fact("ana", "ops", R.LEADS, invalid_at=d(2024, 3)), fact("bo", "ops", R.MEMBER_OF)])
    assert ("bo", "ana", R.REPORTS_TO) in got
    assert ("ana", "ops", R.MEMBER_OF) not in got


def test_a_start_that_dates_the_members_own_new_post_is_no_joining_date() -> None:
    # "Ana Ruiz — Role: Team Lead (since 1 June 2024)": she led from June, was on the team before
    row = "Ana Ruiz — Role: Team Lead (since 1 June 2024)"
    got = lines([fact("cy", "ledger", R.LEADS, invalid_at=d(2024, 5, 31)),
                 fact("ana", "ledger", R.MEMBER_OF, row, valid_at=d(2024, 6)),
                 fact("ana", "ledger", R.LEADS, row, valid_at=d(2024, 6))])
    assert ("ana", "cy", R.REPORTS_TO) in got


def test_the_former_lead_of_a_part_reported_to_the_units_lead() -> None:
    KINDS["ledger ops"] = (O, "TEAM")
    got = lines([fact("ana", "ledger", R.LEADS),
                 fact("ledger ops", "ledger", R.MEMBER_OF),
                 fact("cy", "ledger ops", R.LEADS, "Cy led Ledger Ops until April.", invalid_at=d(2024, 4))])
    assert got[("cy", "ana", R.REPORTS_TO)].invalid_at == d(2024, 4)


class _Graph:
    """The four graph reads and writes the tenant-wide pass uses, over dicts."""

    def __init__(self, entities: dict, facts: list[Fact]) -> None:
        self.entities = entities
        self.facts = {f.id: f for f in facts}

    def list_entities(self, group_id: str) -> list:
        return list(self.entities.values())

    def list_facts(self, group_id: str) -> list[Fact]:
        return list(self.facts.values())

    def upsert_facts(self, facts: Sequence[Fact]) -> None:
        self.facts.update((f.id, f) for f in facts)

    def delete_facts(self, group_id: str, ids: Sequence[str]) -> int:
        for i in ids:
            self.facts.pop(i, None)
        return len(ids)


def test_the_tenant_wide_pass_writes_new_lines_once_and_drops_stale_ones() -> None:
    from types import SimpleNamespace

    from knotwork.domain.models import Entity
    from knotwork.ingestion.team_lines import derive_team_lines

    entities = {i: Entity(id=i, group_id=G, name=i, canonical_name=i, type=t, subtype=s,
                          created_at=d(2024), updated_at=d(2024)) for i, (t, s) in KINDS.items()}
    graph = _Graph(entities, [fact("ana", "ledger", R.LEADS, invalid_at=d(2024, 3)),
                              fact("bo", "ledger", R.MEMBER_OF)])
    rt = SimpleNamespace(graph=graph)
    assert derive_team_lines(rt, G, NOW) == (2, 0)  # bo's line, ana's membership
    assert derive_team_lines(rt, G, NOW) == (0, 0)  # nothing changed: nothing written
    graph.facts.pop("bo-MEMBER_OF-ledger")
    assert derive_team_lines(rt, G, NOW) == (0, 1)  # bo's line lost its premise
    assert not any(f.source_id == "bo" for f in graph.facts.values())
