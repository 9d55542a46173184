"""Typed facts from table rows, the relation decided by the column header.

The loaders render a table with a header row as one line per row, each cell labelled by its
column: ``Name: Ondrej Vasko; Unit: Harbor Team; Reports to: Greta Vasko; Office: Lisbon``. A
row is about the thing its first named cell names (the row's subject); every later cell whose
header names a relation relates that subject to the names in the cell:

    Ondrej Vasko —MEMBER_OF→ Harbor Team, —REPORTS_TO→ Greta Vasko, —LOCATED_IN→ Lisbon

The header → relation mapping is data (``HEADER_RULES``, each rule with a name; the hit rate of
each on a corpus is printed by ``bench/table_headers.py``). The facts of a row share one
sentence, the row read from its subject: "Ondrej Vasko — Unit: Harbor Team; Reports to: Greta
Vasko; Office: Lisbon", so an answer built from it reads well, carries the row's other cells (a
title beside the manager) and cites the table's document.

Hit rates as measured by an earlier version of these rules with ``bench/table_headers.py`` (stated
facts a gold relation confirms; corpus A / corpus B): reports_to .92 / .95 (38 / 37 stated),
office .92 / .86 (52 / 55), person_unit + unit_parent + unit_children .66 / .39 (35 / 44; most
misses are team names the gold spells otherwise), head .50 / 1.0 (2 / 4), owner - / .50 (0 / 2),
relationship_owner .38 / - (8 / 0). Not yet re-measured for the split unit rules, unit_manager,
PAGE_RULES (a row read against the unit its page is about): run the bench.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from knotwork.domain.models import EntityType, RelationType
from knotwork.ingestion.extraction.page_labels import page_subject
from knotwork.ingestion.extraction.types import Mention

R = RelationType
TABLE_METHOD = "table"  # the extraction method of a fact read from a table row
P, O, L = EntityType.PERSON, EntityType.ORGANIZATION, EntityType.LOCATION
_THINGS = frozenset({O, EntityType.PRODUCT, EntityType.TECHNOLOGY, EntityType.CONCEPT, EntityType.EVENT})
_ANY = frozenset(EntityType)


@dataclass(frozen=True, slots=True)
class HeaderRule:
    """A column header pattern and the relation its cells state about the row's subject."""

    name: str
    header: re.Pattern[str]
    type: RelationType
    value_is_source: bool  # "Lead: Greta" → Greta LEADS the row's subject
    subject_types: frozenset[EntityType]
    value_types: frozenset[EntityType]


def _rule(name: str, header: str, rel: RelationType, value_is_source: bool,
          subject: frozenset[EntityType] | set[EntityType],
          value: frozenset[EntityType] | set[EntityType]) -> HeaderRule:
    return HeaderRule(name, re.compile(r"^(?:" + header + r")$"), rel, value_is_source,
                      frozenset(subject), frozenset(value))


# Order matters: the first rule whose header pattern and entity types fit decides.
_UNIT = (r"unit|team|sub-?team|squad|group|department|dept|division|org|organi[sz]ation|practice|"
         r"chapter|tribe|pod|crew|studio team|home team")
_PARTS = r"teams|sub-?teams|units|squads|groups|departments"
_MEMBERS = r"members|people|staff|engineers|team members"
HEADER_RULES: tuple[HeaderRule, ...] = (
    _rule("reports_to", r"reports? (?:in)?to|(?:line |direct |people )?manager|boss|supervisor",
          R.REPORTS_TO, False, {P}, {P}),
    _rule("relationship_owner", r"(?:account|relationship|client|partner|vendor) (?:manager|owner|lead)"
          r"|(?:technical |main |primary |key |local )?contact(?: at .{1,30})?|point of contact|poc",
          R.MANAGES, True, _THINGS | {L}, {P}),
    # "Squad: Checkout; Manager: Idris": the team's manager manages it (as the sentence
    # patterns read "Checkout — manager: Idris")
    _rule("unit_manager", r"(?:engineering |line |team )?manager|em", R.MANAGES, True, _THINGS, {P}),
    _rule("head", r"(?:tech(?:nical)? |team |project |programme |program |product |area |"
          r"workstream |stream |fix )?(?:lead|leads|leader)|head|led by|run by|"
          r"(?:project |program |programme |product )manager|director|chair|sponsor|"
          r"incident commander|captain", R.LEADS, True, _THINGS, {P}),
    # an owner leads a team, system or product; the "Owner" of a decision, action item or
    # ticket row (a concept or event) is who does it, not who leads it
    _rule("owner", r"(?:tech(?:nical)? |team |project |product |system |service )?"
          r"(?:owner|owners|dri)|owned by", R.LEADS, True,
          frozenset({O, EntityType.PRODUCT, EntityType.TECHNOLOGY}), {P}),
    # a person's unit; under a "Unit" header a name statistical NER called a product
    # ("Parcel Routing") is a team
    _rule("person_unit", _UNIT, R.MEMBER_OF, False, {P}, {O, EntityType.PRODUCT, EntityType.CONCEPT}),
    # a unit's parent: "Team: Harbor; Division: Logistics"
    _rule("unit_parent", _UNIT + r"|parent(?: unit| team| group| org)?|part of",
          R.MEMBER_OF, False, {O}, {O, EntityType.PRODUCT, EntityType.CONCEPT}),
    # a unit's parts: "Division: Logistics; Teams: Harbor, Pricing"
    _rule("unit_children", _PARTS, R.MEMBER_OF, True, {O}, {O, EntityType.PRODUCT, EntityType.CONCEPT}),
    _rule("unit_members", _MEMBERS + "|" + _PARTS, R.MEMBER_OF, True, {O, EntityType.PRODUCT}, {P}),
    _rule("hq", r"hq|headquarters|headquartered in|head office", R.HEADQUARTERED_IN, False, {O}, {L}),
    _rule("office", r"office|offices|location|locations|based in|based|where|city|site|"
          r"country|region|home office|hub|campus|studio|work location|lives in",
          R.LOCATED_IN, False, _ANY - {L}, {L}),
    _rule("uses", r"(?:tech(?:nology)? )?stack|built with|technolog(?:y|ies)|languages?|"
          r"frameworks?|runs on|platform|tools?|database", R.USES, False, _THINGS, _THINGS),
    _rule("depends_on", r"depends on|dependencies|upstream(?: dependencies)?|requires",
          R.DEPENDS_ON, False, _THINGS, _THINGS),
    _rule("maintains", r"maintainers?|maintained by|on-?call|support(?:ed by| team)?",
          R.MAINTAINS, True, _THINGS, {P, O}),
    _rule("employer", r"company|employer|works at|works for", R.WORKS_AT, False, {P}, {O}),
)

# A row's first column read against the page it stands on (the page's heading names a unit or
# a project): a person row of a team page's roster is a member of the team, a unit row of a
# division's (or the company's) page is one of its parts. The row's subject is the source.
PAGE_RULES: tuple[HeaderRule, ...] = (
    _rule("page_members", r"(?:full )?name|person|employee|member|who|people",
          R.MEMBER_OF, False, {P}, {O, EntityType.PRODUCT}),
    _rule("page_units", r"team|unit|squad|division|department|dept|sub-?team|area|practice|"
          r"chapter|tribe|pod", R.MEMBER_OF, False, {O}, {O}),
)
# a first column naming a unit: a capitalised name there is a team's ("Division: Logistics")
_UNIT_FIRST = re.compile(r"^(?:" + _UNIT + r")$", re.IGNORECASE)

# cells "Header: value" separated by ";" or "|"
_CELL = re.compile(r"^\s*(?:[-*•]\s*)?([^:;|\n]{1,40}?)\s*:\s*(\S[^;|]*)$")
_SEP = re.compile(r"[;|]")
# a first column that numbers or dates the row rather than naming its subject
_INDEX_HEADER = re.compile(r"^(?:#|no\.?|nr\.?|id|ticket|key|step|phase|date|when|time|#\s*\w*)$")


@dataclass(frozen=True, slots=True)
class CellHit:
    source: Mention
    target: Mention
    type: RelationType
    rule: str
    start: int  # the row (a line of the chunk)
    end: int
    fact: str  # the row read as "Subject — Header: value; Header: value"


def header_rule(header: str, subject: EntityType | None = None,
                value: EntityType | None = None) -> HeaderRule | None:
    """The first rule whose pattern matches the header (and fits the types, when given)."""
    lowered = re.sub(r"\s+", " ", header.strip().lower()).strip(" .:")
    lowered = re.sub(r"\s*\([^)]*\)$", "", lowered)  # "Office (city)" → "office"
    for rule in HEADER_RULES:
        if not rule.header.match(lowered):
            continue
        if subject is not None and subject not in rule.subject_types:
            continue
        if value is not None and value not in rule.value_types:
            continue
        return rule
    return None


def _cells(line: str, start: int) -> list[tuple[str, int, int]]:
    """(header, value start, value end) per labelled cell of a row; [] for other lines."""
    out: list[tuple[str, int, int]] = []
    pos = 0
    for piece in _SEP.split(line):
        parsed = _CELL.match(piece)
        if parsed is not None:
            value_end = parsed.end(2)
            while value_end > parsed.start(2) and piece[value_end - 1].isspace():
                value_end -= 1
            out.append((parsed.group(1).strip(), start + pos + parsed.start(2), start + pos + value_end))
        else:
            out.append(("", start + pos, start + pos + len(piece)))
        pos += len(piece) + 1
    return out


def _read(text: str, start: int, end: int) -> str:
    return re.sub(r"\s+", " ", text[start:end]).strip()


def _inside(mentions: Sequence[Mention], start: int, end: int) -> list[Mention]:
    return [m for m in mentions if start <= m.start and m.end <= end and m.extractor != "speaker"]


def _is_name_cell(text: str, start: int, end: int, named: list[Mention]) -> bool:
    """The cell holds names (a few glue words at most), not a sentence about them."""
    rest, pos = [], start
    for m in named:
        rest.append(text[pos:m.start])
        pos = max(pos, m.end)
    rest.append(text[pos:end])
    leftover = re.sub(r"\([^)]*\)?", " ", " ".join(rest))
    words = [w for w in re.findall(r"[A-Za-z]{2,}", leftover)
             if w.lower() not in {"and", "or", "the", "team", "plus", "tbd", "hq", "remote", "interim",
                                  "acting", "office", "studio", "lead", "from", "until", "since"}]
    return len(words) <= 2


def table_row_relations(text: str, mentions: Sequence[Mention]) -> list[CellHit]:
    """Typed relations stated by the labelled cells of the table rows in ``text``."""
    hits: list[CellHit] = []
    found = page_subject(text, list(mentions))
    heading = _read(text, 0, found[1]).lstrip("# ") if found is not None else ""
    # the page's subject is named by a heading, not by a row of labelled cells
    page = (found[0], heading) if found is not None and not re.search(r"[;|:]", heading) else None
    for line in re.finditer(r"[^\n]+", text):
        if not _SEP.search(line.group(0)):
            continue
        cells = _cells(line.group(0), line.start())
        labelled = [c for c in cells if c[0]]
        if len(cells) < 2 or len(labelled) < len(cells) - 1:
            continue  # a sentence with a semicolon, not a row of labelled cells
        subject: Mention | None = None
        first = 0
        for index, (header, start, end) in enumerate(cells[:2]):
            # "Rafael Ortiz (Rafa)": a name in parentheses is the subject's other name
            named = [m for m in _inside(mentions, start, end)
                     if text[start:m.start].count("(") <= text[start:m.start].count(")")]
            if index == 0 and _INDEX_HEADER.match(header.lower()) and not named:
                continue  # "#: 3; Workstream: …": the row's subject is in the next cell
            if len(named) == 1 and _is_name_cell(text, start, end, named):
                subject, first = named[0], index
            break
        if subject is None:
            continue
        rest = [(h, s, e) for h, s, e in cells[first + 1:] if h]
        # one sentence per row, shared by its facts (a title or a team beside the manager
        # answers more than "X — Reports to: Y", and one row is one piece of evidence)
        fact = f"{_read(text, cells[first][1], cells[first][2])} — " + "; ".join(
            f"{h}: {_read(text, s, e)}" for h, s, e in rest)
        own_unit = False
        for header, start, end in rest:
            values = _inside(mentions, start, end)
            if not values or not _is_name_cell(text, start, end, values):
                continue
            for value in values:
                before = text[start:value.start]
                if before.count("(") > before.count(")"):
                    continue  # "Harbor Team (lead: Greta)": the parenthesis is about the value
                if (value.refers_to or value.text) == (subject.refers_to or subject.text):
                    continue
                rule = header_rule(header, subject.type, value.type)
                if rule is None:
                    continue
                src, tgt = (value, subject) if rule.value_is_source else (subject, value)
                own_unit = own_unit or rule.name in ("person_unit", "unit_parent")
                hits.append(CellHit(src, tgt, rule.type, rule.name, line.start(), line.end(), fact))
        if page is not None and not own_unit:
            hit = _page_hit(cells[first][0], subject, page, line.start(), line.end(), fact)
            if hit is not None:
                hits.append(hit)
        hits += _unit_heads(text, rest, [h for h in hits if h.start == line.start()])
    return hits


# a title that heads the unit of the row: it names the unit ("Head of Logistics", "Logistics
# Lead", "General Manager, Logistics") or is a bare lead title ("Team Lead")
_TITLE_HEADER = re.compile(r"^(?:role|title|position|job title|job|function)$", re.IGNORECASE)
# ("Logistics Manager" is a function, a manager of logistics; "General Manager, Logistics" heads)
_HEAD_WORD = re.compile(r"\b(?:head|lead|leader|director|vp|chief)\b|\b(?:engineering|team|general)\s+manager\b",
                        re.IGNORECASE)
_BARE_HEAD = re.compile(r"^(?:(?:engineering|team|general|managing)\s+)?(?:manager|lead|leader|head|director)$",
                        re.IGNORECASE)
_UNIT_WORDS = re.compile(r"\b(?:the|team|group|squad|unit|department|division)\b", re.IGNORECASE)
HEAD_RULE = "unit_head"  # the rule name of the LEADS facts these titles state


def _unit_heads(text: str, rest: list[tuple[str, int, int]], row_hits: list[CellHit]) -> list[CellHit]:
    """A member whose title heads the unit also leads it: "Name: Ana; Title: Head of Payments;
    Unit: Payments" → Ana LEADS Payments (besides MEMBER_OF)."""
    titles = [re.sub(r"\s*\([^)]*\)", "", _read(text, s, e)).strip() for h, s, e in rest
              if _TITLE_HEADER.match(h.strip())]
    if len(titles) != 1 or not _HEAD_WORD.search(titles[0]):
        return []
    title = re.sub(r"\s+", " ", titles[0].lower())
    out = []
    for hit in row_hits:
        if hit.type is not R.MEMBER_OF or hit.rule not in ("person_unit", "page_members") \
                or hit.source.type is not P:
            continue
        unit = re.sub(r"\s+", " ", _UNIT_WORDS.sub(" ", (hit.target.refers_to or hit.target.text).lower())).strip()
        if _BARE_HEAD.match(title) or (len(unit) > 1 and re.search(r"(?<!\w)" + re.escape(unit) + r"(?!\w)", title)):
            out.append(CellHit(hit.source, hit.target, R.LEADS, HEAD_RULE, hit.start, hit.end, hit.fact))
    return out


def _page_hit(header: str, subject: Mention, page: tuple[Mention, str], start: int, end: int,
              fact: str) -> CellHit | None:
    """The row's subject and the unit or project the page is about (``PAGE_RULES``)."""
    unit, heading = page
    if (unit.refers_to or unit.text) == (subject.refers_to or subject.text):
        return None
    lowered = re.sub(r"\s+", " ", header.strip().lower())
    for rule in PAGE_RULES:
        if rule.header.match(lowered) and subject.type in rule.subject_types \
                and unit.type in rule.value_types:
            return CellHit(subject, unit, rule.type, rule.name, start, end, f"{fact} ({heading})")
    return None
