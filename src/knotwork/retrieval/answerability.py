"""Which candidate answers the question, and how likely it is right: a small logistic model.

Every candidate sentence or fact the local search ranked gets general features: its ranking
score and share of the best, whether it states a value of the asked answer type
(:mod:`knotwork.retrieval.intent`), how many of the question's anchor entities and focus terms
it (with its title and heading) mentions, whether it states the noun a "What <noun> …"
question asks for, its similarity to the question. :data:`MODEL` turns them into P(correct);
the best candidate by P answers, and when even that P is under the model's threshold the
question is not answered ("not stated"), with P as the confidence.

The weights and the threshold are data, fitted by ``tools/fit_answerability.py`` on one
development corpus and reported on the other (see the README's answer-quality section).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from knotwork.domain.models import Entity
from knotwork.retrieval.intent import AnswerType, asked_head, holds_answer
from knotwork.retrieval.lexical import term_set, terms

__all__ = ["ANSWERED", "FEATURES", "MODEL", "AnswerModel", "Candidate", "features"]

ANSWERED = 0.3  # a confidence below this reads as an abstention (clients, benchmarks, DRIFT)

FEATURES: tuple[str, ...] = ("score", "share", "typed", "untyped", "anchors", "focus", "head",
                             "semantic", "fact", "typed_any", "head_any")
# the last two are the question's: any of the best candidates typed / stating the asked noun


@dataclass(frozen=True, slots=True)
class Candidate:
    """What the model sees of one ranked unit."""

    text: str
    context: str
    score: float
    semantic: float
    is_fact: bool
    named: tuple[Entity, ...]  # known entities the text (or its context) names


@dataclass(frozen=True, slots=True)
class AnswerModel:
    weights: tuple[float, ...]  # one per FEATURES entry
    bias: float
    threshold: float  # abstain below this P(correct)
    fitted_on: str

    def confidence(self, probability: float) -> float:
        """The answer's reported confidence: the threshold maps to 0.3 (below it, callers and
        clients read an abstention), 0 to 0 and 1 to 1, linearly in between."""
        if probability < self.threshold:
            return ANSWERED * probability / self.threshold
        return ANSWERED + (1.0 - ANSWERED) * (probability - self.threshold) / (1.0 - self.threshold)

    def probability(self, x: Sequence[float]) -> float:
        z = self.bias + sum(w * v for w, v in zip(self.weights, x, strict=True))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def _mentions(entity: Entity, text: str) -> bool:
    lowered = text.lower()
    return any(len(n) > 2 and n.lower() in lowered for n in (entity.name, *entity.aliases))


def features(question: str, kind: AnswerType, anchors: Sequence[Entity], focus: Sequence[str],
             candidate: Candidate, top_score: float) -> tuple[float, ...]:
    """The candidate's own features (:data:`FEATURES` but the question's last two)."""
    where = f"{candidate.text} {candidate.context}"
    typed = holds_answer(kind, candidate.text, question, candidate.named, anchors)
    anchored = sum(1 for a in anchors if _mentions(a, where)) / len(anchors) if anchors else 1.0
    seen = term_set(where)
    covered = sum(1 for t in focus if t in seen) / len(focus) if focus else 1.0
    head = asked_head(question)
    head_seen = 1.0 if head is None or set(terms(head)) <= seen else 0.0
    return (candidate.score, candidate.score / top_score if top_score > 0 else 0.0,
            1.0 if typed else 0.0, 1.0 if typed is None else 0.0, anchored, covered, head_seen,
            candidate.semantic, 1.0 if candidate.is_fact else 0.0)


# fitted by tools/fit_answerability.py on the formal-voice development corpus (L2 0.01; threshold:
# the most unanswerable questions abstained with at most 8% of the answerable ones), reported
# on the casual-voice one, which it never saw (README, answer quality)
MODEL = AnswerModel(
    weights=(0.249, -0.129, 1.189, 0.645, 0.06, 0.956, 0.1, 0.418, 0.036, 0.427, 0.71),
    bias=-4.333, threshold=0.13, fitted_on="development corpus, formal voice")
