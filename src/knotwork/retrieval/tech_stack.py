""""Which technologies does <the company> use?": the company's own stack is what its systems
use, not facts about the company itself (nothing says "Northwind uses Kafka"; its services do).

When a list question asks for technologies (or databases, languages, frameworks …) of an
organisation the corpus names throughout, or that has a headquarters or staff (not a team,
not an investor or customer named in passing), the answer lists the technologies that valid USES / DEPENDS_ON facts point to, most
used first, one citation per technology.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from knotwork.domain.models import Entity, EntityType, Fact, QueryMode, QueryResult
from knotwork.domain.models import RelationType as R
from knotwork.domain.ports import DocumentStore, GraphStore
from knotwork.ingestion.extraction.lexicon import TECHNOLOGY_CATEGORIES
from knotwork.retrieval.aggregate import parse_aggregate
from knotwork.retrieval.citations import CitationResolver
from knotwork.retrieval.tech_category import names_of_kind

__all__ = ["home_stack", "is_home_company"]

_KIND_OF_NOUN = {"databases": "database", "languages": "language", "frameworks": "framework"}
_STACK_NOUNS = frozenset({"technologies", "tools", *_KIND_OF_NOUN})
_MAX_LISTED = 12


# a one-word company name is often taken for a place by NER ("Before joining Quillmark")
_COMPANY_TYPES = frozenset({EntityType.ORGANIZATION, EntityType.LOCATION})
_MIN_EPISODES = 3  # the corpus's own company is named throughout it, not in one passing line


def is_home_company(graph: GraphStore, group_id: str, company: Entity) -> bool:
    """Named across the corpus, or placed: it has a headquarters / office, or people work
    there (an investor or a customer named in passing has neither)."""
    if len(graph.entity_episode_ids(group_id, company.id)) >= _MIN_EPISODES:
        return True
    facts = [h.fact for h in graph.expand_facts(group_id, [company.id], depth=1, limit=200)
             if h.hop == 0]
    placed = any(f.source_id == company.id and f.type in (R.HEADQUARTERED_IN, R.LOCATED_IN)
                 for f in facts)
    staff = {f.source_id for f in facts if f.target_id == company.id and f.type is R.WORKS_AT}
    return placed or len(staff) >= 2


def stack_of(technologies: dict[str, Entity], facts: Sequence[Fact], noun: str
             ) -> list[tuple[Entity, list[Fact]]]:
    """Technologies of the asked kind that usage facts point to, most used first."""
    used: dict[str, list[Fact]] = {}
    for f in facts:
        if f.type in (R.USES, R.DEPENDS_ON) and f.target_id in technologies:
            used.setdefault(f.target_id, []).append(f)
    kind = _KIND_OF_NOUN.get(noun)
    if kind is not None and kind in TECHNOLOGY_CATEGORIES:
        used = {i: fs for i, fs in used.items() if names_of_kind(kind, technologies[i].name)}
    ranked = sorted(used.items(), key=lambda kv: (-len(kv[1]), technologies[kv[0]].name.lower()))
    return [(technologies[i], fs) for i, fs in ranked[:_MAX_LISTED]]


def home_stack(graph: GraphStore, documents: DocumentStore, group_id: str, question: str,
               anchors: Sequence[Entity], *, as_of: datetime | None,
               mode: QueryMode = QueryMode.LOCAL) -> QueryResult | None:
    ask = parse_aggregate(question)
    if ask is None or ask.kind != "list" or ask.noun not in _STACK_NOUNS:
        return None
    home = next((a for a in anchors if a.type in _COMPANY_TYPES and a.subtype is None
                 and is_home_company(graph, group_id, a)), None)
    if home is None:
        return None  # a company named in passing: its stack is not this corpus's systems
    entities = graph.list_entities(group_id)
    technologies = {e.id: e for e in entities if e.type is EntityType.TECHNOLOGY}
    if not technologies:
        return None
    hits = graph.expand_facts(group_id, sorted(technologies), depth=1, as_of=as_of, limit=5000)
    listed = stack_of(technologies, [h.fact for h in hits if h.hop == 0], ask.noun)
    if len(listed) < (1 if ask.noun in _KIND_OF_NOUN else 2):
        return None  # one technology is a weak "stack"; one database is an answer
    evidence = [(fs[0].fact, fs[0].episodes) for _, fs in listed]
    citations = CitationResolver(documents).resolve(evidence, limit=len(evidence))
    names = ", ".join(e.name for e, _ in listed)
    used = [f for _, fs in listed for f in fs]
    return QueryResult(
        answer=f"{len(listed)} {ask.noun} used by {home.name}'s systems: {names}.",
        citations=citations, confidence=0.7, mode_used=mode,
        context="\n".join(f"- {f.fact}" for f in used[:50]),
        reasoning_trace=[(f"stack of {home.name} (named across the corpus): "
                          f"{len(listed)} {ask.noun} that usage facts point to")],
        entities=[home], facts=used[:50])
