"""Typed answer selection: the best unit that holds a value of the asked type answers.

"Who approved the change?" is answered by a sentence naming a person other than the ones the
question names; "On what date did the office open?" by one stating a date. When the best
ranked unit holds no such value and a unit a little below it does, that unit answers
(:func:`typed_first`). Which type a question asks for is :mod:`~knotwork.retrieval.intent`'s
rule table; what holds it is :func:`~knotwork.retrieval.intent.holds_answer`. The window
(how far down, how much weaker) is :data:`TYPED_WINDOW` / :data:`TYPED_SHARE`: set a priori,
not fitted. Whether the question is answerable at all stays the answerability model's call on
the ranking as it was before the swap (local search passes it that ranking), so a typed unit
found for an unanswerable question does not turn its abstention into an answer.

A question that restates what a document says ("The runbook says X. What does it say as of
May?") is not answered by X: a unit most of whose terms the question's premise already states
echoes it (:func:`echoes_premise`) and yields to the next one that does not.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from knotwork.domain.models import Entity
from knotwork.retrieval.answerability import name_keys_of
from knotwork.retrieval.intent import AnswerType, holds_answer, intent_of
from knotwork.retrieval.lexical import terms
from knotwork.retrieval.time_constraint import asked_part

__all__ = ["ECHO_SHARE", "TYPED_SHARE", "TYPED_WINDOW", "echoes_premise", "premise", "typed_first"]

TYPED_WINDOW = 8  # how many units below the best may answer instead
TYPED_SHARE = 0.75  # and within this share of the best's score
ECHO_SHARE = 0.7  # a unit with this share of its terms in the premise echoes it


class Ranked(Protocol):
    text: str
    display: str
    score: float


def premise(question: str) -> str:
    """The sentences of the question before the one that asks ("The charter names A as
    lead. Who led it in May?" → "The charter names A as lead."); "" when there are none."""
    asking = asked_part(question)
    if asking == question:
        return ""
    return question[: question.rfind(asking)].strip()


def echoes_premise(text: str, stated: str, share: float = ECHO_SHARE) -> bool:
    """Whether ``text`` mostly restates the question's premise ``stated``."""
    said = set(terms(stated))
    mine = set(terms(text))
    return bool(said) and len(mine) >= 3 and len(mine & said) / len(mine) >= share


def typed_first(
    question: str,
    ranked: Sequence[Ranked],
    anchors: Sequence[Entity],
    lookup: Callable[[list[str]], list[Entity]],
    *,
    window: int = TYPED_WINDOW,
    share: float = TYPED_SHARE,
) -> int | None:
    """The position of the unit that should answer instead of the best one, or None.

    The best stands when it holds a value of the asked type (or the question asks for a
    description) and does not echo the question's premise; else the first of the next
    ``window`` units scoring within ``share`` of it that does both."""
    if len(ranked) < 2:
        return None
    kind = intent_of(question).answer_type
    stated = premise(question)
    if kind is AnswerType.DESCRIPTION and not stated:
        return None

    def fits(unit: Ranked) -> bool:
        shown = unit.display or unit.text
        if stated and echoes_premise(shown, stated):
            return False
        if kind is AnswerType.DESCRIPTION:
            return True
        keys = name_keys_of(shown)
        named = [e for e in lookup(sorted(keys)) if any(k in keys for k in e.name_keys)]
        return bool(holds_answer(kind, shown, question, named, anchors))

    if fits(ranked[0]):
        return None
    best = ranked[0].score
    return next(
        (i for i, u in enumerate(ranked[1 : window + 1], 1) if u.score >= best * share and fits(u)),
        None,
    )
