"""Learned answer choice: which of the best few candidates answers the question.

Local search ranks facts and source sentences by a weighted sum of similarity, BM25 and
bonuses; the best of them is the answer. Often the right sentence is among the next few and
the one on top is about the subject without answering ("Which company replaced X?" answered
by a sentence about X alone; "On what date did Y open?" by one that says "last week"). Each
candidate of the window (:data:`WINDOW` units from the top) is described by general
features (:data:`FEATURES`: its ranking score relative to the best, its place, similarity,
BM25, the share of the question's focus terms and anchor entities it mentions, whether it
holds a value of the asked answer type and an explicit one, how much of it is new to the
question, whether it echoes the question, fact or sentence, its time fit), and a conditional
logit model (weights in ``answer_rank_model.json``) scores them; the highest-scoring one
answers. No feature names a question's wording: the answer type is
:mod:`~knotwork.retrieval.intent`'s rule table, the rest is measured on the text.

The model is fitted by ``bench/fit_answer_rank.py`` on one development corpus (labels: the
candidates that state the gold answer) and reported on the other.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from knotwork.domain.models import Entity
from knotwork.retrieval.answerability import Ranked as Candidate
from knotwork.retrieval.answerability import name_keys_of
from knotwork.retrieval.intent import AnswerType, holds_answer, intent_of
from knotwork.retrieval.lexical import term_set, terms

__all__ = ["FEATURES", "MODEL", "WINDOW", "RankModel", "answer_first", "features", "load_model",
           "model_order", "runner_up"]

WINDOW = 8  # the candidates from the top that may answer

FEATURES: tuple[str, ...] = (
    "score",  # its ranking score as a share of the best's
    "first",  # it is the ranking's best
    "semantic",  # embedding similarity to the question
    "lexical",  # BM25 (with title and heading)
    "focus",  # share of the question's focus terms its text, title and heading mention
    "anchor",  # share of the question's named entities it mentions
    "typed",  # it states a value of the asked type the question does not state
    "explicit",  # that value is written out (a number, a capitalised name), not "last week"
    "novel",  # share of its terms the question does not use
    "fact",  # a graph fact, not a source sentence
    "time",  # its fit to the question's time constraint (0 when none)
)


@dataclass(frozen=True, slots=True)
class RankModel:
    features: tuple[str, ...]
    weights: tuple[float, ...]
    fitted_on: str

    def score(self, row: Sequence[float]) -> float:
        return sum(w * x for w, x in zip(self.weights, row, strict=True))


_MODEL_FILE = Path(__file__).with_name("answer_rank_model.json")


def load_model(path: Path = _MODEL_FILE) -> RankModel | None:
    """The fitted model, or None when there is none (the ranking stands)."""
    if not path.exists():
        return None
    raw = json.loads(path.read_text(encoding="utf-8"))
    model = RankModel(tuple(raw["features"]), tuple(float(w) for w in raw["weights"]),
                      str(raw["fitted_on"]))
    if set(model.features) - set(FEATURES) or len(model.weights) != len(model.features):
        raise ValueError(f"answer rank model {path}: unknown features or a weight missing")
    return model


MODEL = load_model()

_DIGIT = re.compile(r"\d")
_CAPITAL_WORD = re.compile(r"(?<![\w'’-])[A-Z][\w'’-]+")


def _mentions(entity: Entity, text: str) -> bool:
    lowered = text.lower()
    return any(len(n) > 2 and n.lower() in lowered for n in (entity.name, *entity.aliases))


def _explicit(kind: AnswerType, text: str, question: str) -> bool:
    """A value written out: digits for a date, amount or number; for a named type, a
    capitalised word the question does not use (not only a pronoun or "last week")."""
    if kind in (AnswerType.DATE, AnswerType.MONEY, AnswerType.NUMBER):
        return bool(_DIGIT.search(text))
    asked = {w.lower() for w in _CAPITAL_WORD.findall(question)}
    return any(w.lower() not in asked for w in _CAPITAL_WORD.findall(text))


def features(question: str, window: Sequence[Candidate], anchors: Sequence[Entity],
             focus: Sequence[str], lookup: Callable[[list[str]], list[Entity]]
             ) -> list[tuple[float, ...]]:
    """One row of :data:`FEATURES` values per candidate of ``window`` (best first)."""
    kind = intent_of(question).answer_type
    asked = set(terms(question))
    best = window[0].score if window and window[0].score > 0 else 1.0
    shown = [u.display or u.text for u in window]
    named: list[Entity] = []
    if kind in (AnswerType.PERSON, AnswerType.ORGANIZATION, AnswerType.PLACE):
        keys = sorted({k for text in shown for k in name_keys_of(text)})
        named = lookup(keys) if keys else []
    rows: list[tuple[float, ...]] = []
    for i, (u, text) in enumerate(zip(window, shown, strict=True)):
        where = f"{text} {u.context}"
        seen = term_set(where)
        mine = set(terms(text))
        typed = False
        if kind is not AnswerType.DESCRIPTION:
            keys = name_keys_of(text)
            here = [e for e in named if any(k in keys for k in e.name_keys)]
            typed = bool(holds_answer(kind, text, question, here, anchors))
        rows.append((
            max(0.0, u.score) / best,
            1.0 if i == 0 else 0.0,
            u.parts.get("semantic", 0.0),
            u.parts.get("lexical", 0.0),
            sum(1 for t in focus if t in seen) / len(focus) if focus else 0.0,
            sum(1 for a in anchors if _mentions(a, where)) / len(anchors) if anchors else 0.0,
            1.0 if typed else 0.0,
            1.0 if typed and _explicit(kind, text, question) else 0.0,
            len(mine - asked) / len(mine) if mine else 0.0,
            1.0 if u.fact is not None else 0.0,
            u.parts.get("time", 0.0),
        ))
    return rows


def model_order(question: str, ranked: Sequence[Candidate], anchors: Sequence[Entity],
                focus: Sequence[str], lookup: Callable[[list[str]], list[Entity]],
                model: RankModel | None = MODEL, window: int = WINDOW
                ) -> list[tuple[int, float]]:
    """The window's positions as the model ranks them, each with its probability (a softmax
    over the window), best first; ties keep the ranking's order. Empty without a model or
    with fewer than two candidates."""
    if model is None or len(ranked) < 2:
        return []
    top = list(ranked[:window])
    rows = features(question, top, anchors, focus, lookup)
    order = {f: i for i, f in enumerate(FEATURES)}
    scores = [model.score([row[order[f]] for f in model.features]) for row in rows]
    if not all(math.isfinite(s) for s in scores):
        return []
    high = max(scores)
    weights = [math.exp(s - high) for s in scores]
    total = sum(weights)
    return sorted(((i, w / total) for i, w in enumerate(weights)), key=lambda ip: (-ip[1], ip[0]))


def answer_first(question: str, ranked: Sequence[Candidate], anchors: Sequence[Entity],
                 focus: Sequence[str], lookup: Callable[[list[str]], list[Entity]],
                 model: RankModel | None = MODEL, window: int = WINDOW) -> int | None:
    """The position of the candidate the model prefers to the best-ranked one, or None."""
    ordered = model_order(question, ranked, anchors, focus, lookup, model, window)
    return ordered[0][0] if ordered and ordered[0][0] > 0 else None


def runner_up(ordered: Sequence[tuple[int, float]], share: float) -> int | None:
    """The position of the model's second choice when its probability is at least ``share``
    of the first's (the two are close: the answer shows both), else None."""
    if len(ordered) < 2 or share > 1.0:
        return None
    (_, first), (second, p) = ordered[0], ordered[1]
    return second if first > 0 and p >= share * first else None
