"""End events: a person leaving ends their job's facts, a closed office its people's places;
a hand-over sentence states the old holder's ended fact. Invented names throughout."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from knotwork.domain.ids import stable_id
from knotwork.domain.models import Entity, EntityType, Episode, Fact, RelationType
from knotwork.ingestion.endings import LEFT_AT, end_of, ended_facts, with_end
from knotwork.ingestion.extraction.change import relation_ended
from knotwork.ingestion.extraction.departure import CLOSURE, DEPARTURE, end_events
from knotwork.ingestion.extraction.handover import handover_relations
from knotwork.ingestion.extraction.temporal import date_near
from knotwork.ingestion.extraction.types import (
    ChunkExtraction,
    LocalEntity,
    LocalRelation,
    Mention,
)
from knotwork.ingestion.facts import fact_id
from knotwork.ingestion.graph_builder import BatchBuilder
from knotwork.resolution.exact import entity_keys
from knotwork.resolution.normalize import normalize_name

R = RelationType
P, O, L = EntityType.PERSON, EntityType.ORGANIZATION, EntityType.LOCATION
REF = datetime(2024, 9, 2, tzinfo=UTC)
G = "g"
NOW = datetime(2025, 7, 1, tzinfo=UTC)


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


def entities_in(text: str, names: dict[str, tuple[EntityType, str | None]]) -> list[LocalEntity]:
    """One local entity per name, with a mention at each place the text states it."""
    out = []
    for name, (etype, subtype) in names.items():
        mentions = [Mention(m.start(), m.end(), m.group(0), etype, 0.9, "rule", subtype)
                    for m in re.finditer(re.escape(name), text)]
        out.append(LocalEntity(name, normalize_name(name), etype, subtype, 0.9, mentions))
    return out


def events(text: str, names: dict[str, tuple[EntityType, str | None]],
           speaker: str | None = None) -> list[tuple[str, str, datetime, str]]:
    ents = entities_in(text, names)
    return [(ents[e.entity].name, e.kind, e.at, e.rule) for e in end_events(text, ents, REF, speaker)]


PEOPLE = {"Mara Quint": (P, None), "Fennel Labs": (O, None), "Ledger team": (O, "TEAM"),
          "Otto Brisk": (P, None)}


@pytest.mark.parametrize(("text", "who", "when"), [
    ("Mara Quint has decided to leave Fennel Labs.", "Mara Quint", REF),
    ("Mara Quint will leave Fennel Labs at the end of September.", "Mara Quint", day(2024, 9, 30)),
    ("Mara Quint, who ran the Ledger team for years, left Fennel Labs in October.",
     "Mara Quint", day(2024, 10, 1)),
    ("Otto Brisk took over from Mara Quint (left 30.09.2024).", "Mara Quint", day(2024, 9, 30)),
    ("Key dates — Dec 20, 2024: Mara Quint's last day", "Mara Quint", day(2024, 12, 20)),
    ("Mara Quint is moving on. Her last working day will be 14 October 2024.",
     "Mara Quint", day(2024, 10, 14)),
    ("Mara Quint, Analyst — From 01.07.2024: Leaves Fennel Labs on 30.06.2024",
     "Mara Quint", day(2024, 6, 30)),
])
def test_a_sentence_stating_a_departure_names_the_person_and_the_day(
        text: str, who: str, when: datetime) -> None:
    found = events(text, PEOPLE)
    assert (who, DEPARTURE) in {(w, k) for w, k, _, _ in found}
    assert max(at for w, _, at, _ in found if w == who) == when


def test_my_last_day_is_the_writer_s() -> None:
    text = "Otto Brisk: Tomorrow (Fri 11/15) is my last day at Fennel Labs. Thank you all!"
    ents = entities_in(text, {"Otto Brisk": (P, None), "Fennel Labs": (O, None)})
    ents[0].mentions.append(Mention(text.index("my"), text.index("my") + 2, "my", P, 0.9, "speaker",
                                    refers_to="Otto Brisk"))
    found = end_events(text, ents, REF, "Otto Brisk")
    assert [(ents[e.entity].name, e.at) for e in found] == [("Otto Brisk", day(2024, 11, 15))]


@pytest.mark.parametrize("text", [
    "Mara Quint left the meeting early to catch a train.",
    "The last day of the sprint is Friday; Mara Quint demos the ledger.",
    "Mara Quint leaves for Bergen on Monday for the offsite.",
    "Mara Quint is on parental leave until June, Otto Brisk covers the Ledger team.",
    "Farewell Otto Brisk, who joins the Ledger team today.",
    "Mara Quint said the batch job left Fennel Labs' servers at 08:55.",
])
def test_sentences_that_state_no_departure(text: str) -> None:
    assert events(text, PEOPLE) == []


@pytest.mark.parametrize("text", [
    "We are closing the Dunmore office on 30.06.2024 when the lease ends.",
    "The Dunmore office closed on 30 June 2024.",
    "30.06.2024: Dunmore closed; Ivo moved to the head office.",
])
def test_an_office_closing_names_the_place(text: str) -> None:
    found = events(text, {"Dunmore": (L, None)})
    assert [(w, k, at) for w, k, at, _ in found] == [("Dunmore", CLOSURE, day(2024, 6, 30))]


def test_a_place_that_closes_a_deal_is_no_office_closing() -> None:
    assert events("Dunmore closed the deal with the buyers.", {"Dunmore": (L, None)}) == []


def test_numeric_dates_read_day_first_with_dots_month_first_with_slashes() -> None:
    assert date_near("from 01.10.2024", 0, REF) == day(2024, 10, 1)
    assert date_near("on 3/14", 0, REF) == day(2024, 3, 14)
    assert date_near("From 01.07.2024: leaves on 30.06.2024", 20, REF, skip_starts=True) == \
        day(2024, 6, 30)


# ---------------------------------------------------------------- what the event ends

def ent(name: str, etype: EntityType, subtype: str | None = None) -> Entity:
    key = normalize_name(name)
    return Entity(id=stable_id(G, "entity", key), group_id=G, name=name, canonical_name=key,
                  type=etype, subtype=subtype, name_keys=entity_keys(key, [], etype),
                  created_at=day(2024, 1, 1), updated_at=day(2024, 1, 1))


def fact(src: Entity, rtype: RelationType, tgt: Entity, valid_at: datetime | None = None) -> Fact:
    return Fact(id=fact_id(G, src.id, tgt.id, rtype, ""), group_id=G, source_id=src.id,
                target_id=tgt.id, type=rtype, fact=f"{src.name} {rtype.value} {tgt.name}",
                episodes=["e0"], valid_at=valid_at, created_at=NOW)


MARA, OTTO, IDA = ent("Mara Quint", P), ent("Otto Brisk", P), ent("Ida Lenz", P)
FENNEL, LEDGER = ent("Fennel Labs", O), ent("Ledger team", O, "TEAM")
DUNMORE, ACME = ent("Dunmore", L), ent("Acme Freight", O)
KINDS = {e.id: (e.type, e.subtype) for e in (MARA, OTTO, IDA, FENNEL, LEDGER, DUNMORE, ACME)}


def test_a_person_who_left_holds_no_job_facts_and_manages_no_one() -> None:
    mine = [fact(MARA, R.WORKS_AT, FENNEL, day(2023, 1, 1)), fact(MARA, R.LEADS, LEDGER),
            fact(MARA, R.MEMBER_OF, LEDGER, day(2024, 3, 1)), fact(OTTO, R.REPORTS_TO, MARA)]
    others = [fact(OTTO, R.MEMBER_OF, LEDGER), fact(IDA, R.WORKS_AT, FENNEL),
              fact(MARA, R.CREATED, ACME),  # what she wrote stays hers
              fact(MARA, R.WORKS_AT, ACME, day(2024, 11, 1))]  # a job that starts after
    left = with_end(MARA, DEPARTURE, day(2024, 9, 30), True, "e9")
    ends = {MARA.id: (LEFT_AT, end_of(left, LEFT_AT))}
    ended = ended_facts(mine + others, ends, KINDS.get, NOW)
    assert {f.id for f in ended} == {f.id for f in mine}
    assert {f.invalid_at for f in ended} == {day(2024, 9, 30)}


def test_a_stated_date_wins_over_the_document_time() -> None:
    left = with_end(MARA, DEPARTURE, day(2024, 9, 2), False, "e1")  # "has decided to leave"
    left = with_end(left, DEPARTURE, day(2024, 9, 30), True, "e2")  # "last day: 30.09.2024"
    assert end_of(left, LEFT_AT) == day(2024, 9, 30)


def test_a_closed_office_ends_its_people_and_teams_not_companies_in_the_city() -> None:
    facts = [fact(MARA, R.LOCATED_IN, DUNMORE), fact(LEDGER, R.LOCATED_IN, DUNMORE),
             fact(ACME, R.LOCATED_IN, DUNMORE)]
    ends = {DUNMORE.id: ("closed_at", day(2024, 6, 30))}
    ended = ended_facts(facts, ends, KINDS.get, NOW)
    assert {f.source_id for f in ended} == {MARA.id, LEDGER.id}


# ---------------------------------------------------------------- graph builder, any order

class Memory:
    def __init__(self) -> None:
        self.entities: dict[str, Entity] = {}
        self.facts: dict[str, Fact] = {}

    def find(self, keys: Sequence[str]) -> list[Entity]:
        return [e for e in self.entities.values() if set(keys) & set(e.name_keys)]

    def facts_of(self, ids: Sequence[str]) -> list[Fact]:
        return [f for f in self.facts.values() if {f.source_id, f.target_id} & set(ids)]

    def run(self, text: str, when: datetime, names: dict[str, tuple[EntityType, str | None]],
            rels: Sequence[tuple[int, RelationType, int]] = ()) -> None:
        ents = entities_in(text, names)
        relations = [LocalRelation(s, t, rt, text, 0.8, 0, len(text)) for s, rt, t in rels]
        ep = Episode(id=stable_id(text), group_id=G, name="x", content=text, document_id="d",
                     valid_at=when, created_at=NOW)
        result = BatchBuilder(G, NOW, self.find, self.facts_of).build(
            [(ep, ChunkExtraction(ents, relations))])
        self.entities.update(result.entities)
        self.facts.update(result.facts)

    def leads(self) -> Fact:
        return next(f for f in self.facts.values() if f.type is R.LEADS)


TEAM_PAGE = ("Mara Quint leads the Ledger team.", day(2024, 3, 1),
             {"Mara Quint": (P, None), "Ledger team": (O, "TEAM")}, [(0, R.LEADS, 1)])
NEWS = ("Mara Quint has decided to leave Fennel Labs. Her last working day will be 30.09.2024.",
        day(2024, 9, 2), {"Mara Quint": (P, None), "Fennel Labs": (O, None)}, [(0, R.WORKS_AT, 1)])


@pytest.mark.parametrize("order", [(TEAM_PAGE, NEWS), (NEWS, TEAM_PAGE)])
def test_a_departure_ends_the_facts_stated_before_or_after_it(order: tuple) -> None:
    memory = Memory()
    for text, when, names, rels in order:
        memory.run(text, when, names, rels)
    assert memory.leads().invalid_at == day(2024, 9, 30)
    works = next(f for f in memory.facts.values() if f.type is R.WORKS_AT)
    assert works.invalid_at is not None


def test_a_later_fact_of_someone_else_is_not_ended() -> None:
    memory = Memory()
    memory.run(*NEWS)
    memory.run("Otto Brisk leads the Ledger team.", day(2024, 3, 1),
               {"Otto Brisk": (P, None), "Ledger team": (O, "TEAM")}, [(0, R.LEADS, 1)])
    assert memory.leads().invalid_at is None


# ---------------------------------------------------------------- hand-overs

@pytest.mark.parametrize("text", [
    "Rhea Voss took over the Ledger team from Mara Quint on 1 October.",
    "Rhea Voss is the new lead of the Ledger team, succeeding Mara Quint.",
    "Rhea Voss now leads the Ledger team, replacing Mara Quint.",
])
def test_a_handover_states_the_old_holder_s_ended_fact(text: str) -> None:
    ents = entities_in(text, {"Rhea Voss": (P, None), "Ledger team": (O, "TEAM"),
                              "Mara Quint": (P, None)})
    new = LocalRelation(0, 1, R.LEADS, text, 0.8, 0, len(text))
    old = handover_relations(text, ents, [new])
    assert [(r.source, r.target, r.type) for r in old] == [(2, 1, R.LEADS)]
    assert relation_ended(text, old[0], ents)
    assert not relation_ended(text, new, ents)


def test_help_from_someone_is_no_handover() -> None:
    text = "Rhea Voss leads the Ledger team, with help from Mara Quint."
    ents = entities_in(text, {"Rhea Voss": (P, None), "Ledger team": (O, "TEAM"),
                              "Mara Quint": (P, None)})
    assert handover_relations(text, ents, [LocalRelation(0, 1, R.LEADS, text, 0.8, 0, len(text))]) == []


# ---------------------------------------------------------------- counts over time

def test_a_count_over_time_counts_ended_facts_too() -> None:
    from knotwork.retrieval.aggregate import collect, parse_aggregate

    project = ent("Project Wren", O)
    entities = {e.id: e for e in (MARA, OTTO, project)}
    old = fact(MARA, R.LEADS, project, day(2024, 1, 1)).model_copy(
        update={"invalid_at": day(2024, 9, 30)})
    new = fact(OTTO, R.LEADS, project, day(2024, 10, 1))
    ever = parse_aggregate("How many different people have led Project Wren?")
    now = parse_aggregate("How many people lead Project Wren?")
    assert ever is not None and ever.history and now is not None and not now.history
    assert [c.entity.name for c in collect(ever, project, [old, new], entities, None)] == \
        ["Mara Quint", "Otto Brisk"]
    assert [c.entity.name for c in collect(now, project, [old, new], entities, None)] == ["Otto Brisk"]


@pytest.mark.parametrize(("sentence", "change"), [
    ("Rhea Voss becomes the new Ledger lead on Monday.", True),
    ("Rhea Voss became Executive Producer of Wren.", True),
    ("The Ledger service became popular with the finance team.", False),
])
def test_becoming_the_lead_is_a_change_of_hands(sentence: str, change: bool) -> None:
    from knotwork.ingestion.facts import states_change

    assert states_change(sentence) is change


def test_a_stand_in_s_role_ends_when_the_covered_person_is_back() -> None:
    from knotwork.ingestion.extraction.temporal import interim_end

    ref = day(2025, 3, 4)
    assert interim_end("Dana Holt is interim Ledger lead while Bo is on parental leave "
                       "(back in June).", ref) == day(2025, 6, 1)
    assert interim_end("Dana Holt is acting head of Ledger until Bo returns on 2 June.", ref) \
        == day(2025, 6, 2)
    assert interim_end("Dana Holt joined the Ledger team back in 2019.", ref) is None
    assert interim_end("Bo is on leave, back in June.", ref) is None


def test_a_stand_in_fact_gets_its_end_and_keeps_its_start() -> None:
    memory = Memory()
    text = "Dana Holt is interim lead of the Ledger team while Bo is on leave (back in June)."
    memory.run(text, day(2025, 3, 4), {"Dana Holt": (P, None), "Ledger team": (O, "TEAM")},
               [(0, R.LEADS, 1)])
    lead = memory.leads()
    assert (lead.valid_at, lead.invalid_at) == (day(2025, 3, 4), day(2025, 6, 1))
