"""WORKS_AT facts from a workspace's member list (a directory document, see
``loaders.slack_roster``): every member works at the company the workspace's e-mail domain
names, a deactivated member worked there.

The company is the organisation the graph already knows whose name, spacing and punctuation
aside, is the domain's name ("bluefin-labs.io" → "Bluefin Labs", "Bluefin Labs Ltd"); with
none known, the roster states no employer (a domain alone is no company name). The facts'
method is ``ROSTER_METHOD``: structural evidence that answers "where does X work", not a
sentence to quote for other questions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from knotwork.domain.models import EntityType, RelationType
from knotwork.ingestion.extraction.types import (
    ChunkExtraction,
    KnownName,
    LocalEntity,
    LocalRelation,
)
from knotwork.resolution.normalize import normalize_name

ROSTER_METHOD = "roster"
_FIELD = re.compile(r"(?:^|;\s*)([A-Za-z ]{2,20}):\s*([^;\n]*)")
# second-level labels that are not the organisation's name ("acme.co.uk")
_GENERIC_LABELS = frozenset({"co", "com", "org", "net", "ac", "gov", "edu", "mail", "email", "corp"})
_DISPLAY = re.compile(r"^[^\W\d_][^\W\d_' .-]*(?:[ '.-][^\W\d_]+)*$")


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", normalize_name(name))


def domain_label(domain: str) -> str | None:
    """The organisation's name part of an e-mail domain ("mail.bluefin-labs.co.uk" →
    "bluefinlabs")."""
    parts = domain.lower().split(".")[:-1]
    for part in reversed(parts):
        if len(part) >= 3 and part not in _GENERIC_LABELS:
            return re.sub(r"[^a-z0-9]", "", part)
    return None


def workspace_company(domain: str, known: Mapping[str, KnownName]) -> str | None:
    """The known organisation (not a team) the domain names: its name or one of its name
    keys equals the domain's label; else the shortest whose name starts with it, or that
    the label starts with (four letters at least either way)."""
    label = domain_label(domain)
    if not label or len(label) < 4:
        return None
    exact: set[str] = set()
    near: set[str] = set()
    for key, name in known.items():
        if name.type is not EntityType.ORGANIZATION or name.subtype == "TEAM":
            continue
        squashed = {_squash(key), _squash(name.name)}
        if label in squashed:
            exact.add(name.name)
        elif any(len(s) >= 4 and (s.startswith(label) or label.startswith(s)) for s in squashed):
            near.add(name.name)
    found = exact or near
    if not found:
        return None
    return min(found, key=lambda n: (len(n), n))


def roster_extraction(text: str, known: Mapping[str, KnownName]) -> ChunkExtraction:
    """People (with their display names as aliases) and their WORKS_AT facts, one per
    record line "Member: …; Display name: …; Title: …; Domain: …; Status: deactivated"."""
    entities: list[LocalEntity] = []
    relations: list[LocalRelation] = []
    company_index: dict[str, int] = {}
    for line in re.finditer(r"[^\n]+", text):
        fields = {m.group(1).strip().lower(): (line.start() + m.start(2), line.start() + m.end(2))
                  for m in _FIELD.finditer(line.group(0))}
        if "member" not in fields:
            continue
        start, end = fields["member"]
        name = text[start:end].strip()
        if len(name.split()) < 2:
            continue
        aliases: set[str] = set()
        if "display name" in fields:
            display = text[slice(*fields["display name"])].strip()
            if 2 <= len(display) <= 40 and _DISPLAY.match(display) and display.lower() != name.lower():
                aliases.add(display)
        # no mention spans: a record is no passage to find a person or the company in
        entities.append(LocalEntity(name, normalize_name(name), EntityType.PERSON, None, 0.95,
                                    [], aliases))
        person_index = len(entities) - 1
        if "domain" not in fields:
            continue
        d_start, d_end = fields["domain"]
        company = workspace_company(text[d_start:d_end].strip(), known)
        if company is None:
            continue
        index = company_index.get(company)
        if index is None:
            index = company_index[company] = len(entities)
            entities.append(LocalEntity(company, normalize_name(company), EntityType.ORGANIZATION,
                                        None, 0.9, [], set()))
        ended = "status" in fields and "deactivated" in text[slice(*fields["status"])].lower()
        fact = (f"{name} was a member of the {company} workspace (deactivated)" if ended
                else f"{name} is a member of the {company} workspace")
        relations.append(LocalRelation(person_index, index, RelationType.WORKS_AT, fact, 0.9,
                                       line.start(), line.end(), method=ROSTER_METHOD, ended=ended))
    return ChunkExtraction(entities, relations)
