"""Name forms for entity consolidation: folding, qualifiers (legal forms, team and site words,
"Project"), full person names, initials and nickname tables. Data and pure functions.

The word lists are named data; :func:`compatible` says which qualified forms of one core name
(X, X team, X GmbH, Project X, X HQ) may name one thing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from knotwork.domain.models import Entity, EntityType
from knotwork.resolution.names import formal_names
from knotwork.resolution.normalize import normalize_name


class NickNamerLike(Protocol):
    def canonicals_of(self, name: str) -> set[str]: ...



LEGAL_FORMS: frozenset[str] = frozenset(
    {"gmbh", "ag", "sa", "s.a", "s a", "inc", "ltd", "llc", "plc", "bv", "b.v", "nv", "corp",
     "corporation", "limited", "co", "kg", "se", "srl", "sas", "oy", "ab", "as", "pty", "spa",
     "sarl", "lda", "sp z o.o", "kft", "ooo"})
# last words that make a name a company's ("Bramble Hill Studios"): its leading words are its
# short name when exactly one company has them
COMPANY_WORDS: frozenset[str] = frozenset(
    {"studios", "studio", "games", "entertainment", "publishing", "media", "labs", "group",
     "holdings", "technologies", "systems", "solutions", "software", "ventures", "partners",
     "industries", "networks", "analytics", "bank", "capital", "robotics", "cloud", "services"})
TEAM_WORDS: frozenset[str] = frozenset(
    {"team", "teams", "squad", "division", "department", "dept", "group", "guild", "tribe",
     "crew", "unit", "org"})
SITE_WORDS: frozenset[str] = frozenset({"hq", "headquarters", "office", "campus"})
LEADING_QUALIFIERS: frozenset[str] = frozenset({"project", "the", "team"})
ACRONYM_SKIP = frozenset({"of", "and", "the", "for", "in", "on", "to", "a", "an", "de", "und"})
_GERMAN = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue"})
_NON_WORD = re.compile(r"[^a-z0-9]+")
ACRONYM = re.compile(r"^[A-Z][A-Z&/.]{1,5}$")


WordTest = Callable[[str], bool]


def no_words(word: str) -> bool:
    """The word test without a vocabulary: nothing counts as a common word."""
    return False


@lru_cache(maxsize=1 << 15)
def compact(form: str) -> str:
    return _NON_WORD.sub("", normalize_name(form))


def folded_keys(form: str) -> set[str]:
    """Spacing-, punctuation- and accent-insensitive keys of one name (two transliterations)."""
    keys = {compact(form), compact(form.translate(_GERMAN))}
    return {k for k in keys if len(k) >= 2}


def name_tokens(form: str) -> list[str]:
    return normalize_name(form.replace("-", " ")).replace(".", " ").split()


def qualified(form: str) -> tuple[str, str]:
    """The core of a name and its marker: bare, team (X team, Team X), legal (X GmbH) or
    project (Project X)."""
    words = normalize_name(form).replace(" and ", " ").split()
    kind = "bare"
    if len(words) > 2 and words[-2:] == ["s", "a"]:
        words, kind = words[:-2], "legal"
    while len(words) > 1 and words[-1].rstrip(".") in LEGAL_FORMS:
        words, kind = words[:-1], "legal"
    while len(words) > 1 and words[-1] in TEAM_WORDS:
        words, kind = words[:-1], "team"
    if len(words) > 1 and words[-1] in SITE_WORDS:
        words, kind = words[:-1], "site"
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    if len(words) > 1 and words[0] in ("team", "project"):
        kind = "team" if words[0] == "team" else "project"
        words = words[1:]
    return "".join(words), kind


def compatible(kind: str, other: str, bare: Entity, is_word: WordTest) -> bool:
    """Whether "X" with one marker and "X" with another name one thing: a team is not the
    project or company of the same name; a bare invented name next to "X team" is mostly the
    product the team builds, a bare word or acronym ("Glassworks", "QA") the team itself."""
    if kind == other:
        return kind != "bare"
    pair = {kind, other}
    if pair in ({"bare", "legal"}, {"bare", "project"}):
        return True
    if pair == {"bare", "site"}:  # "Berlin HQ" is Berlin
        return bare.type is EntityType.LOCATION
    if pair == {"bare", "team"} and bare.type is not EntityType.LOCATION:  # a city, its team
        words = normalize_name(bare.name).split()
        return bare.name.isupper() or all(is_word(w) for w in words)
    return False


def has_legal_form(form: str) -> bool:
    words = normalize_name(form).split()
    return len(words) >= 2 and (words[-1].rstrip(".") in LEGAL_FORMS
                                or " ".join(words[-2:]) in LEGAL_FORMS)


def forms_of(e: Entity) -> list[str]:
    return [f for f in dict.fromkeys([e.name, *e.aliases]) if f and not f.startswith("@")]


@dataclass
class FullName:
    """A full person name: given tokens (all but the last) and the surname."""

    given: tuple[str, ...]
    surname: str


# words that make a capitalised pair a place, a team or a company rather than a person
NOT_PERSON_WORDS: frozenset[str] = frozenset(
    {"hq", "qa", "ops", "office", "offices", "studio", "studios", "art", "lab", "labs", "cloud",
     "services", "service", "bank", "payments", "capital", "games", "retail", "mobility",
     "identity", "processing", "systems", "solutions", "partners", "ventures", "holdings",
     "platform", "engineering", "operations", "support", "success", "culture", "release",
     "center", "centre", "campus", "region", "street", "avenue", "road", "square",
     # the work a name's owner does: "<X> Migration", "<X> Support" name an effort or a unit
     "migration", "rollout", "upgrade", "rewrite", "refactor", "launch", "onboarding",
     "offboarding", "kickoff", "programme", "program", "project", "initiative", "roadmap",
     "retro", "retrospective", "postmortem", "playtest", "sprint", "standup", "review",
     "planning", "status", "charter", "proposal", "deployment", "cutover", "backfill", "liveops",
     "devops", "secops", "finops", "sre", "it", "hr", "pr", "ui", "ux", "api", "sdk"})


def has_non_person_word(form: str) -> bool:
    """A word of the name (or of a hyphenated part) says it is no person's ("Falcon Migration",
    "Atlas Support", "Harbor Office"): its first word is then no given name either."""
    return any(w in NOT_PERSON_WORDS or w in TEAM_WORDS for w in normalize_name(form).split())
_NAME_WORD = re.compile(r"^[^\W\d_][^\W\d_'’.-]*(?:[-'’][^\W\d_]+)*\.?$")


def full_name(form: str) -> FullName | None:
    """Given names and surname of a capitalised, purely alphabetic full name; else None."""
    words = form.split()
    if len(words) < 2 or not all(_NAME_WORD.match(w) and w[0].isupper() and not (
            len(w) > 1 and w.isupper()) for w in words):
        return None
    toks = [normalize_name(w).replace(" ", "-") for w in words]  # "Min-ji": one given name
    toks = [t for t in toks if t]
    if len(toks) < 2 or any(len(t) == 1 for t in toks) or has_non_person_word(form) or any(
            t in LEGAL_FORMS for t in toks):
        return None
    return FullName(tuple(toks[:-1]), toks[-1])


def is_full_person(e: Entity) -> bool:
    """A person entity one of whose names is a full name ("Ivo" known as "Ivo Rendl")."""
    return e.type is EntityType.PERSON and any(full_name(f) is not None for f in forms_of(e))



def nickname_formals(token: str) -> set[str]:
    """Formal given names a short form stands for (NICKNAME_GROUPS and the nicknames package)."""
    out = set(formal_names(token)) | set(_package_formals(token))
    out.discard(token)
    return out


@lru_cache(maxsize=4096)
def _package_formals(token: str) -> frozenset[str]:
    """Formal given names the ``nicknames`` package's table gives for a short form."""
    try:
        from nicknames import NickNamer
    except ImportError:  # pragma: no cover - without the package only NICKNAME_GROUPS count
        return frozenset()
    return frozenset(_nicknamer(NickNamer).canonicals_of(token))


@lru_cache(maxsize=1)
def _nicknamer(cls: type) -> NickNamerLike:
    namer: NickNamerLike = cls()
    return namer


def initials_of(form: str) -> set[str]:
    """Initials of a multi-word name, with and without its legal form / team word."""
    words = [w for w in normalize_name(form.replace("-", " ")).split() if w not in ACRONYM_SKIP]
    out: set[str] = set()
    while len(words) >= 2:
        out.add("".join(w[0] for w in words))
        if words[-1].rstrip(".") in LEGAL_FORMS or words[-1] in TEAM_WORDS:
            words = words[:-1]
        else:
            break
    return out
