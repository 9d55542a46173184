"""The generated world: entities, relations with validity intervals, and dated events."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

START = date(2023, 1, 2)  # the records begin
END = date(2025, 6, 30)  # "today" in the world


@dataclass
class Entity:
    id: str
    kind: str  # person, team, division, project, system, technology, office, vendor, company
    name: str
    # person-only
    given: str = ""
    family: str = ""
    nickname: str = ""
    feminine: bool = False
    handle: str = ""
    slack_id: str = ""
    role: str = ""
    # other kinds
    short: str = ""  # "Payments" for "Payments Team", "Phoenix" for "Project Phoenix"
    category: str = ""  # vendor category / technology kind
    started: date | None = None  # projects

    @property
    def pronoun(self) -> str:
        return "she" if self.feminine else "he"

    @property
    def possessive(self) -> str:
        return "her" if self.feminine else "his"

    @property
    def objective(self) -> str:
        return "her" if self.feminine else "him"


@dataclass
class Relation:
    id: str
    type: str  # a Knotwork RelationType value
    subject: str  # entity id
    object: str  # entity id
    label: str  # the generator's own name: team_lead, member_of, reports_to, ...
    start: date | None = None  # None: held since before the records
    end: date | None = None  # None: still holds

    def holds(self, day: date) -> bool:
        return (self.start is None or self.start <= day) and (self.end is None or day < self.end)


@dataclass
class Event:
    kind: str  # lead_change, transfer, reorg, office_move, project_lead_change, vendor_swap
    day: date
    subject: str  # the entity that changed (team, person, project, company category)
    old: str  # entity id before
    new: str  # entity id after
    ended: list[str] = field(default_factory=list)  # relation ids closed
    started: list[str] = field(default_factory=list)  # relation ids opened


@dataclass
class World:
    seed: int
    company: Entity
    entities: dict[str, Entity] = field(default_factory=dict)
    relations: dict[str, Relation] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    # functional relation timelines: (label, subject id) -> relation ids in time order
    timeline: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    # multi-valued static relations: (label, subject id) -> relation ids
    static: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    confusables: list[tuple[str, str]] = field(default_factory=list)  # person id pairs
    ceo: str = ""

    def of_kind(self, kind: str) -> list[Entity]:
        return [e for e in self.entities.values() if e.kind == kind]

    def add(self, entity: Entity) -> Entity:
        self.entities[entity.id] = entity
        return entity

    def relate(self, label: str, rtype: str, subject: str, obj: str,
               start: date | None = None, functional: bool = True) -> Relation:
        rid = f"r{len(self.relations):07d}"
        rel = Relation(rid, rtype, subject, obj, label, start)
        self.relations[rid] = rel
        index = self.timeline if functional else self.static
        index.setdefault((label, subject), []).append(rid)
        return rel

    def at(self, label: str, subject: str, day: date) -> Relation | None:
        """The functional relation ``label`` of ``subject`` that holds on ``day``."""
        for rid in self.timeline.get((label, subject), []):
            rel = self.relations[rid]
            if rel.holds(day):
                return rel
        return None

    def value(self, label: str, subject: str, day: date) -> str | None:
        rel = self.at(label, subject, day)
        return rel.object if rel else None

    def all_of(self, label: str, subject: str) -> list[Relation]:
        return [self.relations[r] for r in self.static.get((label, subject), [])]

    def change(self, label: str, subject: str, new_obj: str, day: date) -> tuple[str, str]:
        """Close the current ``label`` relation of ``subject`` on ``day`` and open a new one.

        Returns (ended relation id, started relation id)."""
        current = self.at(label, subject, day)
        if current is None:
            raise ValueError(f"{subject} has no {label} on {day}")
        current.end = day
        new = self.relate(label, current.type, subject, new_obj, start=day)
        return current.id, new.id

    def members(self, team: str, day: date) -> list[str]:
        """People whose member_of relation points at ``team`` on ``day`` (slow: small worlds
        and question generation only; the generator keeps its own roster)."""
        out = []
        for (label, subject), rids in self.timeline.items():
            if label == "member_of" and any(
                self.relations[r].object == team and self.relations[r].holds(day) for r in rids
            ):
                out.append(subject)
        return out
