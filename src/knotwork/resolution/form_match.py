"""Name-form rules as data: each rule maps a name to a *form key*; two names of one kind that
share a form key are candidates for one entity (blocking finds them by index lookup, the
consolidation pass and the resolver decide).

:data:`FORM_RULES` is the table (name, key prefix, description, key function, the entity
types it applies to). ``bench/name_forms.py`` prints each rule's hit rate and precision on
the development corpora's truth.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from knotwork.domain.models import EntityType
from knotwork.resolution.name_forms import (
    ACRONYM,
    ACRONYM_SKIP,
    LEGAL_FORMS,
    TEAM_WORDS,
    compact,
    full_name,
    nickname_formals,
)
from knotwork.resolution.normalize import normalize_name, strip_accents

_P = EntityType.PERSON
_NOT_PERSON = frozenset(t for t in EntityType if t is not EntityType.PERSON)
_ALL = frozenset(EntityType)
# leading and trailing words that qualify a name without changing what it names
QUALIFIER_WORDS: frozenset[str] = LEGAL_FORMS | frozenset({"the", "project", "programme",
                                                             "program", "initiative"})
_GERMAN = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue"})
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True, slots=True)
class FormRule:
    name: str
    prefix: str  # the blocking-key prefix
    description: str
    keys: Callable[[str], tuple[str, ...]]  # display name -> its form keys (often one, or none)
    types: frozenset[EntityType]


def compact_forms(name: str) -> tuple[str, ...]:
    """Spacing-, punctuation-, case- and accent-insensitive: "Biz Ops"/"BizOps", "SOC2"/
    "SOC 2"; with German umlauts also written out ("Krüger"/"Krueger")."""
    keys = dict.fromkeys((compact(name), compact(name.translate(_GERMAN))))
    return tuple(k for k in keys if len(k) >= 3)


def qualifier_stripped(name: str) -> str | None:
    """The name without a legal form or a "the"/"Project" qualifier ("Acme GmbH"/"Acme",
    "Project Falcon"/"Falcon"); only names that had such a word."""
    words = _WORD.findall(normalize_name(name).replace(" s.a", " sa"))
    core = list(words)
    while len(core) > 1 and core[-1] in QUALIFIER_WORDS:
        core.pop()
    while len(core) > 1 and core[0] in QUALIFIER_WORDS:
        core.pop(0)
    if core == words:
        return None
    joined = "".join(core)
    return joined if len(joined) >= 3 else None


def acronym_form(name: str) -> tuple[str, ...]:
    """An acronym as written ("QLM", "P&L") or the initials of a multi-word name ("Quayside
    Lift Motors GmbH" → qlmg and qlm: with and without its legal form or team word)."""
    raw = name.strip()
    if ACRONYM.match(raw):
        letters = re.sub(r"[^a-z]", "", raw.lower())
        return (letters,) if len(letters) >= 2 else ()
    parts = camel_parts(raw)
    if len(parts) >= 2:  # "GeoData": the initials of its clipped words
        return ("".join(p[0] for p in parts),)
    words = [w for w in _WORD.findall(normalize_name(name.replace("-", " ")))
             if w not in ACRONYM_SKIP]
    out: list[str] = []
    while len(words) >= 2 and all(w[0].isalpha() for w in words):
        out.append("".join(w[0] for w in words))
        if words[-1] not in LEGAL_FORMS and words[-1] not in TEAM_WORDS:
            break
        words = words[:-1]
    return tuple(out)


_CAMEL = re.compile(r"[A-Z][a-z]+")


def camel_parts(name: str) -> list[str]:
    """The parts of one camel-case word ("GeoData" → geo, data); else nothing."""
    if " " in name or not re.fullmatch(r"(?:[A-Z][a-z]+){2,4}", name):
        return []
    return [p.lower() for p in _CAMEL.findall(name)]


def _core_words(name: str) -> list[str]:
    words = [w for w in _WORD.findall(normalize_name(name.replace("-", " ")))
             if w not in ACRONYM_SKIP]
    while len(words) > 1 and (words[-1] in LEGAL_FORMS or words[-1] in TEAM_WORDS):
        words.pop()
    return words


# the last part of a deployed component's kebab-case name that names its role, not its
# product: "billing-svc", "billing-db" and "billing-worker" are all of "Billing"
SERVICE_SUFFIXES: frozenset[str] = frozenset(
    {"svc", "srv", "service", "server", "api", "db", "database", "worker", "workers", "job",
     "jobs", "cron", "daemon", "scorer", "consumer", "producer", "proxy", "ui", "web", "app"})
_KEBAB = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+")


def service_core(name: str) -> str | None:
    """The product a lower-case kebab-case component name is of ("billing-svc" → billing);
    None for any other name."""
    raw = name.strip()
    if not _KEBAB.fullmatch(raw):
        return None
    parts = raw.split("-")
    if parts[-1] not in SERVICE_SUFFIXES:
        return None
    core = "-".join(parts[:-1])
    return core if len(core) >= 3 else None


def abbreviates(short: str, full: str) -> bool:
    """``short`` is an acronym of ``full``'s words ("P&L" of "Planning & Logistics") or a
    camel-case clipping of them ("GeoData" of "Geographic Data"), legal form and team word
    aside."""
    words = _core_words(full)
    if len(words) < 2:
        return False
    raw = short.strip()
    head, _, last = raw.rpartition(" ")
    if head and last.lower() in TEAM_WORDS:  # "DP team" of "Data Platform (team)"
        raw = head.strip()
    if ACRONYM.match(raw):
        letters = re.sub(r"[^a-z]", "", raw.lower())
        return len(letters) >= 2 and letters == "".join(w[0] for w in words)
    parts = camel_parts(raw)
    return len(parts) == len(words) and all(
        len(p) >= 3 and _clips(p, w) for p, w in zip(parts, words, strict=True))


def _clips(part: str, word: str) -> bool:
    """``part`` is ``word`` shortened: its first letter, then its letters in order ("ops" of
    operations, "fin" of financial)."""
    if not word.startswith(part[0]):
        return False
    rest = iter(word[1:])
    return all(c in rest for c in part[1:])


def given_prefixes(name: str) -> tuple[str, ...]:
    """A lone short given name (3-5 letters), or the 3-5 letter prefixes of a person's given
    name: "Ros" finds "Rosalind Achebe"."""
    toks = _person_tokens(name)
    if not toks:
        return ()
    if len(toks) == 1:
        return (toks[0],) if 3 <= len(toks[0]) <= 5 else ()
    given = toks[0].replace("-", "")
    return tuple(given[:n] for n in (3, 4, 5) if len(given) >= n + 2)


def initial_surname(name: str) -> str | None:
    """Initial + surname of a person ("W. Stroud", "Wilma Stroud" → w stroud)."""
    toks = _person_tokens(name)
    if len(toks) < 2 or len(toks[-1]) < 2:
        return None
    return f"{toks[0][0]} {toks[-1]}"


def given_surname_initial(name: str) -> str | None:
    """Given name + surname initial ("Wilma S", "Wilma Stroud" → wilma s)."""
    toks = _person_tokens(name)
    if len(toks) != 2 or len(toks[0]) < 2:
        return None
    return f"{toks[0]} {toks[-1][0]}"


def given_name(name: str) -> str | None:
    """The given name (a lone given name finds the one person who has it)."""
    toks = _person_tokens(name)
    if not toks or len(toks[0]) < 2 or (len(toks) == 1 and not name[:1].isupper()):
        return None
    return toks[0]


def nickname_form(name: str) -> tuple[str, ...]:
    """The given name and every formal given name it is a nickname of, with the surname if
    any ("Bob Marsh" → robert marsh and bob marsh; "Robert Marsh" → robert marsh)."""
    toks = _person_tokens(name)
    if not toks or len(toks[0]) < 2:
        return ()
    return tuple(" ".join((g, *toks[1:])) for g in sorted({toks[0], *nickname_formals(toks[0])}))


def _one(fn: Callable[[str], str | None]) -> Callable[[str], tuple[str, ...]]:
    def keys(name: str) -> tuple[str, ...]:
        k = fn(name)
        return (k,) if k else ()
    keys.__doc__ = fn.__doc__
    return keys


def _person_tokens(name: str) -> list[str]:
    full = full_name(name)
    if full is not None:
        return [*full.given, full.surname]
    words = strip_accents(name).replace(".", " ").split()
    if not words or len(words) > 3 or not all(w[:1].isupper() for w in words):
        return []
    toks = [normalize_name(w) for w in words]
    return [t for t in toks if t and t.replace("-", "").isalpha()]


FORM_RULES: tuple[FormRule, ...] = (
    FormRule("compact", "fc", "spacing, punctuation, case and accents ignored (ü also as ue)",
             compact_forms, _ALL),
    FormRule("qualifier", "fq", "a legal form or a the/Project qualifier dropped",
             _one(qualifier_stripped), _NOT_PERSON),
    FormRule("acronym", "fa", "an acronym, or the initials of a multi-word name", acronym_form,
             _NOT_PERSON),
    FormRule("initial_surname", "fi", "initial + surname of a person", _one(initial_surname),
             frozenset({_P})),
    FormRule("given_surname_initial", "fs", "given name + surname initial of a person",
             _one(given_surname_initial), frozenset({_P})),
    FormRule("given_name", "fg", "a person's given name", _one(given_name), frozenset({_P})),
    FormRule("given_prefix", "fp", "a 3-5 letter short form of a given name", given_prefixes,
             frozenset({_P})),
    FormRule("nickname", "fn", "the formal given name a nickname stands for",
             nickname_form, frozenset({_P})),
)


def form_keys(name: str, etype: EntityType | None) -> list[str]:
    """Blocking keys of one name under every form rule that applies to its type (no type:
    every rule)."""
    out: list[str] = []
    for rule in FORM_RULES:
        if etype is not None and etype not in rule.types:
            continue
        out += [f"{rule.prefix}:{k}" for k in rule.keys(name)]
    return out


def same_form(a: str, b: str) -> bool:
    """Two names that are one name once spacing, punctuation, case and accents are ignored
    (and umlauts written out)."""
    return bool(set(compact_forms(a)) & set(compact_forms(b)))


_NUMBER = re.compile(r"\d+")


def numbers_differ(a: str, b: str) -> bool:
    """Two names that both carry numbers, and not the same numbers ("INC-2041"/"INC-2042",
    "Phase 2"/"Phase 3", "v2"/"v3"): an identifier, an edition or a version names another
    thing when its number changes, however close the spelling (leading zeros aside)."""
    na = [n.lstrip("0") or "0" for n in _NUMBER.findall(a)]
    nb = [n.lstrip("0") or "0" for n in _NUMBER.findall(b)]
    return bool(na) and bool(nb) and na != nb


def versioned_abbreviation(a: str, b: str) -> bool:
    """Two names with the same numbers whose words around them abbreviate one another
    ("PG16.2" / "PostgreSQL 16.2", "K8s 1.29"/"Kubernetes 1.29" aside: letters only)."""
    if not _NUMBER.search(a) or not _NUMBER.search(b) or numbers_differ(a, b):
        return False
    ra = re.sub(r"\s+", " ", re.sub(r"[\d.]+", " ", a)).strip(" -")
    rb = re.sub(r"\s+", " ", re.sub(r"[\d.]+", " ", b)).strip(" -")
    return bool(ra and rb) and (abbreviates(ra, rb) or abbreviates(rb, ra))
