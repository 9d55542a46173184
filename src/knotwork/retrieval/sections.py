"""'What are the main risks for Project X?', 'What were the action items of the outage?':
the items a page about X lists under a heading of that name.

Enterprise pages keep such lists under a heading ("## Main risks", "Follow-ups", "Decision
log", "Lessons learned") or as labelled lines ("Risk: …", "Main risk: …"). Community reports
mix in other pages' risks; local search takes a sentence or two. When the question asks for
one of these lists and names an entity, the answer is the listed items of the passages that
mention it (their page title or text naming it), each cited.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from knotwork.domain.models import Entity, Episode, QueryMode, QueryResult
from knotwork.domain.ports import DocumentStore, GraphStore
from knotwork.retrieval.citations import CitationResolver
from knotwork.retrieval.sentences import as_sentence

__all__ = ["SectionItem", "asked_section", "section_answer", "section_items"]

# the list a question asks for → how the words of its heading or label begin
_SECTIONS: dict[str, tuple[str, ...]] = {
    "risks": ("risk", "hazard", "threat", "concern"),
    "issues": ("issue", "problem", "blocker", "concern"),
    "hazards": ("hazard", "risk"),
    "decisions": ("decision",),
    "action items": ("action", "follow", "todo", "next"),
    "follow-ups": ("follow", "action", "next"),
    "next steps": ("next", "action", "follow"),
    "lessons": ("lesson", "learn", "takeaway"),
    "milestones": ("milestone", "timeline", "roadmap"),
    "open questions": ("question", "open"),
}
_ASKS = re.compile(
    r"^\s*(?:what|which|list|name)\s+(?:are|were|is|was)?\s*(?:all\s+)?(?:the\s+)?(?:main\s+|key\s+|"
    r"major\s+|biggest\s+|top\s+|known\s+|open\s+|current\s+)?(?:[a-z]+\s+)??(?P<what>risks|issues|hazards|"
    r"decisions|action\s+items|follow[- ]?ups|next\s+steps|lessons(?:\s+learn(?:ed|t))?|"
    r"milestones|open\s+questions)\b", re.IGNORECASE)  # plural: a list, not "the risk score"
_HEADING = re.compile(r"^\s*#{1,6}\s*(.+?)\s*#*\s*$")
_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.+)$")
_LABEL = re.compile(r"^\s*(?:[-*•]\s*)?(?:(?:main|key|top|biggest|open)\s+)?(?P<label>[A-Za-z -]{3,25}?)"
                    r"\s*:\s*(?P<value>.+)$")
_MAX_ITEMS = 8


@dataclass(frozen=True)
class SectionItem:
    text: str
    episode_id: str


def asked_section(question: str) -> str | None:
    """The kind of list asked for ("risks"), or None."""
    m = _ASKS.match(question)
    if m is None:
        return None
    what = re.sub(r"\s+", " ", m.group("what").lower()).replace("followups", "follow-ups")
    for key in _SECTIONS:
        if what.startswith(key.rstrip("s")) or key.startswith(what.rstrip("s")):
            return key
    return None


def _fits(words: str, kind: str) -> bool:
    return any(w.startswith(k) for w in re.findall(r"[a-z]+", words.lower())
               for k in _SECTIONS[kind])


def _names(text: str, names: Sequence[str]) -> bool:
    lowered = text.lower()
    return any(re.search(r"(?<!\w)" + re.escape(n.lower()) + r"(?!\w)", lowered) for n in names)


def section_items(kind: str, entities: Sequence[Entity], episodes: Sequence[Episode]
                  ) -> list[SectionItem]:
    """The items listed under a heading of the kind (or labelled with it) in the passages
    about the entities, in page order, without repeats."""
    names = [n for e in entities for n in (e.name, *e.aliases) if len(n) > 2]
    out: dict[str, SectionItem] = {}
    for ep in episodes:
        # a page about the entity lists its items; another page only those that name it
        own = _names(ep.name, names) or _names(ep.content.split("\n", 1)[0], names)
        under = False
        for line in ep.content.splitlines():
            heading = _HEADING.match(line)
            if heading or line.rstrip().endswith(":"):  # "## Main risks", "Top hazards for X:"
                under = _fits(heading.group(1) if heading else line, kind)
                continue
            item = _ITEM.match(line)
            label = _LABEL.match(line)
            if under and (item or line.strip()):
                text = (item.group(1) if item else line).strip()
            elif label and _fits(label.group("label"), kind) and len(label.group("label").split()) <= 3:
                text = label.group("value").strip()
            else:
                continue
            if not own and not _names(text, names):
                continue
            key = re.sub(r"\W+", " ", text.lower()).strip()
            if len(key) > 8 and key not in out:
                out[key] = SectionItem(text, ep.id)
    return list(out.values())[:_MAX_ITEMS]


def section_answer(graph: GraphStore, documents: DocumentStore, group_id: str, question: str,
                   named: Sequence[Entity], *, as_of: datetime | None,
                   mode: QueryMode = QueryMode.LOCAL) -> QueryResult | None:
    """The listed items of the asked kind about the named entities, or None."""
    kind = asked_section(question)
    if kind is None or not named:
        return None
    ids = documents.chunks_mentioning(group_id, [e.id for e in named], limit=40)
    episodes = [ep for ep in graph.get_episodes(group_id, ids)
                if as_of is None or ep.valid_at <= as_of]
    items = section_items(kind, named, episodes)
    if not items:
        return None
    citations = CitationResolver(documents).resolve([(i.text, [i.episode_id]) for i in items],
                                                    limit=len(items))
    subject = ", ".join(e.name for e in named)
    answer = f"{kind.capitalize()} stated for {subject}: " + " ".join(
        as_sentence(i.text) for i in items)
    return QueryResult(
        answer=answer, citations=citations, confidence=0.75 if len(items) > 1 else 0.6,
        mode_used=mode, context="\n".join(f"- {i.text}" for i in items),
        reasoning_trace=[f"section: {len(items)} {kind} listed in passages about {subject}"],
        entities=list(named))
