"""Fit the answerability model (knotwork.retrieval.answerability) on one corpus, report another.

    python -m bench.fit_answerability FIT_DATA_DIR FIT_CORPUS [REPORT_DATA_DIR REPORT_CORPUS]
        [--write] [--voice formal] [--cache DIR] [--l2 0.1] [--max-false 0.04]

A data dir is one a corpus was ingested into (``corpus_eval.py CORPUS --keep DIR``); a corpus
dir holds ``questions.jsonl`` (``question``, ``category``, ``answer``, ``answer_aliases``,
``must_include``). Every question is asked in AUTO mode with the model's gate open; each one
local search answers yields its :class:`AnswerSupport`, labelled 0 when the question has no
answer (category ``negative``) and 1 otherwise; whether the answer holds the gold answer
(corpus_eval's rule: within the first 120 words) is recorded too. A logistic regression (L2,
features standardised, each weight's sign fixed by :data:`SIGNS`) is fitted on the first
corpus; the threshold is the one that withholds the most unanswerable questions while
withholding at most ``--max-false`` of all answerable questions and no correct answer. Printed for each corpus: unanswerable questions withheld, answerable ones
withheld (and correct ones among them), and each answer-type rule's hit rate (questions it
fired on, answers of the asked type among them). ``--write`` stores the model in
``answerability_model.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import knotwork.retrieval.engine as engine_module
from knotwork import Knotwork, Settings
from knotwork.domain.models import QueryMode, QueryResult
from knotwork.retrieval import answerability
from knotwork.retrieval.answerability import FEATURES, AnswerModel, AnswerSupport
from knotwork.retrieval.intent import AnswerType

ANSWER_WORDS = 120
# the direction each feature may push P(answerable): more support never lowers it, a name the
# graph and the answer lack never raises it
SIGNS: dict[str, int] = {f: 1 for f in FEATURES} | {"novel_names": -1}


@dataclass(frozen=True, slots=True)
class Row:
    qid: str
    category: str
    support: AnswerSupport | None  # None: not a local search answer (the model never sees it)
    correct: bool

    @property
    def negative(self) -> bool:
        return self.category == "negative"


def _norm(s: str) -> str:
    s = "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))
    s = s.lower().replace("\u2019", "'")
    return re.sub(r"\s+", " ", re.sub(r"[^a-z0-9.:%'/ -]+", " ", s)).strip()


def _correct(q: dict[str, object], answer: str) -> bool:
    if q["category"] == "negative":
        return False
    return states_gold(q, " ".join(answer.split()[:ANSWER_WORDS]))


def states_gold(q: dict[str, object], text: str) -> bool:
    """The corpus eval's answer rule: the gold answer (an alias, its base without a
    parenthesis, or every ``must_include`` group) appears in ``text``."""
    hay = _norm(text)
    groups = q.get("must_include")
    if isinstance(groups, list) and groups:
        return all(any(_norm(a) in hay for a in str(g).split("|")) for g in groups)
    gold = str(q["answer"])
    golds = [gold, *[str(a) for a in q.get("answer_aliases") or []]]  # type: ignore[attr-defined]
    base = re.sub(r"\s*\(.*?\)\s*", " ", gold).strip()
    golds += [base] if base and base != gold else []
    return any(_norm(g) and _norm(g) in hay for g in golds)


def collect(data_dir: Path, corpus: Path, cache: Path | None = None) -> list[Row]:
    """Every question's row; with ``cache``, read from (or written to) that JSON file."""
    if cache is not None and cache.exists():
        return [Row(r["qid"], r["category"], None if r["values"] is None else AnswerSupport(
            AnswerType(r["type"]), r["rule"], tuple(r["values"])), r["correct"])
            for r in json.loads(cache.read_text())]
    rows = _ask(data_dir, corpus)
    if cache is not None:
        cache.write_text(json.dumps([
            {"qid": r.qid, "category": r.category, "correct": r.correct,
             "type": r.support.answer_type.value if r.support else None,
             "rule": r.support.rule if r.support else None,
             "values": list(r.support.values) if r.support else None} for r in rows]))
    return rows


def _ask(data_dir: Path, corpus: Path) -> list[Row]:
    questions = [json.loads(x) for x in (corpus / "questions.jsonl").read_text().splitlines()
                 if x.strip()]
    seen: list[AnswerSupport | None] = []

    def spy(result: QueryResult, support: AnswerSupport | None, no_answer: str,
            model: AnswerModel = answerability.MODEL) -> QueryResult:
        seen.append(support)
        return result  # the gate stays open: every answer is scored as it would be given

    original = engine_module.calibrate
    engine_module.calibrate = spy  # type: ignore[assignment]
    rows: list[Row] = []
    try:
        with Knotwork(Settings(data_dir=data_dir)) as kw:
            for q in questions:
                seen.clear()
                result = kw.query(q["question"], mode=QueryMode.AUTO)
                rows.append(Row(q["id"], q["category"], seen[-1] if seen else None,
                                _correct(q, result.answer)))
    finally:
        engine_module.calibrate = original  # type: ignore[assignment]
    return rows


def fit(rows: list[Row], l2: float, iters: int = 4000, lr: float = 0.2
        ) -> tuple[np.ndarray, float]:
    """Raw-feature weights and bias of an L2 logistic regression fitted on standardised
    features (negatives weighted so both classes of question count alike)."""
    rows = [r for r in rows if r.support is not None]
    x = np.array([r.support.values for r in rows if r.support is not None], float)
    y = np.array([0.0 if r.negative else 1.0 for r in rows])
    mean, std = x.mean(axis=0), x.std(axis=0)
    std[std == 0] = 1.0
    z = (x - mean) / std
    n_neg = sum(r.negative for r in rows) or 1
    weight = np.array([len(rows) / (2 * n_neg) if r.negative else 1.0 for r in rows])
    sign = np.array([SIGNS[f] for f in FEATURES], float)
    w, b = np.zeros(z.shape[1]), 0.0
    for _ in range(iters):
        g = (1 / (1 + np.exp(-(z @ w + b))) - y) * weight
        w -= lr * (z.T @ g / len(y) + l2 * w)
        w = np.where(w * sign < 0, 0.0, w)  # each feature's direction is known: only its size is fitted
        b -= lr * float(g.mean())
    raw = w / std
    return raw, float(b - raw @ mean)


@dataclass(frozen=True, slots=True)
class Figures:
    negatives: int
    negatives_withheld: int
    answerable: int
    withheld: int
    correct_withheld: int

    def line(self) -> str:
        return (f"unanswerable withheld {self.negatives_withheld}/{self.negatives}; answerable "
                f"withheld {self.withheld}/{self.answerable} (correct answers among them: "
                f"{self.correct_withheld})")


def figures(rows: list[Row], model: AnswerModel) -> Figures:
    withheld = [r for r in rows
                if r.support is not None and model.probability(r.support) < model.threshold]
    return Figures(sum(r.negative for r in rows), sum(r.negative for r in withheld),
                   sum(not r.negative for r in rows), sum(not r.negative for r in withheld),
                   sum(r.correct for r in withheld))


def threshold_for(rows: list[Row], model: AnswerModel, max_false: float) -> float:
    """The threshold withholding the most unanswerable questions with at most ``max_false``
    of the answerable ones withheld and no correct answer; the middle of the best range."""
    probs = sorted({round(model.probability(r.support), 4) for r in rows if r.support is not None})
    cuts = [0.0] + [(a + b) / 2 for a, b in itertools.pairwise(probs)]
    best: tuple[int, list[float]] = (-1, [])
    answerable = sum(not r.negative for r in rows) or 1
    for t in cuts:
        f = figures(rows, AnswerModel(model.features, model.weights, model.bias, t, ""))
        if f.withheld / answerable > max_false or f.correct_withheld:
            continue
        if f.negatives_withheld > best[0]:
            best = (f.negatives_withheld, [t])
        elif f.negatives_withheld == best[0]:
            best[1].append(t)
    return best[1][len(best[1]) // 2] if best[1] else 0.0


def rule_hits(rows: list[Row]) -> dict[str, str]:
    """Per answer-type rule: questions it fired on, and answers stating the asked type."""
    out: dict[str, list[int]] = {}
    typed = FEATURES.index("typed")
    for r in rows:
        if r.support is None:
            continue
        hit = out.setdefault(r.support.rule or "none (description)", [0, 0])
        hit[0] += 1
        hit[1] += int(r.support.values[typed] > 0)
    return {k: f"fired {n}, typed answer {t}" for k, (n, t) in sorted(out.items())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("fit", nargs=2, type=Path, metavar=("FIT_DATA_DIR", "FIT_CORPUS"))
    ap.add_argument("report", nargs="*", type=Path, metavar="REPORT_DATA_DIR REPORT_CORPUS")
    ap.add_argument("--l2", type=float, default=0.1)
    ap.add_argument("--max-false", type=float, default=0.04)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--voice", default="held-in", help="the fit corpus's voice, for the provenance")
    ap.add_argument("--cache", type=Path, help="keep each corpus's rows in this dir (refit fast)")
    a = ap.parse_args()
    def cached(corpus: Path) -> Path | None:
        return a.cache / f"{corpus.name}-answerability-rows.json" if a.cache else None

    train = collect(*a.fit, cache=cached(a.fit[1]))
    w, b = fit(train, a.l2)
    model = AnswerModel(FEATURES, tuple(round(float(v), 4) for v in w), round(b, 4), 0.0, "")
    t = round(threshold_for(train, model, a.max_false), 4)
    voice = a.fit[1].name  # the model's provenance names the corpus voice (--voice), not the corpus
    got = figures(train, AnswerModel(FEATURES, model.weights, model.bias, t, ""))
    model = AnswerModel(FEATURES, model.weights, model.bias, t,
                        f"fitted on the {a.voice} development corpus "
                        f"({sum(r.support is not None for r in train)} local answers, "
                        f"L2 {a.l2}): {got.line()}")
    print(json.dumps(dict(zip(FEATURES, model.weights, strict=True)), indent=1))
    print(f"bias {model.bias}  threshold {t}")
    print(f"{voice} (fitted): {got.line()}")
    for k, v in rule_hits(train).items():
        print(f"  rule {k}: {v}")
    if len(a.report) >= 2:
        held = collect(a.report[0], a.report[1], cache=cached(a.report[1]))
        print(f"{a.report[1].name} (held out): {figures(held, model).line()}")
        for k, v in rule_hits(held).items():
            print(f"  rule {k}: {v}")
    if a.write:
        path = Path(answerability.__file__).with_name("answerability_model.json")
        path.write_text(json.dumps({"features": list(model.features), "weights": list(model.weights),
                                    "bias": model.bias, "threshold": model.threshold,
                                    "fitted_on": model.fitted_on}, indent=1) + "\n")
        print(f"written: {path}")


if __name__ == "__main__":
    main()
