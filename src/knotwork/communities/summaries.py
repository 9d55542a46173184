"""Community reports. The default needs no LLM: an extractive report.

:class:`CommunitySummarizer` is the hook for an LLM implementation (map-reduce over the facts
within a token budget); it receives exactly what the extractive one does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from knotwork.communities.projection import EntityView, FactView

MAX_CITATIONS = 20
TITLE_ENTITIES = 3

# relation type -> the theme it signals (key topics)
RELATION_THEMES: Mapping[str, str] = {
    "WORKS_AT": "employment", "REPORTS_TO": "reporting lines", "MANAGES": "management",
    "MEMBER_OF": "team membership", "LEADS": "leadership", "LOCATED_IN": "locations",
    "HEADQUARTERED_IN": "locations", "OWNS": "ownership", "ACQUIRED": "acquisitions",
    "INVESTED_IN": "investments", "COLLABORATED_WITH": "collaboration", "CREATED": "creation",
    "DEVELOPED": "development", "MAINTAINS": "maintenance", "USES": "technology use",
    "DEPENDS_ON": "dependencies",
}
_TYPE_WORDS: Mapping[str, tuple[str, str]] = {
    "PERSON": ("person", "people"), "ORGANIZATION": ("organization", "organizations"),
    "LOCATION": ("location", "locations"), "CONCEPT": ("concept", "concepts"),
    "EVENT": ("event", "events"), "PRODUCT": ("product", "products"),
    "TECHNOLOGY": ("technology", "technologies"),
}


@dataclass(frozen=True, slots=True)
class SummaryInput:
    """Everything a summarizer may use about one community."""

    level: int
    members: Sequence[EntityView]
    central: Sequence[str]  # entity ids, most central first
    centrality: Mapping[str, float]  # PageRank within the community
    facts: Sequence[FactView]  # current facts between members
    children: Sequence[str] = ()  # titles of the child communities


@dataclass(frozen=True, slots=True)
class CommunityReport:
    title: str
    summary: str
    key_topics: tuple[str, ...]
    key_facts: tuple[str, ...]  # fact ids, best first
    citations: tuple[str, ...]  # episode (chunk) ids of the key facts


@runtime_checkable
class CommunitySummarizer(Protocol):
    """Turns one community into a report. ``name`` (with a version) is stored per community."""

    @property
    def name(self) -> str: ...

    def summarize(self, item: SummaryInput) -> CommunityReport: ...


def humanize(relation_type: str) -> str:
    return relation_type.lower().replace("_", " ")


def _join(names: Sequence[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " & " + names[-1]


def rank_facts(item: SummaryInput) -> list[FactView]:
    """Facts by (centrality of the endpoints) x (confidence, evidence); text duplicates dropped."""
    top = max(item.centrality.values(), default=0.0) or 1.0

    def score(fact: FactView) -> float:
        reach = (item.centrality.get(fact.source, 0.0) + item.centrality.get(fact.target, 0.0))
        return (reach / top) * fact.weight

    seen: set[str] = set()
    ranked: list[FactView] = []
    for fact in sorted(item.facts, key=lambda f: (-score(f), f.id)):
        key = " ".join(fact.text.lower().split())
        if key in seen:
            continue
        seen.add(key)
        ranked.append(fact)
    return ranked


def dominant_relations(facts: Sequence[FactView], limit: int = 2) -> list[tuple[str, int]]:
    counts = Counter(f.type for f in facts)
    typed = [(t, n) for t, n in counts.most_common() if t != "RELATED_TO"]
    chosen = sorted(typed, key=lambda tn: (-tn[1], tn[0]))[:limit]
    return chosen or [(t, n) for t, n in counts.most_common(limit)]


def key_topics(item: SummaryInput, limit: int = 6) -> list[str]:
    """Relation themes by weight, then the most central non-person members."""
    themes: dict[str, float] = {}
    for fact in item.facts:
        theme = RELATION_THEMES.get(fact.type)
        if theme:
            themes[theme] = themes.get(theme, 0.0) + fact.weight
    topics = [t for t, _ in sorted(themes.items(), key=lambda tw: (-tw[1], tw[0]))[:3]]
    by_id = {m.id: m for m in item.members}
    ranked = sorted(item.members, key=lambda m: (-item.centrality.get(m.id, 0.0), m.id))
    for member in ranked:
        if len(topics) >= limit:
            break
        if by_id[member.id].type != "PERSON" and member.name not in topics:
            topics.append(member.name)
    return topics[:limit]


def _composition(members: Sequence[EntityView]) -> str:
    counts = Counter(m.type for m in members)
    parts = []
    for kind, n in sorted(counts.items(), key=lambda kn: (-kn[1], kn[0])):
        one, many = _TYPE_WORDS.get(kind, (kind.lower(), kind.lower() + "s"))
        parts.append(f"{n} {one if n == 1 else many}")
    return ", ".join(parts)


class ExtractiveSummarizer:
    """Title from central entities and dominant relation types; ranked key facts; citations."""

    def __init__(self, key_facts: int = 8) -> None:
        self._key_facts = key_facts

    @property
    def name(self) -> str:
        return "extractive/1"

    def summarize(self, item: SummaryInput) -> CommunityReport:
        by_id = {m.id: m for m in item.members}
        central_names = [by_id[e].name for e in item.central if e in by_id]
        relations = dominant_relations(item.facts)
        title = _join(central_names[:TITLE_ENTITIES]) or "Unnamed community"
        if relations:
            title += " — " + ", ".join(humanize(t) for t, _ in relations)
        ranked = rank_facts(item)[: self._key_facts]
        topics = key_topics(item)
        lines = [
            f"{len(item.members)} entities ({_composition(item.members)})"
            + (f" centred on {_join(central_names[:TITLE_ENTITIES])}." if central_names else "."),
        ]
        if relations:
            lines.append("Main relations: " + ", ".join(
                f"{humanize(t)} ({n})" for t, n in dominant_relations(item.facts, 4)) + ".")
        if item.children:
            shown = list(item.children[:5])
            more = len(item.children) - len(shown)
            lines.append(f"Made of {len(item.children)} sub-communities: " + "; ".join(shown)
                         + (f"; and {more} more." if more > 0 else "."))
        if ranked:
            lines.append("Key facts: " + " ".join(
                f"({i}) {_sentence(f.text)}" for i, f in enumerate(ranked, 1)))
        citations: list[str] = []
        for fact in ranked:
            for episode in fact.episodes:
                if episode not in citations:
                    citations.append(episode)
        return CommunityReport(
            title=title,
            summary=" ".join(lines),
            key_topics=tuple(topics),
            key_facts=tuple(f.id for f in ranked),
            citations=tuple(citations[:MAX_CITATIONS]),
        )


def _sentence(text: str, limit: int = 240) -> str:
    clean = " ".join(text.split())
    if len(clean) > limit:
        clean = clean[: limit - 1].rsplit(" ", 1)[0] + "…"
    return clean if clean.endswith((".", "!", "?", "…")) else clean + "."

