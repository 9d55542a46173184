"""Fit the answer choice model (knotwork.retrieval.answer_rank) on one corpus, report another.

    python -m bench.fit_answer_rank FIT_DATA_DIR FIT_CORPUS [REPORT_DATA_DIR REPORT_CORPUS]
        [--write] [--voice formal] [--cache DIR] [--l2 0.05]

A data dir is one a corpus was ingested into (``corpus_eval.py CORPUS --keep DIR``); a corpus
dir holds ``questions.jsonl``. Every answerable question (not ``negative``, not ``global``) is
asked in AUTO mode with the model switched off; each local search it runs yields its window of
candidates (:data:`~knotwork.retrieval.answer_rank.WINDOW` from the top of the ranking as it
stood) with their :data:`~knotwork.retrieval.answer_rank.FEATURES`, each labelled 1 when its
text states the gold answer (corpus_eval's rule: the answer, an alias, or every
``must_include`` group). Windows with no such candidate teach nothing and are left out. A
conditional logit (softmax over a window's candidates, L2) is fitted on the first corpus.
Printed for each corpus: windows whose best-ranked candidate states the answer, before and
with the model, and how many the model turned from right to wrong.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import knotwork.retrieval.local as local_module
from bench.fit_answerability import states_gold
from knotwork import Knotwork, Settings
from knotwork.domain.models import QueryMode
from knotwork.retrieval import answer_rank
from knotwork.retrieval.answer_rank import FEATURES, WINDOW

ASKED = ("local", "multi_hop", "temporal", "aggregation")


@dataclass(frozen=True, slots=True)
class Window:
    qid: str
    rows: list[tuple[float, ...]]
    labels: list[int]


def collect(data_dir: Path, corpus: Path, cache: Path | None = None) -> list[Window]:
    """Every local search window of every answerable question; cached as JSON if asked."""
    if cache is not None and cache.exists():
        return [Window(w["qid"], [tuple(r) for r in w["rows"]], w["labels"])
                for w in json.loads(cache.read_text())]
    questions = [json.loads(x) for x in (corpus / "questions.jsonl").read_text().splitlines()
                 if x.strip()]
    windows: list[Window] = []
    current: dict[str, object] = {}

    def spy(question, ranked, anchors, focus, lookup, model=None, window=WINDOW):
        top = list(ranked[:window])
        rows = answer_rank.features(question, top, anchors, focus, lookup)
        labels = [1 if states_gold(current, u.display or u.text) else 0 for u in top]
        windows.append(Window(str(current["id"]), rows, labels))
        return []  # the ranking stands: the windows are those of the pipeline as it was

    original = local_module.model_order
    local_module.model_order = spy  # type: ignore[assignment]
    try:
        with Knotwork(Settings(data_dir=data_dir)) as kw:
            for q in questions:
                if q["category"] in ASKED:
                    current.clear()
                    current.update(q)
                    kw.query(q["question"], mode=QueryMode.AUTO)
    finally:
        local_module.model_order = original  # type: ignore[assignment]
    if cache is not None:
        cache.write_text(json.dumps([{"qid": w.qid, "rows": [list(r) for r in w.rows],
                                      "labels": w.labels} for w in windows]))
    return windows


def teaching(windows: list[Window]) -> list[Window]:
    return [w for w in windows if any(w.labels) and len(w.rows) > 1]


def fit(windows: list[Window], l2: float, iters: int = 3000, lr: float = 0.5) -> np.ndarray:
    """Weights of a conditional logit: P(candidate) = softmax over its window of w·x; the
    likelihood of a window is the probability of its candidates that state the answer."""
    data = [(np.array(w.rows, float), np.array(w.labels, float)) for w in teaching(windows)]
    w = np.zeros(len(FEATURES))
    for _ in range(iters):
        grad = np.zeros_like(w)
        for x, y in data:
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            q = p * y / (p * y).sum()  # the posterior over the window's right candidates
            grad += x.T @ (p - q)
        w -= lr * (grad / len(data) + l2 * w)
    return w


def report(windows: list[Window], weights: np.ndarray | None, share: float | None = None) -> str:
    """Windows whose best-ranked candidate states the answer, the model's choice, and with
    ``share`` also the windows whose answer shows it with the model's close second
    (:func:`~knotwork.retrieval.answer_rank.runner_up`: probability >= share x the first's)."""
    taught = teaching(windows)
    before = sum(w.labels[0] for w in taught)
    after = lost = paired = added = 0
    for w in taught:
        scores = np.array(w.rows, float) @ weights if weights is not None else np.zeros(len(w.rows))
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        best = order[0]
        after += w.labels[best]
        lost += 1 if w.labels[0] and not w.labels[best] else 0
        if share is not None:
            p = np.exp(scores - scores.max())
            second = order[1] if len(order) > 1 and p[order[1]] >= share * p[best] else None
            added += second is not None
            paired += 1 if w.labels[best] or (second is not None and w.labels[second]) else 0
    line = (f"{len(taught)} windows with a right candidate (of {len(windows)}): best-ranked "
            f"right {before}, model's choice right {after} (right→wrong {lost})")
    if share is not None:
        line += f"; with the close second (share {share}): right {paired}, second shown in {added}"
    return line


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fit_data", type=Path)
    ap.add_argument("fit_corpus", type=Path)
    ap.add_argument("report_data", type=Path, nargs="?")
    ap.add_argument("report_corpus", type=Path, nargs="?")
    ap.add_argument("--l2", type=float, default=0.05)
    ap.add_argument("--cache", type=Path, default=None, help="cache the windows here as JSON")
    ap.add_argument("--voice", default="formal", help="the fitted corpus's voice, for the record")
    ap.add_argument("--share", type=float, default=None,
                    help="also report the answers with the model's close second (runner_up_share)")
    ap.add_argument("--write", action="store_true", help="store the model in answer_rank_model.json")
    args = ap.parse_args()

    def windows_of(data: Path, corpus: Path) -> list[Window]:
        cache = args.cache / f"{corpus.name}-rank-windows.json" if args.cache else None
        return collect(data, corpus, cache)

    fitted = windows_of(args.fit_data, args.fit_corpus)
    weights = fit(fitted, args.l2)
    print("weights:", ", ".join(f"{f} {w:+.3f}" for f, w in zip(FEATURES, weights, strict=True)))
    print(f"{args.fit_corpus.name} (fitted): {report(fitted, weights, args.share)}")
    if args.report_data and args.report_corpus:
        held = windows_of(args.report_data, args.report_corpus)
        print(f"{args.report_corpus.name} (held out): {report(held, weights, args.share)}")
    if args.write:
        line = report(fitted, weights)
        path = Path(answer_rank.__file__).with_name("answer_rank_model.json")
        path.write_text(json.dumps({
            "features": list(FEATURES), "weights": [round(float(w), 4) for w in weights],
            "fitted_on": f"fitted on the {args.voice}-voice development corpus "
                         f"(L2 {args.l2}): {line}"}, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
