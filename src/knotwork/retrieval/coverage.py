"""Is the question about something the evidence never mentions? Its focus terms (content
words outside the named entities' names and its time phrase) against the candidates' text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from knotwork.domain.models import Entity
from knotwork.retrieval.lexical import term_set, terms
from knotwork.retrieval.temporal_question import question_time, without_time

__all__ = ["focus_terms", "uncovered_terms"]


class Evidence(Protocol):
    text: str
    context: str


# the question's own wording, not something the evidence must say ("What does X stand for?")
_QUESTION_WORDS = frozenset({"many", "much", "long", "often", "whose", "happen", "happened", "get",
                             "part", "stand", "mean", "meant"})


def focus_terms(question: str, seeds: dict[str, tuple[Entity, float]]) -> list[str]:
    """The question's content terms that are not part of a named entity's name (nor of its
    time phrase: "in April 2023" is the as_of, not something the evidence must say)."""
    stated = question_time(question)
    if stated is not None:
        question = without_time(question, stated)
    named = {t for e, score in seeds.values() if score >= 0.8 for n in [e.name, *e.aliases]
             for t in terms(n)}
    return [t for t in dict.fromkeys(terms(question))
            if t.isalpha() and len(t) > 2 and t not in named and t not in _QUESTION_WORDS]


def uncovered_terms(question: str, seeds: dict[str, tuple[Entity, float]], pool: Sequence[Evidence]) -> list[str]:
    """Focus terms that no candidate evidence (text, title, heading) contains: the question
    asks about something (a salary, a CFO, a Tokyo office) the graph knows nothing of."""
    seen = term_set(*(x for u in pool for x in (u.text, u.context)))
    return [t for t in focus_terms(question, seeds) if t not in seen]
