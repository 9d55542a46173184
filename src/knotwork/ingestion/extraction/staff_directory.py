"""WORKS_AT from the organisation's own staff directory.

A staff directory is a table of people with a reporting line ("Name: …; Reports to: …"), on a
page whose prose says whose staff they are ("the full list of all 180 Quayside staff lives in
the HR system", "the Quayside people you'll most likely need"). Every person a row of that table
is about works at that organisation. Both halves must be there: a table of people without a
reporting line is a meeting's attendees or a project's roles, and a name before "people" on a
page without such a table says nothing about anyone's employer.

Rules as data (``STAFF_WORDS``, ``REPORTING_HEADER``, ``MIN_ROWS``); their hit rate on the
development corpora is printed by ``bench/table_headers.py`` (rule ``staff_directory``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from knotwork.domain.models import EntityType, RelationType
from knotwork.ingestion.extraction.table_headers import CellHit
from knotwork.ingestion.extraction.types import Mention

STAFF_WORDS = r"staff|people|employees|colleagues|workforce|team members|staffers|crew"
# "all 180 Quayside staff", "the Quayside people": a capitalised name right before a staff word
_STAFF = re.compile(r"(?<![\w-])([A-Z][\w&'’.-]*(?:\s+[A-Z][\w&'’.-]*){0,3})\s+(?:" + STAFF_WORDS + r")\b")
REPORTING_HEADER = re.compile(r"(?:^|[;|])\s*reports?\s+(?:in)?to\s*:", re.IGNORECASE)
_PERSON_ROW = re.compile(r"^\s*(?:(?:full\s+)?name|person|employee|member|who)\s*:", re.IGNORECASE)
MIN_ROWS = 3  # a directory lists several people
RULE = "staff_directory"


def _rows(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"[^\n]+", text)
            if _PERSON_ROW.match(m.group(0)) and REPORTING_HEADER.search(m.group(0))]


def _staff_name(text: str) -> re.Match[str] | None:
    """Where the prose (not a table row) names the organisation whose staff are listed."""
    for line in re.finditer(r"[^\n]+", text):
        if re.search(r"[;|]\s*[^;|:]{1,40}:", line.group(0)):
            continue  # a table row
        found = _STAFF.search(text, line.start(), line.end())
        if found is not None:
            return found
    return None


def directory_mentions(text: str, mentions: Sequence[Mention]) -> list[Mention]:
    """``mentions`` with the organisation a staff directory is of (an organisation mention at
    its name in the prose, replacing a guess of another type there)."""
    if len(_rows(text)) < MIN_ROWS:
        return list(mentions)
    found = _staff_name(text)
    if found is None:
        return list(mentions)
    start, end = found.start(1), found.end(1)
    if any(m.start == start and m.end == end and m.type is EntityType.ORGANIZATION for m in mentions):
        return list(mentions)
    if any(m.start < end and start < m.end and m.extractor in ("rule", "gazetteer") for m in mentions):
        return list(mentions)  # a name a rule typed otherwise ("the Platform people")
    kept = [m for m in mentions if not (m.start < end and start < m.end)]
    org = Mention(start, end, found.group(1), EntityType.ORGANIZATION, 0.75, "rule")
    return sorted([*kept, org], key=lambda m: (m.start, m.end))


def directory_employer(text: str, mentions: Sequence[Mention], hits: Sequence[CellHit]) -> list[CellHit]:
    """WORKS_AT of each person a staff directory row is about (see the module's docstring)."""
    rows = _rows(text)
    if len(rows) < MIN_ROWS:
        return []
    found = _staff_name(text)
    if found is None:
        return []
    org = next((m for m in mentions if m.start == found.start(1) and m.end == found.end(1)
                and m.type is EntityType.ORGANIZATION), None)
    if org is None:
        return []
    out: list[CellHit] = []
    seen: set[int] = set()
    for hit in hits:
        person = hit.source
        if person.type is not EntityType.PERSON or id(person) in seen or \
                not any(start <= hit.start and hit.end <= end for start, end in rows):
            continue
        line = text[hit.start:hit.end]
        if not (hit.start <= person.start < hit.start + len(line.split(";")[0])):
            continue  # the row's subject, not a manager named in a later cell
        seen.add(id(person))
        out.append(CellHit(person, org, RelationType.WORKS_AT, RULE, hit.start, hit.end, hit.fact))
    return out
