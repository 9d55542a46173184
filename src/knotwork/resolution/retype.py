"""Entity types decided by the evidence of all of an entity's names and mentions, not by the
first mention that created it (run after each consolidation, so after merges too).

An entity is created with the type its first chunk voted; later chunks find it by name (the
``known`` extractor repeats that type), so one statistical guess ("a lone given name is a
place", "a two-word company is a person", "an acronym is an organisation") used to stick.
This pass weighs, for every entity, the cues of :data:`CUES` found in all its names (the
name, its aliases, the expansion of an acronym), in the other entities of the tenant (a name
part of a known person) and in the extractors of its mentions (a Slack author or user-table
row is a person) against its current type, and moves it when the cues outweigh it.

The cues are data: each has a weight and a hit rate measured on the development corpora
(``bench/type_cues.py`` prints each cue's precision per corpus).
:func:`decide_types` is pure; :func:`retype` applies it to a tenant's graph.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

from knotwork.domain.models import Entity, EntityType
from knotwork.ingestion.extraction.given_names import is_given_name
from knotwork.ingestion.extraction.lexicon import TECHNOLOGIES
from knotwork.resolution.form_match import abbreviates
from knotwork.resolution.name_forms import (
    ACRONYM,
    COMPANY_WORDS,
    LEGAL_FORMS,
    TEAM_WORDS,
    WordTest,
    full_name,
    name_tokens,
    no_words,
)
from knotwork.resolution.normalize import normalize_name

if TYPE_CHECKING:
    from knotwork.runtime import Runtime

E = EntityType


@dataclass(frozen=True, slots=True)
class Cue:
    """One kind of type evidence: ``weight`` is what one firing adds to its type's score."""

    name: str
    weight: float
    describes: str


# The cues, as data (weights: the current type counts PRIOR; a cue moves an entity only when
# its weight, with the other cues of that type, is more than the current type's score).
PRIOR = 1.0
CUES: Mapping[str, Cue] = {c.name: c for c in (
    Cue("head_word", 2.0, "the last word of a name states a kind: 'X Conference' an event, "
                          "'X Migration' an undertaking, 'X Act' a rule, 'X team' an organisation"),
    Cue("lead_word", 1.5, "a leading word states a kind: 'Project X', 'Operation X'"),
    Cue("legal_form", 2.5, "a name or alias ends in a legal form or company word (GmbH, Studios)"),
    Cue("incident_code", 2.0, "an incident identifier (INC-12) is an event"),
    Cue("gazetteer", 3.0, "a name or alias is in the curated technology list"),
    Cue("inner_caps", 1.5, "one word with capitals inside (a software name's shape: two "
                           "capitals and a small letter, not a plural acronym); never a person"),
    Cue("version", 1.5, "a name ending in a dotted version number ('X 4.2') is a technology"),
    Cue("org_kin", 1.5, "a 'person' whose first word is the first word of an organisation of the "
                        "tenant, and none of whose words is a given name or a part of a known "
                        "person's name (family name first: 'Okoro Tamsin'), is that "
                        "organisation's kin"),
    Cue("expansion", 1.5, "an acronym whose spelled-out form is made of common words "
                          "(a defined term) is a concept"),
    Cue("person_part", 1.5, "a one-word name that is a given name or surname of exactly one "
                            "person of the tenant (written with or without hyphen)"),
    Cue("speaker", 3.0, "a chat author or a user-table row names a person"),
    Cue("project_subtype", 1.5, "an entity an extractor called a project is an undertaking"),
)}

# last words of a name and the kind they state
HEAD_WORDS: Mapping[str, EntityType] = {
    **{w: E.EVENT for w in (
        "conference", "summit", "hackathon", "jam", "expo", "festival", "convention", "meetup",
        "offsite", "retreat", "playtest", "outage", "incident", "assessment", "certification",
        "audit", "webinar", "workshop", "symposium", "fair", "showcase")},
    **{w: E.CONCEPT for w in (
        "programme", "program", "initiative", "migration", "rollout", "roll-out", "refresh",
        "rewrite", "overhaul", "switch", "port", "upgrade", "transformation", "act",
        "regulation", "directive", "standard", "checklist", "requirements", "methodology")},
    **{w: E.ORGANIZATION for w in TEAM_WORDS},
}
# first words of a name and the kind they state
LEAD_WORDS: Mapping[str, EntityType] = {w: E.CONCEPT for w in (
    "project", "operation", "initiative", "programme", "program")}
INCIDENT_CODE = re.compile(r"^(?:INC|INCIDENT|OUTAGE)-\d", re.IGNORECASE)  # not SEV-1: a level
INNER_CAPS = re.compile(r"^(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z][A-Za-z0-9]*[A-Z])"
                        r"(?![A-Z]+s$)[A-Za-z][A-Za-z0-9]+$")
VERSION = re.compile(r"\s\d+(?:\.\d+)+$")
SPEAKER_EXTRACTORS = frozenset({"speaker", "user"})
# kinds a name-part of a person can be mistaken for (a person is never re-typed away by it,
# nor an organisation: a company often carries its founder's name)
_PART_FROM = frozenset({E.LOCATION, E.PRODUCT, E.CONCEPT})


def _forms(e: Entity) -> list[str]:
    return [f for f in dict.fromkeys([e.name, *e.aliases]) if f and not f.startswith("@")]


def _words(form: str) -> list[str]:
    return normalize_name(form).split()


def head_kind(form: str) -> tuple[str, EntityType] | None:
    """The cue and kind the name's own words state: a legal form or company word, else its
    head (last) word, else a leading word."""
    words = _words(form)
    if len(words) < 2:
        return None
    if words[-1].rstrip(".") in LEGAL_FORMS or " ".join(words[-2:]) in LEGAL_FORMS \
            or words[-1] in COMPANY_WORDS:
        return "legal_form", E.ORGANIZATION
    if words[-1] in HEAD_WORDS:
        return "head_word", HEAD_WORDS[words[-1]]
    if words[0] in LEAD_WORDS:
        return "lead_word", LEAD_WORDS[words[0]]
    return None


def _expansions(e: Entity) -> list[str]:
    """The spelled-out forms of an acronym entity among its own aliases."""
    if not ACRONYM.match(e.name.strip()):
        return []
    return [a for a in e.aliases if a != e.name and abbreviates(e.name, a)]


def _person_parts(entities: Sequence[Entity]) -> dict[str, set[frozenset[str]]]:
    """Name part (spacing- and hyphen-insensitive) -> the people whose full name has it, each
    as the tokens of its full names ("Ana Lucia" and "Ana Lucia Ferro", twins, are one)."""
    found: dict[str, set[frozenset[str]]] = defaultdict(set)
    for e in entities:
        if e.type is not E.PERSON:
            continue
        names = [name_tokens(f) for f in _forms(e) if full_name(f) is not None]
        if not names:
            continue
        person = frozenset(t for toks in names for t in toks)
        for toks in names:
            for t in toks:
                if len(t) >= 3:
                    found[t].add(person)
            for a, b in pairwise(toks):  # "Min-ji" written "Minji"
                found[a + b].add(person)
    return {part: _distinct(people) for part, people in found.items()}


def org_heads(entities: Sequence[Entity]) -> frozenset[str]:
    """The first words of the tenant's organisations' names."""
    return frozenset(w[0] for e in entities if e.type is E.ORGANIZATION
                     for w in (_words(f) for f in _forms(e)) if w)


def _distinct(people: set[frozenset[str]]) -> set[frozenset[str]]:
    """The people less those whose name tokens are all in another's (a shorter twin)."""
    return {p for p in people if not any(p < q for q in people)}


def evidence(e: Entity, parts: Mapping[str, set[frozenset[str]]], extractors: Mapping[str, int],
             is_word: WordTest = no_words, org_heads: frozenset[str] = frozenset()
             ) -> list[tuple[str, EntityType]]:
    """The cues that fire for one entity: (cue name, the type it votes for)."""
    fired: list[tuple[str, EntityType]] = []
    stated = {k for k in (head_kind(f) for f in _forms(e)) if k is not None}
    kinds = {kind for _, kind in stated}
    if len(kinds) == 1:  # names that disagree state nothing
        cue = next(c for c in ("legal_form", "head_word", "lead_word") if any(c == s for s, _ in stated))
        fired.append((cue, next(iter(kinds))))
    if any(f in TECHNOLOGIES for f in _forms(e)):
        fired.append(("gazetteer", E.TECHNOLOGY))
    if e.type is not E.PERSON and (INNER_CAPS.match(e.name.strip()) or VERSION.search(e.name)):
        fired.append(("inner_caps" if INNER_CAPS.match(e.name.strip()) else "version", E.TECHNOLOGY))
    if INCIDENT_CODE.match(e.name):
        fired.append(("incident_code", E.EVENT))
    if not kinds and not any(c == "gazetteer" for c, _ in fired):
        for exp in _expansions(e):
            words = _words(exp.replace("-", " "))
            if words and all(is_word(w) for w in words):
                fired.append(("expansion", E.CONCEPT))
                break
    if e.subtype == "PROJECT" and kinds <= {E.CONCEPT}:
        fired.append(("project_subtype", E.CONCEPT))
    if " " not in e.name.strip() and e.type in _PART_FROM:
        key = re.sub(r"[^a-z0-9]", "", normalize_name(e.name))
        if len(parts.get(key, ())) == 1:
            fired.append(("person_part", E.PERSON))
    speaker = any(n > 0 for x, n in extractors.items() if x in SPEAKER_EXTRACTORS)
    if speaker:
        fired.append(("speaker", E.PERSON))
    words = _words(e.name)
    if e.type is E.PERSON and not speaker and len(words) >= 2 and words[0] in org_heads \
            and not any(is_given_name(w) or w in parts for w in name_tokens(e.name)):
        fired.append(("org_kin", E.ORGANIZATION))
    return fired


def decide(e: Entity, fired: Sequence[tuple[str, EntityType]]) -> EntityType:
    scores: dict[EntityType, float] = defaultdict(float)
    scores[e.type] += PRIOR
    for cue, kind in fired:
        scores[kind] += CUES[cue].weight
    best = max(scores, key=lambda t: (scores[t], t is e.type))
    return best


def decide_types(entities: Sequence[Entity],
                 extractors: Mapping[str, Mapping[str, int]] | None = None,
                 is_word: WordTest = no_words) -> dict[str, tuple[EntityType, list[str]]]:
    """Entity id -> (new type, the cues that moved it), for the entities whose type changes."""
    parts = _person_parts(entities)
    heads = org_heads(entities)
    out: dict[str, tuple[EntityType, list[str]]] = {}
    for e in entities:
        fired = evidence(e, parts, (extractors or {}).get(e.id, {}), is_word, heads)
        if not fired:
            continue
        kind = decide(e, fired)
        if kind is not e.type:
            out[e.id] = (kind, sorted({c for c, k in fired if k is kind}))
    return out


def retyped(e: Entity, kind: EntityType) -> Entity:
    """The entity with its new type (a subtype of another kind is dropped; a project stays one)."""
    keep = e.subtype if (e.subtype == "PROJECT" and kind is E.CONCEPT) else None
    return e.model_copy(update={"type": kind, "subtype": keep})




def retype(rt: Runtime, group_id: str, is_word: WordTest = no_words) -> int:
    """Re-decide the types of a tenant's entities from all their evidence; how many changed."""
    from knotwork.resolution.service import resolution_sql

    entities = rt.graph.list_entities(group_id)
    sql = resolution_sql(rt)
    counts = sql.mention_extractors(group_id, [e.id for e in entities]) if sql is not None else {}
    moves = decide_types(entities, counts, is_word)
    if moves:
        rt.graph.upsert_entities([retyped(e, moves[e.id][0]) for e in entities if e.id in moves])
    return len(moves)
