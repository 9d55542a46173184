"""Facts a team's own facts imply once a post on it has ended (pure).

A team page lists its people; an announcement says its lead left, moved on or handed over. The
reporting lines of that time are rarely written out ("the engineers reported to Ana until she
left"), yet they held: a person on a team reported to the team's lead while the lead held the
post, and the lead was one of the team. Once the post ended, these lines are history worth
keeping (who did the team report to in March?), so they are derived here:

    Bo —MEMBER_OF→ Ledger,  Ana —LEADS→ Ledger (ended June)   ⇒  Bo —REPORTS_TO→ Ana (ended June)
    Bo —MEMBER_OF→ Ledger (ended May),  Ana —LEADS→ Ledger    ⇒  Bo —REPORTS_TO→ Ana (ended May)
    Ana —LEADS→ Ledger (ended June)                           ⇒  Ana —MEMBER_OF→ Ledger (ended June)
    Cy —LEADS→ Ledger Ops, Ledger Ops —MEMBER_OF→ Ledger,
        Ana —LEADS→ Ledger (ended June)                       ⇒  Cy —REPORTS_TO→ Ana (ended June)
    Cy —LEADS→ Ledger Ops (ended May), Ledger Ops —MEMBER_OF→ Ledger,
        Ana —LEADS→ Ledger                                    ⇒  Cy —REPORTS_TO→ Ana (ended May)

Only ended lines are derived (:data:`RULES`): for a current lead, the page listing the team
usually states the reporting lines it means (a manager column, "reports to"), and the lead of a
team is not always the line manager of everyone on it (a tech lead beside an engineering
manager). Measured on the two development corpora (derived facts the gold ended relations hold /
derived, on the graphs of main before this module): all rules 12 of 14 (the 2 wrong ones come
from a team page merged with its parent unit); members' lines to current leads were 2 of 17
right in an earlier trial, so they are not derived.

A derived fact carries :data:`METHOD` (one of ``DERIVED_METHODS``: graph only, never a passage
of its own), the evidence of both premises and an id of its own, so a stated fact with the same
ends stays what it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from knotwork.domain.ids import stable_id
from knotwork.domain.models import EntityType, Fact, RelationType
from knotwork.ingestion.extraction.temporal import is_interim, validity

if TYPE_CHECKING:
    from knotwork.runtime import Runtime

R = RelationType
METHOD = "team_line"  # the extraction method of a fact derived here (models.DERIVED_METHODS)
_DISCOUNT = 0.9  # a derived fact is a little less sure than the weaker of its premises


@dataclass(frozen=True, slots=True)
class TeamRule:
    """``derived`` between a team's member and its lead (or the lead and the team), when the
    premise named by ``ended`` has ended; the derived fact ends when that premise ended."""

    name: str
    derived: RelationType
    ended: str  # "lead": the LEADS fact ended; "member": the MEMBER_OF fact ended
    between: str  # "member_lead": member → lead; "part_lead_lead"; "lead_team": lead → team
    says: str
    teams_only: bool = False  # only a team (a division's head is no member of it)


RULES: tuple[TeamRule, ...] = (
    TeamRule("reported_to_former_lead", R.REPORTS_TO, "lead", "member_lead",
             "the people on a team reported to its lead until the lead's post ended"),
    TeamRule("part_lead_reported_to_former_lead", R.REPORTS_TO, "lead", "part_lead_lead",
             "the lead of a part of a unit (a sub-team) reported to the unit's lead until the "
             "unit lead's post ended"),
    TeamRule("reported_to_lead_until_left", R.REPORTS_TO, "member", "member_lead",
             "a person who left a team reported to its lead until they left it"),
    TeamRule("former_part_lead_reported_to_unit_lead", R.REPORTS_TO, "member", "part_lead_lead",
             "the former lead of a part of a unit reported to the unit's lead until their post "
             "ended"),
    TeamRule("former_lead_was_member", R.MEMBER_OF, "lead", "lead_team",
             "a team's former lead was one of the team until the post ended", teams_only=True),
)

Kind = Callable[[str], tuple[EntityType, str | None] | None]


def derived_id(group_id: str, source: str, target: str, rtype: RelationType) -> str:
    return stable_id(group_id, "fact", source, target, rtype, METHOD)


def team_lines(group_id: str, facts: Iterable[Fact], kind: Kind, now: datetime) -> list[Fact]:
    """The facts :data:`RULES` derive from ``facts`` (all the facts of the units concerned, of
    their parts, and of their people's reporting lines), except those a stated fact gives.

    A unit is a team, or an organisation nobody works at (no ``WORKS_AT`` points at it: a
    company's own staff are its employees, not its members)."""
    facts = [f for f in facts if f.extraction_method != METHOD]
    stated = {(f.source_id, f.target_id, f.type) for f in facts}
    employers = {f.target_id for f in facts if f.type is R.WORKS_AT}

    def unit(entity_id: str) -> bool:
        found = kind(entity_id)
        return found is not None and found[0] is EntityType.ORGANIZATION and (
            found[1] == "TEAM" or (found[1] is None and entity_id not in employers))

    leads: dict[str, list[Fact]] = {}
    members: dict[str, list[Fact]] = {}
    parts: dict[str, list[Fact]] = {}
    for f in facts:
        if f.type not in (R.LEADS, R.MEMBER_OF) or not unit(f.target_id):
            continue
        if _is_person(kind, f.source_id):
            (leads if f.type is R.LEADS else members).setdefault(f.target_id, []).append(f)
        elif f.type is R.MEMBER_OF and unit(f.source_id):
            parts.setdefault(f.target_id, []).append(f)
    # a stand-in ("interim lead while Bo is on leave") leaves the reporting lines as they were
    leads = {team: [f for f in held if not is_interim(f.fact)] for team, held in leads.items()}
    led_by = {(f.source_id, f.target_id) for held in leads.values() for f in held}
    post_starts = {(f.source_id, f.target_id, f.valid_at) for held in leads.values() for f in held}
    out: dict[str, Fact] = {}
    for team, held in sorted(leads.items()):
        # the people of the unit: (person, the facts that place them, the one that dates it)
        people = [(m.source_id, [m], m) for m in members.get(team, [])]
        heads = [(h.source_id, [p, h], h) for p in parts.get(team, [])
                 for h in leads.get(p.source_id, [])]
        for rule in RULES:
            for lead in held:
                if rule.between == "lead_team":
                    if rule.teams_only and (kind(team) or (None, None))[1] != "TEAM":
                        continue
                    if rule.ended == "lead" and lead.invalid_at is not None:
                        _add(out, stated, group_id, rule, lead.source_id, team, [lead],
                             lead.invalid_at, now)
                    continue
                for person, placed, dated in (heads if rule.between == "part_lead_lead" else people):
                    if person == lead.source_id or (
                            rule.ended == "member" and (person, team) in led_by):
                        continue  # (a former lead who left is no report of the new one)
                    # a start the person's own post on the unit shares dates that post ("Role:
                    # Delivery Manager (since …)"), not when they joined the unit
                    posted = (person, team, dated.valid_at) in post_starts
                    end = _end(rule, lead, dated, posted)
                    if end is not None:
                        _add(out, stated, group_id, rule, person, lead.source_id,
                             [lead, *placed], end, now)
    return sorted(out.values(), key=lambda f: f.id)


def derive_team_lines(rt: Runtime, group_id: str, now: datetime) -> tuple[int, int]:
    """The tenant-wide pass run after an ingest's consolidation (twins merged, types re-decided:
    a batch derives from what it sees, a merge may leave a line underived or stale): the lines
    the whole graph implies, written where new or changed, the stale ones deleted.
    Returns (written, deleted)."""
    entities = {e.id: (e.type, e.subtype) for e in rt.graph.list_entities(group_id)}
    facts = rt.graph.list_facts(group_id)
    stored = {f.id: f for f in facts if f.extraction_method == METHOD}
    planned = team_lines(group_id, facts, entities.get, now)
    written = []
    for fact in planned:
        old = stored.get(fact.id)
        if old is None:
            written.append(fact)
        elif (old.source_id, old.target_id, old.valid_at, old.invalid_at, old.episodes) != (
                fact.source_id, fact.target_id, fact.valid_at, fact.invalid_at, fact.episodes):
            written.append(fact.model_copy(update={"created_at": old.created_at}))
    if written:
        rt.graph.upsert_facts(written)
    stale = sorted(set(stored) - {f.id for f in planned})
    if stale:
        rt.graph.delete_facts(group_id, stale)
    return len(written), len(stale)


def _end(rule: TeamRule, lead: Fact, member: Fact, posted: bool = False) -> datetime | None:
    """When the derived line ended, if ``rule`` derives it from these premises."""
    first = lead if rule.ended == "lead" else member
    if first.invalid_at is None:
        return None
    other = member if rule.ended == "lead" else lead
    if rule.ended == "member" and lead.invalid_at is not None:
        return None  # both ended: the former-lead rule decides
    end = first.invalid_at
    if other.invalid_at is not None:
        end = min(end, other.invalid_at)
    if other.valid_at is not None and other.valid_at > end and not posted and _stated_start(other):
        return None  # the other premise began after: they never overlapped
    return end


def _stated_start(fact: Fact) -> bool:
    """Does the fact's start come from its sentence (not only from its document's date)?"""
    start, _ = validity(fact.fact, fact.created_at)
    return start is not None


def _add(out: dict[str, Fact], stated: set[tuple[str, str, RelationType]], group_id: str,
         rule: TeamRule, source: str, target: str, premises: list[Fact], end: datetime,
         now: datetime) -> None:
    if (source, target, rule.derived) in stated:
        return
    fid = derived_id(group_id, source, target, rule.derived)
    starts = [p.valid_at for p in premises if p.valid_at is not None and p.valid_at < end]
    start = max(starts) if starts else None
    episodes = list(dict.fromkeys(e for p in premises for e in p.episodes))
    confidence = round(min(p.confidence for p in premises) * _DISCOUNT, 4)
    fact = Fact(id=fid, group_id=group_id, source_id=source, target_id=target,
                type=rule.derived, fact=premises[0].fact, confidence=confidence,
                episodes=episodes, episode_confidences=[confidence] * len(episodes),
                episode_valid_at=[start] * len(episodes), valid_at=start, invalid_at=end,
                created_at=now, expired_at=now, extraction_method=METHOD)
    known = out.get(fid)
    if known is None or (known.invalid_at or end) < end:
        out[fid] = fact  # several premises: the latest end


def _is_person(kind: Kind, entity_id: str) -> bool:
    found = kind(entity_id)
    return found is not None and found[0] is EntityType.PERSON


__all__ = ["METHOD", "RULES", "TeamRule", "derive_team_lines", "derived_id", "team_lines"]
