"""Names a table row's cells and a page's heading state, where statistical NER missed them.

The loaders render a table row as labelled cells (``Name: Ondrej Vasko; Unit: Route Planning;
Office: Lisbon``). The column header says what kind of name a cell holds, which beats a
statistical guess: under "Name:" a full name is a person's (NER often keeps only part of a name
it does not know, "Vasko", or calls it an organisation), under "Unit:" a capitalised name is a
team's, under "Office:" a place's. A page headed "Route Planning — Team Home" or "Atlas Rewrite —
Project Charter" is about that team or project; the words after the dash name the kind of page
(``PAGE_KINDS``), not a thing of their own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.table_headers import (
    _SEP,
    _UNIT_FIRST,
    HEADER_RULES,
    _cells,
    _inside,
)
from knotwork.ingestion.extraction.types import Mention

P, O, L = EntityType.PERSON, EntityType.ORGANIZATION, EntityType.LOCATION

# headers whose cells name teams, and the words a team name in such a cell is made of
_TEAM_HEADERS = frozenset({"person_unit", "unit_parent", "unit_children"})
# headers whose cells name places: a guessed person or company there ("Studio: Austin") is one
_PLACE_HEADERS = frozenset({"office", "hq"})
_GUESSERS = frozenset({"spacy", "shape", "caps", "known", "gliner"})
_CELL_NAME = re.compile(r"^[A-Z][\w&'’.-]*(?:[ /&+-]+[A-Z&][\w&'’.-]*){0,4}$")
# the types a guess under a team header or in a page's name is replaced from (a team called a
# person or a place by NER); an organisation or product guess is kept as it is
_WRONG_GUESS = frozenset({P, L})


_PERSON_HEADER = re.compile(r"^(?:(?:full )?name|person|employee|member|who|people)$", re.IGNORECASE)
_NAME_WORD = re.compile(r"^[^\W\d_]+(?:[-'’][^\W\d_]+)*$")
_UNIT_WORD = re.compile(r"^(?:team|group|squad|unit|department|division|office|studio|inc|ltd|gmbh|llc)$",
                        re.IGNORECASE)


def _is_full_name(value: str) -> bool:
    words = value.split()
    return 2 <= len(words) <= 4 and all(w[0].isupper() and _NAME_WORD.match(w) for w in words) \
        and not any(_UNIT_WORD.match(w) for w in words)


def _person_cell(text: str, header: str, start: int, end: int) -> Mention | None:
    """"Name: Ondrej Vasko" opening a row: a full name under a person column is a person."""
    value = text[start:end].strip()
    if not _PERSON_HEADER.match(header.strip()) or not _is_full_name(value):
        return None
    at = start + text[start:end].find(value)
    return Mention(at, at + len(value), value, P, 0.8, "rule")


def _guessed(m: Mention) -> bool:
    """Only statistical or capitalisation guesses voted for the mention's type."""
    return set(m.votes or (m.extractor,)) <= _GUESSERS


def _covered(mentions: Sequence[Mention], start: int, end: int) -> list[Mention]:
    return [m for m in mentions if m.start < end and start < m.end]


def _replaces(name: Mention, over: list[Mention]) -> bool:
    """The full name replaces the mentions it overlaps: all lie inside it and none is already
    the name with its type; a part of it ("Vasko", "Rosa Maria" of "Rosa Maria Tandy") or
    a guess of another type ("Ondrej Vasko" as an organisation) is NER missing the name."""
    if not over or any(m.start < name.start or m.end > name.end for m in over):
        return False
    if any(m.start == name.start and m.end == name.end and m.type is name.type for m in over):
        return False
    return all(m.type is name.type or _guessed(m) for m in over)


def cell_mentions(text: str, mentions: Sequence[Mention]) -> list[Mention]:
    """``mentions`` plus the team names of "Unit:" / "Teams:" cells no extractor found (under
    such a header a capitalised name, "Unit: Route Planning", is a team's), a full name opening a
    row under "Name:" (in place of a part of it or a guess of another type), guessed names under
    a place header ("Studio: Austin") as places, and the name a page's heading is about.
    Only in rows of labelled cells whose subject is named."""
    added: list[Mention] = []
    retyped: dict[int, Mention | None] = {}  # None: dropped
    page = _page_heading(text, mentions, added, retyped)
    unit_page = page is not None and page[0] == "unit_page"
    if unit_page and page is not None:
        _unit_refs(text, page[1], mentions, added, retyped)
    for line in re.finditer(r"[^\n]+", text):
        if not _SEP.search(line.group(0)):
            continue
        cells = _cells(line.group(0), line.start())
        if len(cells) < 2 or sum(1 for c in cells if c[0]) < len(cells) - 1:
            continue
        header, start, end = cells[0]
        if not _inside(mentions, start, end):
            first = _person_cell(text, header, start, end) or _unit_cell(text, header, start, end, unit_page)
            if first is None:
                continue  # no named subject: not a row about someone or something
            added.append(first)
        elif (full := _person_cell(text, header, start, end)) is not None \
                and _replaces(full, over := _covered(mentions, full.start, full.end)):
            retyped.update({id(m): None for m in over})
            added.append(full)
        for header, start, end in cells[1:]:
            label = text.rfind(header, line.start(), start) if header else -1
            if label >= 0:  # "Studio: Austin": NER guessing a name in the label is wrong
                retyped.update({id(m): None for m in _inside(mentions, label, label + len(header))
                                if _guessed(m)})
            lowered = re.sub(r"\s+", " ", header.strip().lower())
            if any(r.name in _PLACE_HEADERS and r.header.match(lowered) for r in HEADER_RULES):
                retyped.update({id(m): Mention(m.start, m.end, m.text, L, 0.8, "rule")
                                for m in _inside(mentions, start, end)
                                if m.type is not L and _guessed(m)})
                continue
            if any(r.name in _TEAM_HEADERS and r.header.match(lowered) for r in HEADER_RULES):
                _team_cell(text, start, end, mentions, added, retyped)
    if not added and not retyped:
        return list(mentions)
    kept = [retyped.get(id(m), m) for m in mentions]
    return sorted([m for m in kept if m is not None] + added, key=lambda m: (m.start, m.end))


def _team_cell(text: str, start: int, end: int, mentions: Sequence[Mention], added: list[Mention],
               retyped: dict[int, Mention | None]) -> None:
    """The teams a "Unit:" cell lists: each capitalised name no extractor found, or one only
    guessed as a person or place ("Unit: Route Planning" read as a person)."""
    pos = start
    for piece in re.split(r"(,\s*|\s+and\s+|\s*;\s*)", text[start:end]):
        stripped = re.sub(r"\s*\([^)]*\)\s*$", "", piece).strip()
        lead = piece.find(stripped) if stripped else 0
        p_start, p_end = pos + lead, pos + lead + len(stripped)
        pos += len(piece)
        if not stripped or not _CELL_NAME.match(stripped) or _inside(added, p_start, p_end):
            continue
        over = _covered(mentions, p_start, p_end)
        # a guess reaching out of the cell took in its label ("Team: Build")
        if over and not all(_guessed(m) and (m.start < start or (
                m.type in _WRONG_GUESS and p_start <= m.start and m.end <= p_end)) for m in over):
            continue
        retyped.update({id(m): None for m in over})
        added.append(Mention(p_start, p_end, stripped, O, 0.75, "rule", "TEAM"))


# A page headed "<name> — <kind of page>": the page is about the name, whose type the kind
# says ("Route Planning — Team Home", "Atlas Rewrite — Project Charter"). Each kind is named
# data: (name, the words after the dash, type, subtype).
_HEAD_NAME = r"^\s*#*\s*([A-Z][\w&/'’.-]*(?:\s+(?:&\s+)?[A-Z][\w&/'’.-]*){0,4})\s*[—–:|-]\s*"
PAGE_KINDS: tuple[tuple[str, re.Pattern[str], EntityType, str], ...] = (
    ("unit_page", re.compile(_HEAD_NAME + r"(?i:(?:[\w-]+\s+){0,2}(?:team|group|division|department|squad|studio)\b)"),
     O, "TEAM"),
    ("project_page", re.compile(_HEAD_NAME + r"(?i:[^\n—–|]{0,40}?\b(?:charter|(?:project |delivery |migration |"
                                r"refresh |rollout |upgrade )?plan|design doc|status|retro(?:spective)?|proposal|roadmap)"
                                r"\b)[^\n]{0,40}$", re.MULTILINE),
     EntityType.PRODUCT, "PROJECT"),
)
# the words of a page's kind: a mention made of them only ("Project Charter", "Team Home") is
# the kind of page, not a name
_KIND_WORDS = frozenset({"team", "home", "page", "project", "charter", "plan", "status", "design", "doc",
                         "group", "division", "department", "squad", "overview", "retro", "retrospective",
                         "proposal", "roadmap", "&", "and"})


def _page_heading(text: str, mentions: Sequence[Mention], added: list[Mention],
                  retyped: dict[int, Mention | None]) -> tuple[str, Mention] | None:
    """The name of the page's kind (``PAGE_KINDS``) and the mention of what the page is
    about (added when no extractor found it)."""
    for name, kind, etype, subtype in PAGE_KINDS:
        head = kind.match(text)
        if head is None:
            continue
        start, end = head.start(1), head.end(1)
        over = _covered(mentions, start, end)
        subject = Mention(start, end, head.group(1), etype, 0.75, "rule", subtype)
        if over and not all(m.type in _WRONG_GUESS and _guessed(m) and start <= m.start
                            and m.end <= end for m in over):
            # the heading's name is found already (or is no guess of ours to replace)
            return name, next((m for m in over if (m.start, m.end) == (start, end)), subject)
        retyped.update({id(m): None for m in over})
        added.append(subject)
        line_end = text.find("\n", end)
        for m in _covered(mentions, end, len(text) if line_end < 0 else line_end):
            if {w.lower() for w in m.text.split()} <= _KIND_WORDS:
                retyped[id(m)] = None  # "Project Charter" of the heading: the page's kind
        return name, subject
    return None


# on a unit's own page, "the team" is that unit ("Ana led the team until May"), not the
# nearest team named before it (a team the page works with)
_THE_UNIT = re.compile(r"\b(?:the|this|our)\s+(?:team|squad)\b(?!\s+(?:lead|leads|leader|leadership|"
                       r"manager|managers|members?|page|home|channel|of|at|in|with|behind)\b)",
                       re.IGNORECASE)


def _unit_refs(text: str, subject: Mention, mentions: Sequence[Mention], added: list[Mention],
               retyped: dict[int, Mention | None]) -> None:
    """"the team" on the page of the unit ``subject`` names: a link to the unit."""
    name = subject.refers_to or subject.text
    for hit in _THE_UNIT.finditer(text, subject.end):
        over = _covered(mentions, hit.start(), hit.end())
        if any(m.extractor != "coref" for m in over):
            continue  # part of a name ("the Team Home page") or a typed mention
        retyped.update({id(m): None for m in over})
        added.append(Mention(hit.start(), hit.end(), hit.group(0), O, 0.6, "coref", "TEAM",
                             refers_to=name))


# on a unit's page, a row opening with an area or stream names one of the unit's parts
# ("Area: Search Ranking; Lead: Ana"), unless it names a role ("Area: Executive Producer")
_AREA_FIRST = re.compile(r"^(?:area|sub-?area|stream|work-?stream)$", re.IGNORECASE)
_ROLE_NAME = re.compile(r"\b(?:producer|director|manager|lead|leader|officer|engineer|designer|artist|"
                        r"head|chief|owner|analyst|coordinator|president|founder|ceo|cto|coo|cfo)$",
                        re.IGNORECASE)


def _unit_cell(text: str, header: str, start: int, end: int, unit_page: bool = False) -> Mention | None:
    """"Division: Logistics" opening a row: a capitalised name under a unit column is a team."""
    header = re.sub(r"\s+", " ", header.strip())
    if not (_UNIT_FIRST.match(header) or (unit_page and _AREA_FIRST.match(header))):
        return None
    value = re.sub(r"\s*\([^)]*\)\s*$", "", text[start:end]).strip()
    if not value or not _CELL_NAME.match(value) or _ROLE_NAME.search(value):
        return None
    at = start + text[start:end].find(value)
    return Mention(at, at + len(value), value, O, 0.75, "rule", "TEAM")
