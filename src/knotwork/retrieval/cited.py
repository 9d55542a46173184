"""Which citations a finished answer keeps: the evidence its text is composed from (issue 20).

Retrieval gathers candidate evidence; an answer uses some of it. One rule, applied once to the
finished answer of every mode (:meth:`QueryEngine._answer`), decides what it cites:

1. An abstention cites nothing: it claims nothing (what was examined stays in the context).
2. An extractive answer cites the evidence it shows: a citation whose evidence text the answer
   does not show (a follow-up finding a composed answer left out, a hop answer clipped away)
   goes. A computed answer (a count or list read from the graph) cites every item it counted.
3. Each document once (its first citation: the strongest evidence comes first).
4. An answer drawn from more than :data:`BOUND_FROM_DOCUMENTS` documents (an account composed
   of many points) cites the documents most about what was asked: the
   :data:`BOUND_FROM_DOCUMENTS` whose titles are most similar to the question, and any other
   within :data:`TITLE_MARGIN` of the best. A point taken from a page about something else is
   weak evidence for an account of this subject.

Citations never change the answer text. The two numbers of rule 4 were chosen on the formal
development corpus (the best citation precision losing at most .035 document recall) and
reported on the casual one (docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from knotwork.domain.models import Citation, QueryResult
from knotwork.retrieval.global_search import NO_GLOBAL_ANSWER
from knotwork.retrieval.lexical import term_set, terms
from knotwork.retrieval.local import NO_ANSWER

__all__ = ["BOUND_FROM_DOCUMENTS", "SHOWN_SHARE", "TITLE_MARGIN", "cite", "shown"]

ABSTENTIONS = frozenset({NO_ANSWER, NO_GLOBAL_ANSWER})
# the share of an evidence text's terms the answer must hold for the evidence to be shown
# (an acronym spelled out, a list dash or a clipped tail keep the rest)
SHOWN_SHARE = 0.6
# more cited documents than this: the strength bound applies (a short answer's few sentences
# are each the answer; an account's many points are not equally about the question); that
# many documents are always kept
BOUND_FROM_DOCUMENTS = 3
# beyond those, a cited document's title similarity to the question may be this much below
# the best one's
TITLE_MARGIN = 0.15

Relevance = Callable[[Sequence[str]], list[float]]  # titles -> similarity to the question


def shown(evidence: str, answer: str) -> bool:
    """Whether ``answer`` shows ``evidence``: most of its terms are in the answer."""
    wanted = set(terms(evidence))
    if not wanted:
        return True
    return len(wanted & term_set(answer)) >= SHOWN_SHARE * len(wanted)


def _evidence(citation: Citation) -> str:
    return citation._evidence or citation.text  # set by CitationResolver.resolve


def cite(result: QueryResult, relevance: Relevance, *, computed: bool = False) -> QueryResult:
    """``result`` with the citations its answer uses (rules 1-4 above). ``relevance``: the
    similarity of each title to the question (called only when rule 4 applies);
    ``computed``: the answer counts or lists graph items rather than showing evidence."""
    if result.answer in ABSTENTIONS:
        return result.model_copy(update={"citations": []}) if result.citations else result
    cites = list(result.citations)
    if not computed:
        # an answer none of whose evidence reads as shown (rewritten wholesale) keeps it all
        cites = [c for c in cites if shown(_evidence(c), result.answer)] or cites
    seen: set[str] = set()
    kept: list[Citation] = []
    for c in cites:
        if c.document_id not in seen:
            seen.add(c.document_id)
            kept.append(c)
    if len(kept) > BOUND_FROM_DOCUMENTS:
        scores = relevance([c.title for c in kept])
        floor = min(max(scores) - TITLE_MARGIN, sorted(scores)[-BOUND_FROM_DOCUMENTS])
        kept = [c for c, s in zip(kept, scores, strict=True) if s >= floor]
    # plain copies: the evidence note is for assembling the answer, not part of the result
    return result.model_copy(update={"citations": [Citation(**c.model_dump()) for c in kept]})
