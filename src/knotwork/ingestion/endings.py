"""What a departure or an office closure ends, graph-wide (pure).

An end event (``extraction.departure``) is kept on its entity as a property with its source
episode (``left_at`` on a person, ``closed_at`` on a place), so it ends the entity's facts
whatever the order they arrive in: the facts stated before it (a team page naming the person
as lead) and those a later batch adds that started before it (a stale page read later).

- A person who left no longer holds the facts of their job (:data:`PERSON_FACTS`: employer,
  manager, teams, what they lead, manage, own or maintain, their office), nor manages anyone
  (the ``REPORTS_TO`` facts pointing at them). Facts of other people stay.
- A closed office no longer hosts the people and teams located in it (``LOCATED_IN`` facts of
  a person or a team pointing at the place); a company or a vendor "in" that city stays.

Only open facts that started on or before the end (or whose start is unknown) are ended; a
fact that starts after it (a re-hire, a reopened office) stays open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime

from knotwork.domain.models import Entity, EntityType, Fact, PropertyValue, RelationType
from knotwork.domain.timeutil import ensure_utc, to_iso
from knotwork.ingestion.extraction.departure import CLOSURE, DEPARTURE

R = RelationType
LEFT_AT = "left_at"
CLOSED_AT = "closed_at"
PROPERTY_OF = {DEPARTURE: LEFT_AT, CLOSURE: CLOSED_AT}

# the facts of a person's job that end when they leave (source side)
PERSON_FACTS = frozenset({R.WORKS_AT, R.REPORTS_TO, R.MEMBER_OF, R.LEADS, R.MANAGES, R.OWNS,
                          R.MAINTAINS, R.LOCATED_IN})
# … and the facts pointing at them that end too (their reports no longer report to them)
PERSON_TARGET_FACTS = frozenset({R.REPORTS_TO})
_STATED, _GUESSED = 1.0, 0.5  # property confidence: the sentence gave the date / the document's


def with_end(entity: Entity, kind: str, at: datetime, stated: bool, episode_id: str) -> Entity:
    """``entity`` carrying the end event (one value per source episode)."""
    key = PROPERTY_OF[kind]
    values = [v for v in entity.properties.get(key, []) if v.source != episode_id]
    values.append(PropertyValue(value=to_iso(at) or "", source=episode_id,
                                confidence=_STATED if stated else _GUESSED))
    values.sort(key=lambda v: (v.value, v.source))
    return entity.model_copy(update={"properties": {**entity.properties, key: values}})


def end_of(entity: Entity, key: str) -> datetime | None:
    """The end an entity's events give: the latest date a sentence stated, else the earliest
    document time of a sentence that stated the event without a date."""
    values = entity.properties.get(key, [])
    stated = [v.value for v in values if v.confidence >= _STATED and v.value]
    guessed = [v.value for v in values if v.confidence < _STATED and v.value]
    chosen = max(stated) if stated else (min(guessed) if guessed else None)
    return ensure_utc(datetime.fromisoformat(chosen)) if chosen else None


def ends_of(entities: Iterable[Entity]) -> dict[str, tuple[str, datetime]]:
    """entity id -> (property, end) for the entities that carry an end event."""
    out: dict[str, tuple[str, datetime]] = {}
    for e in entities:
        for key in (LEFT_AT, CLOSED_AT):
            at = end_of(e, key)
            if at is not None:
                out[e.id] = (key, at)
                break
    return out


Kind = Callable[[str], tuple[EntityType, str | None] | None]


def ended_facts(facts: Iterable[Fact], ends: Mapping[str, tuple[str, datetime]], kind: Kind,
                now: datetime) -> list[Fact]:
    """The open facts the end events end, with ``invalid_at`` set to the event's day."""
    out: dict[str, Fact] = {}
    for fact in facts:
        if fact.invalid_at is not None or fact.id in out:
            continue
        at = _end_for(fact, ends, kind)
        if at is None or (fact.valid_at is not None and fact.valid_at > at):
            continue
        out[fact.id] = fact.model_copy(update={"invalid_at": at, "expired_at": now})
    return list(out.values())


def _end_for(fact: Fact, ends: Mapping[str, tuple[str, datetime]], kind: Kind) -> datetime | None:
    found: list[datetime] = []
    source, target = ends.get(fact.source_id), ends.get(fact.target_id)
    if source is not None and source[0] == LEFT_AT and fact.type in PERSON_FACTS:
        found.append(source[1])
    if target is not None and target[0] == LEFT_AT and fact.type in PERSON_TARGET_FACTS:
        found.append(target[1])
    if target is not None and target[0] == CLOSED_AT and fact.type is R.LOCATED_IN:
        holder = kind(fact.source_id)
        if holder is not None and (holder[0] is EntityType.PERSON or holder[1] == "TEAM"):
            found.append(target[1])
    return min(found) if found else None


__all__ = ["CLOSED_AT", "LEFT_AT", "PERSON_FACTS", "PERSON_TARGET_FACTS", "end_of",
           "ended_facts", "ends_of", "with_end"]
