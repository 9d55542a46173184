"""Abstention for answers assembled from communities (GLOBAL, DRIFT), with no LLM.

An answer is unsupported when the question names something the graph does not know and no
evidence mentions it, or when most of the question's focus terms (its content words, minus
the names of known entities and words that only say how to answer) appear nowhere in the
evidence the answer rests on. Local search applies the same test to its candidate pool.
"""

from __future__ import annotations

from collections.abc import Sequence

from knotwork.domain.models import Entity, QueryResult
from knotwork.retrieval.drift import GENERIC
from knotwork.retrieval.global_rank import evidence_terms
from knotwork.retrieval.lexical import terms
from knotwork.retrieval.local import NO_ANSWER
from knotwork.retrieval.question import analyze

_QUESTION_WORDS = frozenset(terms("many much long often whose happen happened get"))


def focus(question: str, named: Sequence[Entity]) -> list[str]:
    name_terms = {t for e in named for n in [e.name, *e.aliases] for t in terms(n)}
    return [t for t in dict.fromkeys(terms(question))
            if t.isalpha() and len(t) > 2 and t not in name_terms and t not in GENERIC
            and t not in _QUESTION_WORDS]


def evidence_of(result: QueryResult) -> list[str]:
    return [result.answer, *(c.text for c in result.citations), *(p.text for p in result.key_points)]


def unsupported(question: str, named: Sequence[Entity], unknown_names: Sequence[str],
                evidence: Sequence[str], share: float = 0.5) -> str | None:
    """Why the evidence does not support an answer to the question, or None."""
    text = " ".join(evidence).lower()
    missing_names = [n for n in unknown_names if n.lower() not in text]
    if missing_names:
        return f"nothing is known about {', '.join(missing_names)}"
    wanted = focus(question, named)
    seen = set(terms(text))
    # an analyst topic ("the main risks") is mentioned by its evidence words (an outage, a
    # delay), which is how a corpus states risks; the word itself seldom appears
    missing = [t for t in wanted if t not in seen and not evidence_terms(t) & seen]
    if wanted and missing and not analyze(question).types and len(missing) > share * len(wanted):
        return f"the evidence never mentions {', '.join(missing)}"
    return None


def abstain(result: QueryResult, why: str) -> QueryResult:
    return result.model_copy(update={
        "answer": NO_ANSWER, "citations": [], "confidence": min(result.confidence, 0.1),
        "reasoning_trace": [*result.reasoning_trace, f"abstained: {why}"]})
