"""Count and list questions answered from the graph: "How many teams are in the Commerce
Division?", "Which people report to Chen Abbott?", "List all the projects that use Redis".

The question gives three things: what is counted (a plural noun → entity types and name head
words), the relation (verbs via the relation taxonomy, else membership / location), and the
anchor entity it names. The answer is every distinct entity linked to the anchor by a valid
fact of that relation (at ``as_of``), with one citation per fact: "4 teams: A, B, C, D.".

Pure parsing (:func:`parse_aggregate`) and counting (:func:`collect`) are separate from the
graph access (:func:`aggregate`) so both can be tested without stores.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from knotwork.domain.models import DERIVED_METHODS, Entity, EntityType, Fact, QueryMode, QueryResult
from knotwork.domain.models import RelationType as R
from knotwork.domain.ports import DocumentStore, GraphStore
from knotwork.domain.timeutil import holds_at
from knotwork.ingestion.extraction.relations import relation_types_named
from knotwork.retrieval.citations import CitationResolver

Kind = Literal["count", "list"]
Side = Literal["source", "target"]  # where the anchor sits in the counted facts

# plural noun → (entity types, head words a name may carry: "Fraud Team", "Tax Service")
_P, _O, _PR, _T, _L = (EntityType.PERSON, EntityType.ORGANIZATION, EntityType.PRODUCT,
                       EntityType.TECHNOLOGY, EntityType.LOCATION)
NOUNS: dict[str, tuple[frozenset[EntityType], tuple[str, ...]]] = {
    **{n: (frozenset({_P}), ()) for n in (
        "people", "persons", "employees", "engineers", "members", "staff", "folks", "reports",
        "individuals", "contributors", "managers", "leads", "designers", "developers",
        "scientists", "analysts", "colleagues", "teammates", "users")},
    **{n: (frozenset({_O}), (h,)) for n, h in (
        ("teams", "team"), ("divisions", "division"), ("departments", "department"),
        ("groups", "group"), ("squads", "squad"), ("units", "unit"), ("orgs", "org"),
        ("organizations", "organization"), ("organisations", "organisation"),
        ("companies", "company"), ("vendors", "vendor"), ("suppliers", "supplier"),
        ("partners", "partner"), ("customers", "customer"))},
    "projects": (frozenset({_PR, _T, EntityType.CONCEPT}), ("project",)),
    **{n: (frozenset({_PR, _T}), (h,)) for n, h in (
        ("systems", "system"), ("services", "service"),
        ("products", "product"), ("applications", "application"), ("apps", "app"),
        ("components", "component"), ("platforms", "platform"))},
    **{n: (frozenset({_T, _PR}), (h,)) for n, h in (
        ("technologies", "technology"), ("tools", "tool"), ("databases", "database"),
        ("languages", "language"), ("frameworks", "framework"), ("libraries", "library"))},
    **{n: (frozenset({_L}), (h,)) for n, h in (
        ("offices", "office"), ("cities", "city"), ("locations", "location"),
        ("sites", "site"), ("countries", "country"), ("places", "place"))},
}
_NOUN_RE = "|".join(sorted(NOUNS, key=len, reverse=True))
_COUNT = re.compile(r"\b(?:how\s+many|number\s+of|count\s+(?:of\s+)?)\s*(?:the\s+|all\s+(?:the\s+)?)?"
                    r"(?:\w+\s+)?(?P<noun>" + _NOUN_RE + r")\b", re.IGNORECASE)
_LIST = re.compile(
    r"^\s*(?:(?:list|name|enumerate|show)\s+(?:me\s+)?(?:all\s+|every\s+)?(?:the\s+|of\s+the\s+)?"
    r"(?:\w+\s+)?(?P<n1>" + _NOUN_RE + r")\b"
    r"|(?:which|what)\s+(?:\w+\s+)?(?P<n2>" + _NOUN_RE + r")\s+(?=(?:are|were|does|do|did|have|has|"
    r"report|use|work|belong|sit|depend|maintain|own)\b))"
    r"|\ball\s+(?:of\s+)?the\s+(?P<n3>" + _NOUN_RE + r")\b"
    r"|^\s*(?:who|what|which)\s+(?:are|were)\s+(?:all\s+)?the\s+(?P<n4>" + _NOUN_RE
    + r")\s+(?=of|in|on|at|under)\b", re.IGNORECASE)
# the anchor is the subject: "How many systems does the Payments Team maintain?"
# (not "How many people have led Project Wren?": there the counted people are the subject)
_SUBJECT_AUX = re.compile(r"\b(?:does|do|did|has|have|had)\b(?!\s+(?-i:(?:ever\s+|already\s+)?[a-z]+(?:ed|run|held))\b)",
                          re.IGNORECASE)
_OF_ANCHOR = re.compile(r"\b(?:of|in|on|at|under|within|inside)\s+(?:the\s+)?[A-Z0-9]")
# relations a fact may carry for the same meaning, and the inverse direction
_SYNONYMS: dict[R, frozenset[R]] = {R.MAINTAINS: frozenset({R.OWNS}), R.OWNS: frozenset({R.MAINTAINS}),
                                    R.DEPENDS_ON: frozenset({R.USES}), R.USES: frozenset({R.DEPENDS_ON})}
_INVERSE: dict[R, R] = {R.REPORTS_TO: R.MANAGES, R.MANAGES: R.REPORTS_TO}
_DEFAULT = frozenset({R.MEMBER_OF, R.LOCATED_IN, R.WORKS_AT})
# a one-at-a-time relation of the counted entity: only its latest fact counts
_FUNCTIONAL = frozenset({R.MEMBER_OF, R.REPORTS_TO, R.LOCATED_IN, R.WORKS_AT, R.HEADQUARTERED_IN})
_LEAVING = re.compile(r"\b(?:left|leaves|leaving|moves?\s+from|moved\s+from|no\s+longer|formerly|"
                      r"until|used\s+to|previously|ex-)\b", re.IGNORECASE)


@dataclass(frozen=True)
class AggregateAsk:
    kind: Kind
    noun: str
    types: frozenset[R]
    side: Side
    entity_types: frozenset[EntityType] = field(default_factory=frozenset)
    heads: tuple[str, ...] = ()
    history: bool = False  # "how many people have led X": ended facts count too


# a count over time rather than of what holds now: "have led", "ever", "so far", "in total"
_HISTORY = re.compile(r"\b(?:ever|so\s+far|to\s+date|in\s+total|all[- ]time|over\s+(?:the\s+)?"
                      r"(?:years|time)|(?:have|has)\s+(?:ever\s+)?(?:led|run|headed|owned|managed|"
                      r"held|been|worked|joined|left|used|maintained|served))\b", re.IGNORECASE)


def parse_aggregate(question: str) -> AggregateAsk | None:
    """A count or list question and what it counts, or None."""
    m = _COUNT.search(question)
    kind: Kind = "count"
    if m is None:
        m = _LIST.search(question)
        kind = "list"
    if m is None:
        return None
    noun = next(g for g in m.groups() if g).lower()
    etypes, heads = NOUNS[noun]
    rest = question[m.end():]
    types = set(relation_types_named(question))
    if R.REPORTS_TO in types:
        types.discard(R.MEMBER_OF)
    if noun == "reports" and not types - {R.MEMBER_OF}:
        types = {R.REPORTS_TO}
    if not types:
        types = set(_DEFAULT)
    side: Side = "target"
    if noun != "reports" and _SUBJECT_AUX.match(rest.strip()) and not _OF_ANCHOR.match(rest.strip()):
        side = "source"
    return AggregateAsk(kind, noun, frozenset(types), side, etypes, heads,
                        history=_HISTORY.search(question) is not None and as_of_free(question))


def as_of_free(question: str) -> bool:
    """The question names no point in time of its own ("in March 2024", "as of May")."""
    return not re.search(r"\b(?:in|on|as\s+of|at|before|after|since|until)\s+(?:\w+\s+)?\d{4}\b",
                         question, re.IGNORECASE)


def wanted(ask: AggregateAsk) -> set[tuple[R, Side]]:
    """(fact type, side of the anchor) pairs that link the anchor to a counted entity."""
    out: set[tuple[R, Side]] = set()
    other: dict[Side, Side] = {"source": "target", "target": "source"}
    if ask.types == _DEFAULT and _P in ask.entity_types and ask.side == "target":
        out.add((R.LEADS, "target"))  # "people on the Ads Team": its lead is one of them
    for t in ask.types:
        out.add((t, ask.side))
        out |= {(s, ask.side) for s in _SYNONYMS.get(t, ())}
        if t in _INVERSE:
            out.add((_INVERSE[t], other[ask.side]))
    return out


def _fits(ask: AggregateAsk, entity: Entity, strict: bool) -> bool:
    words = {w.lower() for w in re.findall(r"\w+", entity.name)}
    if any(h in words for h in ask.heads):
        return True
    return not strict and (not ask.entity_types or entity.type in ask.entity_types)


@dataclass(frozen=True)
class Counted:
    entity: Entity
    facts: tuple[Fact, ...]


def collect(ask: AggregateAsk, anchor: Entity, facts: Sequence[Fact], entities: dict[str, Entity],
            as_of: datetime | None) -> list[Counted]:
    """The distinct entities the anchor's valid facts link it to, per the question.

    ``facts``: facts touching the anchor and the counted entities' own facts (to drop those
    whose one-at-a-time relation moved on, e.g. a person now on another team)."""
    pairs = wanted(ask)
    valid = [f for f in facts if ask.history or holds_at(f.valid_at, f.invalid_at, as_of)]
    found: dict[str, list[Fact]] = {}
    for f in valid:
        if anchor.id not in (f.source_id, f.target_id) or f.source_id == f.target_id:
            continue
        side: Side = "source" if f.source_id == anchor.id else "target"
        other_id = f.target_id if side == "source" else f.source_id
        other = entities.get(other_id)
        if other is None or other.id == anchor.id:
            continue
        typed = (f.type, side) in pairs
        loose = f.type is R.RELATED_TO and side == ask.side and not _LEAVING.search(f.fact)
        if (typed and _fits(ask, other, strict=False)) or (loose and _fits(ask, other, strict=True)):
            found.setdefault(other_id, []).append(f)
    out = [Counted(entities[eid], tuple(fs)) for eid, fs in found.items()
           if ask.history or not _moved_on(anchor, eid, fs, valid, entities)]
    return _drop_partial_names(sorted(out, key=lambda c: c.entity.name))


def _same_kind(a: Entity | None, b: Entity | None) -> bool:
    """Two containers of one kind: same type and the same head word ("X Team", "Y Team")."""
    if a is None or b is None or a.type is not b.type:
        return False
    ha, hb = a.name.split()[-1].lower(), b.name.split()[-1].lower()
    return ha == hb or (" " not in a.name.strip() and " " not in b.name.strip())


def _moved_on(anchor: Entity, entity_id: str, linking: Sequence[Fact], facts: Sequence[Fact],
              entities: dict[str, Entity]) -> bool:
    """The counted entity's one-at-a-time relation (team, manager, office) has a newer fact
    pointing to another entity of the anchor's kind: it moved on."""
    for f in linking:
        if f.type not in _FUNCTIONAL or f.source_id != entity_id or f.valid_at is None:
            continue
        since = max(g.valid_at for g in linking if g.type is f.type and g.valid_at is not None)
        for g in facts:
            if (g.source_id == entity_id and g.type is f.type and g.target_id != anchor.id
                    and g.valid_at is not None and g.valid_at > since
                    and _same_kind(entities.get(g.target_id), anchor)):
                return True
    return False


def _drop_partial_names(counted: list[Counted]) -> list[Counted]:
    """'Diana' beside 'Diana Rao': a one-word person name that starts a counted full name."""
    full = [c.entity.name.lower() for c in counted if " " in c.entity.name.strip()]
    return [c for c in counted
            if " " in c.entity.name.strip() or c.entity.type is not EntityType.PERSON
            or not any(n.startswith(c.entity.name.lower() + " ") for n in full)]


def answer_text(ask: AggregateAsk, anchor: Entity, counted: Sequence[Counted]) -> str:
    names = ", ".join(c.entity.name for c in counted)
    noun = ask.noun if len(counted) != 1 else (ask.heads[0] if ask.heads else ask.noun.rstrip("s"))
    return f"{len(counted)} {noun} ({anchor.name}): {names}."


def aggregate(graph: GraphStore, documents: DocumentStore, group_id: str, question: str,
              anchors: Sequence[Entity], *, as_of: datetime | None,
              mode: QueryMode = QueryMode.LOCAL) -> QueryResult | None:
    """Answer a count/list question from the graph, or None (not one, or no fact found)."""
    ask = parse_aggregate(question)
    if ask is None:
        return None
    for anchor in anchors:
        near = [h.fact for h in graph.expand_facts(group_id, [anchor.id], depth=1, as_of=as_of,
                                                   include_invalid=ask.history, limit=1000,
                                                   skip_methods=DERIVED_METHODS)
                if h.hop == 0]
        ids = sorted({x for f in near for x in (f.source_id, f.target_id)})
        entities = {e.id: e for e in graph.get_entities(group_id, ids)}
        theirs = [h.fact for h in graph.expand_facts(group_id, [i for i in ids if i != anchor.id],
                                                     depth=1, as_of=as_of,
                                                     include_invalid=ask.history, limit=5000,
                                                     skip_methods=DERIVED_METHODS)
                  if h.hop == 0]
        facts = list({f.id: f for f in near + theirs}.values())
        more = sorted({x for f in theirs for x in (f.source_id, f.target_id)} - set(entities))
        entities.update({e.id: e for e in graph.get_entities(group_id, more)})
        counted = collect(ask, anchor, facts, entities, as_of)
        if not counted or (ask.kind == "list" and len(counted) < 2):
            continue  # one graph fact is a weak list: local search reads the sources too
        resolver = CitationResolver(documents)
        evidence = [(f.fact, f.episodes) for c in counted for f in c.facts[:1]]
        citations = resolver.resolve(evidence, limit=max(10, len(evidence)))
        used = [f for c in counted for f in c.facts]
        trace = [(f"aggregation: {ask.kind} {ask.noun} linked to {anchor.name} by "
                 f"{', '.join(sorted(t.value for t in ask.types))} (anchor as {ask.side})"),
                 f"counted {len(counted)} distinct entities from {len(used)} valid facts"
                 + (f" as of {as_of.date().isoformat()}" if as_of else "")]
        context = "\n".join(f"- {f.fact}" for f in used)
        return QueryResult(answer=answer_text(ask, anchor, counted), citations=citations,
                           confidence=0.8 if len(counted) > 1 else 0.6, mode_used=mode,
                           context=context, reasoning_trace=trace, entities=[anchor],
                           facts=used[:50])
    return None
