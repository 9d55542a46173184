"""Calibrated abstention: how likely the answer local search chose is right.

Local search ranks facts and source sentences and answers with the best; it does not know
when none of them answers the question ("Who runs the Oslo office?" when the graph has no
Oslo office gets a confident sentence about some other office). :class:`AnswerSupport`
measures the chosen answer and its retrieval in general terms, never the question's phrasing:
its ranking score and margin to the runner-up, its similarity to the question, whether it is
a fact of the relation asked for, how many of the question's focus terms and anchor entities
it (with its title and heading) mentions and how many the whole candidate pool does, whether
the question names things the graph and the answer do not, and whether it states a value of
the asked answer type (:mod:`knotwork.retrieval.intent`). A logistic model (:data:`MODEL`,
weights and threshold in ``answerability_model.json``) turns them into P(correct); below the
threshold the answer is withheld (:func:`calibrate`) and the trace says why. An answer that
lacks what the question presupposes or asks for
(:func:`knotwork.retrieval.answer_evidence.evidence_gap`: an unknown qualifier, the asked
date's or amount's modifier, a stated change) is withheld whatever P.

The model is fitted by ``bench/fit_answerability.py`` on one development corpus and reported
on the other. The answer chosen is never changed here: only whether it is given.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from knotwork.domain.models import Entity, Fact, QueryResult
from knotwork.resolution.normalize import normalize_name
from knotwork.retrieval.answer_evidence import evidence_gap
from knotwork.retrieval.intent import AnswerType, holds_answer, intent_of
from knotwork.retrieval.lexical import term_set

__all__ = ["FEATURES", "MODEL", "AnswerModel", "AnswerSupport", "calibrate", "load_model",
           "measure", "name_keys_of"]

FEATURES: tuple[str, ...] = (
    "score",  # the chosen unit's ranking score
    "margin",  # its lead over the runner-up
    "semantic",  # its embedding similarity to the question
    "lexical",  # its BM25 share (with title and heading)
    "fact",  # it is a graph fact, not a source sentence
    "relation",  # a fact of a relation the question names
    "focus_answer",  # share of the question's focus terms the answer (title, heading) mentions
    "focus_pool",  # share of them any candidate mentions
    "anchored",  # the question names an entity the graph knows
    "anchor_answer",  # share of those entities the answer mentions
    "novel_names",  # share of the question's capitalised words neither known nor in the answer
    "typed",  # the answer states a value of the asked type the question does not state
    "untyped",  # the question asks for a description: nothing to check
)


class Ranked(Protocol):
    text: str
    context: str
    display: str
    score: float
    parts: dict[str, float]
    fact: Fact | None


@dataclass(frozen=True, slots=True)
class AnswerSupport:
    """What the model sees of one chosen answer (one value per :data:`FEATURES` entry)."""

    answer_type: AnswerType
    rule: str | None  # the answer-type rule that fired
    values: tuple[float, ...]
    gap: str | None = None  # what the answer lacks (:func:`evidence_gap`): withheld whatever P

    def as_dict(self) -> dict[str, float]:
        return dict(zip(FEATURES, self.values, strict=True))


@dataclass(frozen=True, slots=True)
class AnswerModel:
    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    threshold: float  # withhold the answer below this P(correct)
    fitted_on: str  # which corpus voice, with the fit's figures

    def probability(self, support: AnswerSupport) -> float:
        values = support.as_dict()
        z = self.bias + sum(w * values[f] for f, w in zip(self.features, self.weights, strict=True))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


_MODEL_FILE = Path(__file__).with_name("answerability_model.json")


def load_model(path: Path = _MODEL_FILE) -> AnswerModel:
    raw = json.loads(path.read_text(encoding="utf-8"))
    model = AnswerModel(tuple(raw["features"]), tuple(float(w) for w in raw["weights"]),
                        float(raw["bias"]), float(raw["threshold"]), str(raw["fitted_on"]))
    unknown = set(model.features) - set(FEATURES)
    if unknown or len(model.weights) != len(model.features):
        raise ValueError(f"answerability model {path}: unknown features {sorted(unknown)} "
                         "or one weight per feature missing")
    return model


MODEL = load_model()

_SPAN = re.compile(r"[\w.+#&'’-]+")
_CAPITALISED = re.compile(r"(?<![\w'’-])[A-Z][\w'’-]*")
_CALENDAR = frozenset(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "i", "q1", "q2", "q3", "q4"])


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


def _mentions(entity: Entity, text: str) -> bool:
    lowered = text.lower()
    return any(len(n) > 2 and n.lower() in lowered for n in (entity.name, *entity.aliases))


def _share(found: int, total: int) -> float:
    return found / total if total else 1.0


def _novel_names(question: str, anchors: Sequence[Entity], answer: str) -> float:
    """Share of the question's capitalised words (not its first, not months) that no named
    entity's name holds and the answer does not state: "the Oslo office" with no Oslo."""
    words = [re.sub(r"['’]s?$", "", m.group(0)) for m in _CAPITALISED.finditer(question)]
    words = [w for i, w in enumerate(words)
             if len(w) > 1 and w.lower() not in _CALENDAR
             and not (i == 0 and question.lstrip().startswith(w))]
    if not words:
        return 0.0
    known = {t.lower() for a in anchors for n in (a.name, *a.aliases) for t in _SPAN.findall(n)}
    said = answer.lower()
    return sum(1 for w in words if w.lower() not in known and w.lower() not in said) / len(words)


def measure(question: str, ranked: Sequence[Ranked], chosen: Sequence[Ranked],
            anchors: Sequence[Entity], focus: Sequence[str], pool_terms: set[str],
            relation_asked: bool, lookup: Callable[[list[str]], list[Entity]]) -> AnswerSupport:
    """The support of an answer made of ``chosen`` out of ``ranked`` (best first).
    ``anchors``: the known entities the question names; ``focus``: its focus terms;
    ``pool_terms``: the terms of every candidate; ``relation_asked``: the best unit is a fact
    of a relation the question names; ``lookup``: entities by name keys (one call)."""
    intent = intent_of(question)
    top = ranked[0]
    runner_up = ranked[1].score if len(ranked) > 1 else 0.0
    shown = " ".join(u.display or u.text for u in chosen)
    where = " ".join(f"{u.display or u.text} {u.context}" for u in chosen)
    seen = term_set(where)
    typed: bool | None = None
    if intent.answer_type is not AnswerType.DESCRIPTION:
        keys = name_keys_of(shown)
        named = [e for e in lookup(sorted(keys)) if any(k in keys for k in e.name_keys)]
        typed = holds_answer(intent.answer_type, shown, question, named, anchors)
    values = (
        top.score,
        max(0.0, top.score - runner_up),
        top.parts.get("semantic", 0.0),
        top.parts.get("lexical", 0.0),
        1.0 if top.fact is not None else 0.0,
        1.0 if relation_asked else 0.0,
        _share(sum(1 for t in focus if t in seen), len(focus)),
        _share(sum(1 for t in focus if t in pool_terms), len(focus)),
        1.0 if anchors else 0.0,
        _share(sum(1 for a in anchors if _mentions(a, where)), len(anchors)) if anchors else 0.0,
        _novel_names(question, anchors, where),
        1.0 if typed else 0.0,
        1.0 if typed is None else 0.0,
    )
    gap = evidence_gap(question, shown, where, anchors, pool_terms)
    return AnswerSupport(intent.answer_type, intent.rule, values, gap)


def calibrate(result: QueryResult, support: AnswerSupport | None, no_answer: str,
              model: AnswerModel = MODEL) -> QueryResult:
    """The answer, or its abstention when the model finds it unlikely to be right; the trace
    says which (with the answer-type rule that fired). The context stays: it shows what was
    found, and the answer no longer claims it. The citations are dropped by the engine's
    citation rule (retrieval/cited.py): an abstention cites nothing."""
    if support is None:
        return result
    p = model.probability(support)
    rule = f"answer type {support.answer_type.value} (rule {support.rule or 'none'})"
    if support.gap is not None:
        return result.model_copy(update={
            "answer": no_answer, "confidence": round(min(result.confidence, 0.1, p), 3),
            "reasoning_trace": [*result.reasoning_trace, f"abstained: {rule}; {support.gap}"]})
    if p >= model.threshold:
        return result.model_copy(update={"reasoning_trace": [
            *result.reasoning_trace, f"{rule}; P(correct) {p:.2f} >= {model.threshold:.2f}"]})
    return result.model_copy(update={
        "answer": no_answer, "confidence": round(min(result.confidence, 0.1, p), 3),
        "reasoning_trace": [*result.reasoning_trace,
                            f"abstained: {rule}; P(correct) {p:.2f} < {model.threshold:.2f}"]})
