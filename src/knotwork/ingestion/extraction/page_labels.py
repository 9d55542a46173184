"""Relations a page states by labelled lines about its subject (its heading).

Confluence pages about one system, project or team say who owns, leads or maintains it with
"Label: value" lines (or table cells "Label: value; Label: value") instead of sentences:

    Notifications Hub
    Owning team: Messaging
    Maintainers: Sara Lindgren, Ahmed El-Sayed
    Stack: Go, Redis

The subject is the first named thing of the chunk's first line when that line is a heading
(short, no sentence punctuation, no speaker prefix). Each labelled value relates to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from knotwork.domain.models import EntityType, RelationType
from knotwork.ingestion.extraction.types import Mention

R = RelationType
P, O, L = EntityType.PERSON, EntityType.ORGANIZATION, EntityType.LOCATION
_NAMED = frozenset({EntityType.PERSON, EntityType.ORGANIZATION})
_SYSTEMS = frozenset({EntityType.TECHNOLOGY, EntityType.PRODUCT})


@dataclass(frozen=True, slots=True)
class Label:
    type: RelationType
    value_is_source: bool  # "Owner: X" → X OWNS subject; "Stack: X" → subject USES X
    value_types: frozenset[EntityType]
    subject_types: frozenset[EntityType] = frozenset({EntityType.PRODUCT, EntityType.ORGANIZATION})


_LABELS: tuple[tuple[re.Pattern[str], Label], ...] = tuple(
    (re.compile(r"^(?:" + words + r")$"), label) for words, label in (
        ((r"(?:tech(?:nical)? |team |project |product |engineering )?(?:lead|leads|leader)|dri|"
          r"led by|(?:project|product|program|programme) manager|pm|product owner"), Label(R.LEADS, True, _NAMED)),
        (r"(?:engineering |line )?manager|em|head|managed by", Label(R.MANAGES, True, frozenset({P}))),
        (r"owner|owners|owning team|owned by|owner team|responsible team|service owner|system owner",
         Label(R.OWNS, True, _NAMED)),
        (r"maintainers?|maintained by|maintaining team|on-?call|support team|supported by",
         Label(R.MAINTAINS, True, _NAMED)),
        (r"(?:team )?members|engineers|people", Label(R.MEMBER_OF, True, frozenset({P}), frozenset({O}))),
        # a craft on a project's or team's page: "Technical director: Ana", "Concept art: Bo"
        # (a lead, sponsor or executive role is not read as membership)
        ((r"(?!.*\b(?:lead|leads|executive|sponsor|owner)\b)(?:[a-z]+[ /-]){0,2}(?:director|producer|"
          r"designer|engineer|engineering|developer|artist|art|analyst|scientist|writer|tester|qa|design)"),
         Label(R.MEMBER_OF, True, frozenset({P}), frozenset({O, EntityType.PRODUCT}))),
        (r"(?:tech(?:nology)? )?stack|built with|technolog(?:y|ies)|languages?|frameworks?|runs on|tools",
         Label(R.USES, False, _SYSTEMS)),
        (r"depends on|dependencies|upstream(?: dependencies)?|requires",
         Label(R.DEPENDS_ON, False, _SYSTEMS)),
        (r"location|locations|office|offices|based in|site|city|region",
         Label(R.LOCATED_IN, False, frozenset({L}), frozenset({O, EntityType.PRODUCT, P}))),
        (r"hq|headquarters|headquartered in", Label(R.HEADQUARTERED_IN, False, frozenset({L}), frozenset({O}))),
    )
)
_CELL = re.compile(r"^\s*(?:[-*•]\s*)?([A-Za-z][A-Za-z /&-]{0,30}?)\s*:\s*(\S.*)$")
_HEADING_END = re.compile(r"[.!?:;,]\s*$")


@dataclass(frozen=True, slots=True)
class LabelHit:
    source: Mention
    target: Mention
    type: RelationType
    start: int  # the labelled line
    end: int


def _subject(text: str, mentions: list[Mention]) -> tuple[Mention, int] | None:
    """The heading's named thing and where the heading ends."""
    lead = len(text) - len(text.lstrip())
    end = text.find("\n", lead)
    end = len(text) if end < 0 else end
    heading = text[lead:end]
    if not heading.strip() or len(heading.split()) > 10 or _HEADING_END.search(heading):
        return None
    inside = [m for m in mentions if lead <= m.start and m.end <= end]
    if any(m.extractor == "speaker" for m in inside):
        return None
    for m in inside:
        if m.type in (EntityType.PRODUCT, EntityType.ORGANIZATION, EntityType.TECHNOLOGY):
            return m, end
    return None


def page_subject(text: str, mentions: list[Mention]) -> tuple[Mention, int] | None:
    """The named thing of the chunk's heading line (not a person) and where the line ends."""
    return _subject(text, mentions)


def _label(name: str) -> Label | None:
    lowered = re.sub(r"\s+", " ", name.strip().lower())
    return next((label for regex, label in _LABELS if regex.match(lowered)), None)


def label_relations(text: str, mentions: list[Mention]) -> list[LabelHit]:
    found = _subject(text, mentions)
    if found is None:
        return []
    subject, pos = found
    hits: list[LabelHit] = []
    for line in re.finditer(r"[^\n]+", text[pos:]):
        line_start, line_end = pos + line.start(), pos + line.end()
        cells = re.split(r"(?<=[;|])", line.group(0))
        if len(cells) > 1 and _row_item(cells[0]):
            continue  # "Area: Search Ranking; Lead: Ana": the row's cells are about its item
        if len(cells) > 1 and _row_has_subject(cells[0], line_start, mentions):
            # "Klaus Fischer; Role: EM; Location: Berlin": the row is about Klaus; on a team's
            # page a roster row (a person with a role) is one of its members
            member = _roster_member(cells, line_start, subject, mentions)
            if member is not None:
                hits.append(LabelHit(member, subject, R.MEMBER_OF, line_start, line_end))
            continue
        cell_start = line_start
        for cell in cells:
            cell_end = cell_start + len(cell)
            hits += _cell_hits(text, cell, cell_start, cell_end, subject, mentions, line_start, line_end)
            cell_start = cell_end
    return hits


def _row_has_subject(first_cell: str, start: int, mentions: list[Mention]) -> bool:
    """A table row whose first cell names someone or something (no "Label:" of its own)."""
    parsed = _CELL.match(first_cell.rstrip(";|"))
    value_start = start + (parsed.start(2) if parsed else 0)
    end = start + len(first_cell)
    return any(value_start <= m.start and m.end <= end for m in mentions) and (
        parsed is None or _label(parsed.group(1)) is None)


def _row_item(first_cell: str) -> bool:
    """A table row opening with a cell of its own kind ("Area: …", "Milestone: …"), not one
    of the page's labels ("Owner: …"): the later cells describe that item, not the page."""
    parsed = _CELL.match(first_cell.rstrip(";|"))
    return parsed is not None and _label(parsed.group(1)) is None


_ROLE_CELL = re.compile(r"^\s*(?:role|title|position|job title|job|function)\s*:", re.IGNORECASE)


def _roster_member(cells: list[str], start: int, subject: Mention,
                   mentions: list[Mention]) -> Mention | None:
    if subject.subtype != "TEAM" or not any(_ROLE_CELL.match(c) for c in cells[1:]):
        return None
    end = start + len(cells[0])
    people = [m for m in mentions if start <= m.start and m.end <= end
              and m.type is EntityType.PERSON]
    return people[0] if len(people) == 1 else None


def _cell_hits(text: str, cell: str, start: int, end: int, subject: Mention, mentions: list[Mention],
               line_start: int, line_end: int) -> list[LabelHit]:
    parsed = _CELL.match(cell.rstrip(";|"))
    label = _label(parsed.group(1)) if parsed else None
    if parsed is None or label is None or subject.type not in label.subject_types:
        return []
    value_start = start + parsed.start(2)
    stop = re.search(r"[.!?](?:\s|$)", text[value_start:end])
    end = value_start + stop.start() if stop else end  # the value, not the sentences after it
    values = [m for m in mentions if value_start <= m.start and m.end <= end]
    if not _names_only(text, value_start, end, values):
        return []  # "On-call: we share a rotation with …": a sentence, not a list of names
    out: list[LabelHit] = []
    for m in values:
        if m.type not in label.value_types:
            continue
        before = text[value_start:m.start]
        if before.count("(") > before.count(")"):
            continue  # "Messaging (manager: Femi)": the parenthesis is about the value
        if m.text == subject.text or (m.refers_to or m.text) == (subject.refers_to or subject.text):
            continue
        src, tgt = (m, subject) if label.value_is_source else (subject, m)
        out.append(LabelHit(src, tgt, label.type, line_start, line_end))
    return out


_GLUE = frozenset({"and", "or", "the", "team", "squad", "group", "plus", "with", "also", "tbd"})


def _names_only(text: str, start: int, end: int, values: list[Mention]) -> bool:
    """The value is a list of names (a few glue words at most), not a sentence."""
    if not values:
        return False
    rest, pos = [], start
    for m in values:
        rest.append(text[pos:m.start])
        pos = max(pos, m.end)
    rest.append(text[pos:end])
    leftover = re.sub(r"\([^)]*\)?", " ", " ".join(rest))
    words = [w for w in re.findall(r"[A-Za-z]+", leftover) if w.lower() not in _GLUE]
    return len(words) <= 2
