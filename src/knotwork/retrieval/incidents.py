"""'What incidents happened in 2025?', 'Summarize the outages we had': the incident pages.

An incident is written up on a page of its own (a postmortem, an incident report, an outage
review) whose title says so. Community reports and local search return a sentence or two of
one of them; a question asking for the incidents (plural) of a period is answered by listing
those pages in that period (by their documents' dates), each with its first statement and a
citation.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from knotwork.domain.ids import stable_id
from knotwork.domain.models import Document, QueryMode, QueryResult
from knotwork.domain.ports import DocumentStore
from knotwork.domain.timeutil import ensure_utc
from knotwork.retrieval.citations import CitationResolver
from knotwork.retrieval.sentences import as_sentence, split_sentences
from knotwork.retrieval.temporal_question import question_time

__all__ = ["asks_for_incidents", "incident_answer", "is_incident_page"]

_ASKS = re.compile(
    r"^\s*(?:what|which|list|summari[sz]e|give|show|name|tell|describe)\b.*?\b(?:incidents|outages|"
    r"postmortems|post-mortems)\b|^\s*how\s+many\s+(?:incidents|outages)\b", re.IGNORECASE)
_PAGE = re.compile(r"\b(?:incident|postmortem|post-mortem|outage|sev[ -]?\d|rca)\b", re.IGNORECASE)
_MAX_LISTED = 10


def asks_for_incidents(question: str) -> bool:
    return bool(_ASKS.search(question))


def is_incident_page(doc: Document) -> bool:
    """A page whose title says it is about an incident (not a chat channel's messages)."""
    return not doc.title.lstrip().startswith("#") and bool(_PAGE.search(doc.title))


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _when(doc: Document) -> datetime | None:
    when = doc.created_at or doc.modified_at
    return ensure_utc(when) if when is not None else None


def _statement(content: str) -> str:
    """The first sentence of a page that is not a heading or its title."""
    for raw in split_sentences(content):
        text = raw.strip()
        if text and not text.startswith("#") and len(text.split()) >= 5:
            return as_sentence(text)
    return ""


def incident_answer(documents: DocumentStore, group_id: str, question: str, *,
                    as_of: datetime | None, mode: QueryMode = QueryMode.GLOBAL
                    ) -> QueryResult | None:
    if not asks_for_incidents(question):
        return None
    stated = question_time(question)
    pages = []
    elsewhen = 0  # incident pages of other periods
    for doc in documents.list_documents(group_id):
        when = _when(doc)
        if not is_incident_page(doc):
            continue
        elsewhen += 1
        if stated is not None and (when is None or not stated.start <= when < stated.end):
            continue
        if as_of is not None and when is not None and when > as_of:
            continue
        pages.append(doc)
    if not pages:
        if stated is None or not elsewhen:
            return None
        return QueryResult(  # the incidents are written up, none of them in that period
            answer=f"I found no incident report dated {stated.phrase}.", citations=[],
            confidence=0.1, mode_used=mode,
            reasoning_trace=[f"incidents: none of {elsewhen} incident pages is dated {stated.phrase}"])
    pages.sort(key=lambda d: (_when(d) or _EPOCH, d.title))
    pages = pages[:_MAX_LISTED]
    first = {c.document_id: c for c in documents.get_chunks(
        [stable_id(d.id, "chunk", "0") for d in pages])}
    lines = []
    evidence: list[tuple[str, list[str]]] = []
    for doc in pages:
        chunk = first.get(doc.id)
        said = _statement(chunk.content) if chunk is not None else ""
        lines.append(f"{doc.title.rstrip('.')}: {said}" if said else f"{doc.title.rstrip('.')}.")
        if chunk is not None:
            evidence.append((said or doc.title, [chunk.id]))
    citations = CitationResolver(documents).resolve(evidence, limit=len(evidence))
    period = f" ({stated.phrase})" if stated is not None else ""
    noun = "incident" if len(pages) == 1 else "incidents"
    return QueryResult(
        answer=f"{len(pages)} {noun}{period}: " + " ".join(lines), citations=citations,
        confidence=0.7, mode_used=mode, context="\n".join(f"- {line}" for line in lines),
        reasoning_trace=[f"incidents: {len(pages)} incident pages by title"
                         + (f" dated {stated.phrase}" if stated is not None else "")])
