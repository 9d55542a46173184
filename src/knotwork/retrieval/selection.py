"""Answer selection over the ranked candidates with the answerability model.

The local search ranks units by similarity and bonuses; :func:`select` re-orders its best
ones by P(correct) from :mod:`knotwork.retrieval.answerability` (typed answer present, anchors
and focus terms mentioned, …) and says how likely the best is right. The caller answers with
the new order, or abstains when that probability is below the model's threshold.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from knotwork.domain.models import Entity, Fact
from knotwork.resolution.normalize import normalize_name
from knotwork.retrieval.answerability import MODEL, AnswerModel, Candidate, features
from knotwork.retrieval.intent import AnswerType, intent_of

__all__ = ["Selection", "name_keys_of", "select", "what_is_missing"]


class Ranked(Protocol):
    text: str
    display: str
    context: str
    score: float
    parts: dict[str, float]
    fact: Fact | None


@dataclass(frozen=True, slots=True)
class Selection:
    order: list[int]  # positions in the ranking, best by P first (the top ``k`` only)
    probability: float  # P(correct) of the best
    kind: AnswerType
    rule: str | None  # the answer-type rule that fired
    vectors: list[tuple[float, ...]]  # the features of ``order``'s candidates, in ranking order


_SPAN = re.compile(r"[\w.+#&'’-]+")


def name_keys_of(text: str) -> dict[str, str]:
    """Name keys of the capitalised 1-4 word spans of a text (single words also as
    ``first:``): what an entity lookup by name needs to find the entities a text names."""
    words = _SPAN.findall(text)
    keys: dict[str, str] = {}
    for n in range(1, 5):
        for i in range(len(words) - n + 1):
            if not (words[i][:1].isupper() or words[i][:1].isdigit() or words[i][:1] == "@"):
                continue
            surface = " ".join(words[i : i + n])
            key = normalize_name(surface)
            if key and len(key) >= 2:
                keys.setdefault(key, surface)
                if n == 1:
                    keys.setdefault(f"first:{key}", surface)
    return keys


def select(question: str, ranked: Sequence[Ranked], anchors: Sequence[Entity],
           focus: Sequence[str], lookup: Callable[[list[str]], list[Entity]],
           model: AnswerModel = MODEL, k: int = 12) -> Selection:
    """The best ``k`` candidates re-ordered by P(correct) (ties: the ranking's order).
    ``lookup``: entities by name keys (one call for every candidate)."""
    intent = intent_of(question)
    top = list(ranked[:k])
    if not top:
        return Selection([], 0.0, intent.answer_type, intent.rule, [])
    per_text = [name_keys_of(f"{u.display or u.text} {u.context}") for u in top]
    found = lookup(sorted({key for keys in per_text for key in keys}))
    vectors: list[tuple[float, ...]] = []
    for u, keys in zip(top, per_text, strict=True):
        named = tuple(e for e in found if any(key in keys for key in e.name_keys))
        cand = Candidate(u.display or u.text, u.context, u.score, u.parts.get("semantic", 0.0),
                         u.fact is not None, named)
        vectors.append(features(question, intent.answer_type, anchors, focus, cand,
                                top[0].score))
    typed_any = max(x[2] + x[3] for x in vectors)
    head_any = max(x[6] for x in vectors)
    vectors = [(*x, typed_any, head_any) for x in vectors]
    probs = [model.probability(x) for x in vectors]
    order = sorted(range(len(top)), key=lambda i: (-probs[i], i))
    return Selection(order, probs[order[0]], intent.answer_type, intent.rule, vectors)


_WHAT: dict[AnswerType, str] = {
    AnswerType.PERSON: "who it is", AnswerType.ORGANIZATION: "which organisation it is",
    AnswerType.PLACE: "the place", AnswerType.DATE: "the date", AnswerType.MONEY: "the amount",
    AnswerType.NUMBER: "the number", AnswerType.DESCRIPTION: "an answer",
}


def what_is_missing(kind: AnswerType) -> str:
    """The abstention in words: "I could not find the amount …"."""
    return f"I could not find {_WHAT[kind]} in the knowledge graph: the evidence does not state it."
