"""A lone given name ("Diana", "Becky") read in its context.

Chat and meeting notes call people by their given name. Name scoring alone cannot tie "Diana"
to "Diana Rao" (one token against two), and a tenant may hold several Dianas. The context
usually can: the same document names "Diana Rao" (a speaker of the thread, the page's
owner, an earlier sentence). Rules, in order:

1. exactly one person of the document's context carries the given name (or a formal name
   the nickname stands for: Becky → Rebecca) → that person;
2. otherwise, when nobody in the context does, exactly one person of the tenant does → that
   person, with a lower confidence;
3. otherwise no pick: the resolver's own decision stands (a new, flagged entity when tied).

Pure: the caller supplies the known people and the names in context.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from knotwork.domain.models import Entity, EntityType
from knotwork.resolution.names import formal_names
from knotwork.resolution.normalize import normalize_name

IN_CONTEXT_CONFIDENCE = 0.85
UNIQUE_IN_TENANT_CONFIDENCE = 0.7


@dataclass(frozen=True, slots=True)
class GivenNamePick:
    entity: Entity
    confidence: float
    reason: str


def is_lone_given_name(key: str, etype: EntityType) -> bool:
    """A one-word person name of at least two letters ("diana", not "d" or "diana rao")."""
    return etype is EntityType.PERSON and " " not in key and len(key) >= 2 and key.isalpha()


def given_name_keys(key: str) -> set[str]:
    """The ``first:`` keys of full names a lone given name may stand for."""
    return {f"first:{name}" for name in formal_names(key)}


def _full_name_people(people: Iterable[Entity], keys: set[str]) -> list[Entity]:
    out: dict[str, Entity] = {}
    for person in people:
        if person.type is EntityType.PERSON and " " in person.canonical_name \
                and keys & set(person.name_keys):
            out.setdefault(person.id, person)
    return list(out.values())


def pick_person(key: str, people: Iterable[Entity], context_names: set[str]) -> GivenNamePick | None:
    """The full-name person a lone given name ``key`` (normalised) most likely means.

    ``people``: the persons known to the caller (stored candidates and this batch's);
    ``context_names``: normalised full names of people mentioned in the same document.
    """
    candidates = _full_name_people(people, given_name_keys(key))
    if not candidates:
        return None
    in_context = [p for p in candidates
                  if p.canonical_name in context_names
                  or any(normalize_name(a) in context_names for a in p.aliases)]
    if len(in_context) == 1:
        return GivenNamePick(in_context[0], IN_CONTEXT_CONFIDENCE,
                             "the only person with this given name in the document")
    if not in_context and len(candidates) == 1:
        return GivenNamePick(candidates[0], UNIQUE_IN_TENANT_CONFIDENCE,
                             "the only person with this given name")
    return None
