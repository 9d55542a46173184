"""Walking-skeleton resolver: exact normalised name or alias, plus unique given name.

Pure logic over candidates fetched by key; the full blocking + scoring resolver
replaces the decision function, not the callers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from knotwork.domain.models import Entity, EntityType
from knotwork.ingestion.extraction.lexicon import COMPANY_SUFFIXES, FUNCTION_WORDS, VENDOR_PREFIXES
from knotwork.resolution.name_forms import has_non_person_word
from knotwork.resolution.names import formal_names
from knotwork.resolution.normalize import first_name_key

_COMPANY_WORDS = frozenset(s.lower().rstrip(".") for s in COMPANY_SUFFIXES) - {"group", "bank"}
# what a company's name says it does, after the word that is its own
_DESCRIPTORS = _COMPANY_WORDS | frozenset(
    ["payments", "pay", "health", "healthcare", "clinical", "medical", "financial", "finance", "insurance", "logistics", "freight", "energy", "media", "pharma", "pharmaceuticals", "biotech", "bio", "digital", "cloud", "security", "consulting", "retail", "foods", "motors", "airlines", "telecom", "communications", "bank", "banking", "capital", "ventures", "markets", "trading", "mobility", "robotics"])
# words too common to name a company on their own ("Global Payments" is no "global")
_GENERIC = frozenset(
    ["global", "united", "general", "national", "international", "american", "european", "british", "first", "premier", "prime", "standard", "modern", "smart", "green", "royal", "pacific", "atlantic", "northern", "southern", "eastern", "western", "central", "metro", "allied", "advanced", "applied", "integrated"])


@dataclass(frozen=True, slots=True)
class Resolution:
    entity: Entity | None  # None: a new entity
    confidence: float
    alternatives: tuple[tuple[Entity, float], ...] = ()


def _variants(key: str, etype: EntityType) -> list[str]:
    """Other spellings that name the same thing: 'apache kafka' → 'kafka',
    'northwind robotics' → 'northwind'."""
    out: list[str] = []
    if etype is EntityType.TECHNOLOGY:
        out += [key.removeprefix(p) for p in VENDOR_PREFIXES if key.startswith(p)]
    if etype is EntityType.ORGANIZATION:
        words = key.split()
        if len(words) >= 2 and words[-1] in _COMPANY_WORDS:
            out.append(" ".join(words[:-1]))
        # "Meridale Clinical Systems", "Quillmark Payments": the company's own word alone
        while len(words) >= 2 and words[-1] in _DESCRIPTORS:
            words = words[:-1]
        if len(words) == 1 and len(words[0]) >= 5 and words[0] not in _DESCRIPTORS \
                and words[0] not in FUNCTION_WORDS and words[0] not in _GENERIC:
            out.append(words[0])
    out = [v for v in out if len(v) >= 3]
    if etype is EntityType.ORGANIZATION:
        out += team_keys(key)
    return out


# words after a group's name that do not change which group it is: "Routing", "the Routing
# team", "Routing Team" and "the Routing squad" are one team. A guild, tribe, chapter or
# department named alike is another body ("Platform Guild" is not the "Platform Team"), and
# an office, board or committee is no team at all
_TEAM_WORDS = frozenset({"team", "squad", "group", "crew", "unit"})
_BODY_WORDS = frozenset({"guild", "tribe", "chapter", "department", "division"})


def team_keys(key: str) -> list[str]:
    """An organisation's name without its team word, as a ``team:`` key (a guild's as
    ``guild:`` …). Only organisations carry these keys, so a team never resolves into the
    system or project it is named after ("Data Platform team" is not the "Data Platform"), and
    the key matches no question text."""
    words = key.split()
    if words and words[-1].rstrip(".") in _COMPANY_WORDS:
        return []  # "Acme Corp" is a company, never a team's name
    kind = "team"
    if len(words) >= 2 and (words[-1] in _TEAM_WORDS or words[-1] in _BODY_WORDS):
        kind = "team" if words[-1] in _TEAM_WORDS else words[-1]
        words = words[:-1]
    if len(words) >= 2 and words[0] == "team" and kind == "team":
        words = words[1:]  # "Team Falcon" is the "Falcon team"
    core = " ".join(words)
    if len(core) < 2 or core in _TEAM_WORDS or core in _BODY_WORDS:
        return []
    return [f"{kind}:{core}"]


def lookup_keys(key: str, etype: EntityType) -> list[str]:
    keys = [key, *_variants(key, etype)]
    if etype is EntityType.PERSON and " " not in key:
        keys += [f"first:{name}" for name in formal_names(key)]  # Becky: first:rebecca too
    return keys


def entity_keys(name_key: str, aliases: Iterable[str], etype: EntityType) -> list[str]:
    """The keys stored on an entity: its name, its aliases, and (people) its given name."""
    keys = [name_key, *aliases]
    if etype is EntityType.PERSON and not has_non_person_word(name_key):
        first = first_name_key(name_key)  # not "falcon" of "Falcon Migration" typed a person
        if first:
            keys.append(first)
    if etype in (EntityType.PRODUCT, EntityType.CONCEPT) and name_key.startswith("project "):
        keys.append(name_key.removeprefix("project "))
    keys += _variants(name_key, etype)
    if etype is EntityType.ORGANIZATION:  # "WI" names the team as "Warehouse Integrations" does
        keys += [k for alias in aliases for k in team_keys(alias)]
    return list(dict.fromkeys(k for k in keys if k))


def resolve(key: str, etype: EntityType, candidates: Sequence[Entity]) -> Resolution:
    person = etype is EntityType.PERSON
    keys = [k for k in lookup_keys(key, etype) if not k.startswith("first:")]
    exact = sorted(
        (c for c in candidates if (c.type is EntityType.PERSON) == person
         and any(k in c.name_keys for k in keys)),
        key=lambda c: key not in c.name_keys,  # the name itself before a variant of it
    )
    if exact:
        same_type = [c for c in exact if c.type is etype]
        best = (same_type or exact)[0]
        rest = tuple((c, 0.9) for c in exact if c.id != best.id)
        return Resolution(best, 1.0 if best.type is etype else 0.9, rest)
    if etype is EntityType.PERSON and " " not in key:
        people = [c for c in candidates if c.type is EntityType.PERSON and f"first:{key}" in c.name_keys]
        if len(people) == 1:
            return Resolution(people[0], 0.8)
        if people:
            return Resolution(None, 0.5, tuple((p, 0.5) for p in people))
    return Resolution(None, 1.0)
