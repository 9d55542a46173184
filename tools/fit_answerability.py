"""Fit the answerability model (knotwork.retrieval.answerability.MODEL) on one corpus.

    python tools/fit_answerability.py DATA_DIR QUESTIONS.jsonl [--test DATA_DIR2 QUESTIONS2.jsonl]

DATA_DIR: a data dir the corpus was ingested into (``corpus_eval.py --keep DIR``);
QUESTIONS.jsonl: the corpus questions (``question``, ``category``, ``answer``,
``answer_aliases``, ``must_include``). Every non-global question is asked in AUTO mode; the
candidates the local search hands to answer selection are labelled 1 when they state the gold
answer. A logistic regression (L2) is fitted on them; the threshold is the one that abstains
on the most unanswerable (``negative``) questions while abstaining on at most 8% of the
answerable ones. With ``--test`` the same figures are reported on a corpus it was not fitted on.
Prints the weights to paste into MODEL.
"""

from __future__ import annotations

import argparse
import json
import re
import unicodedata
from pathlib import Path

import numpy as np

import knotwork.retrieval.local as local_module
from knotwork import Knotwork, Settings
from knotwork.retrieval.answerability import FEATURES

Row = tuple[str, str, list[float], int]  # question id, category, features, label


def _norm(s: str) -> str:
    s = "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))
    return re.sub(r"\s+", " ", re.sub(r"[^a-z0-9.:%'/ -]+", " ", s.lower())).strip()


def _label(q: dict[str, object], text: str) -> int:
    hay = _norm(text)
    if q["category"] == "negative":
        return 0
    groups = q.get("must_include") or []
    if isinstance(groups, list) and groups:
        return int(any(any(_norm(a) in hay for a in str(g).split("|")) for g in groups))
    golds = [str(q["answer"]), *[str(a) for a in q.get("answer_aliases") or []]]  # type: ignore[union-attr]
    return int(any(_norm(g) and _norm(g) in hay for g in golds))


def collect(data_dir: Path, questions: Path) -> list[Row]:
    qs = [json.loads(x) for x in questions.read_text().splitlines() if x.strip()]
    captured: dict[str, tuple[list[tuple[float, ...]], list[str]]] = {}
    original = local_module.select

    def spy(question, ranked, *args, **kwargs):  # type: ignore[no-untyped-def]
        picked = original(question, ranked, *args, **kwargs)
        texts = [u.display or u.text for u in ranked[: len(picked.vectors)]]
        captured.setdefault(question, (picked.vectors, texts))
        return picked

    local_module.select = spy  # type: ignore[assignment]
    rows: list[Row] = []
    try:
        with Knotwork(Settings(data_dir=data_dir)) as kw:
            for q in qs:
                if q["category"] == "global":
                    continue
                captured.clear()
                kw.query(q["question"], mode="auto")
                vectors, texts = captured.get(q["question"], ([], []))
                rows += [(q["id"], q["category"], list(v), _label(q, t))
                         for v, t in zip(vectors, texts, strict=True)]
    finally:
        local_module.select = original  # type: ignore[assignment]
    return rows


def fit(rows: list[Row], l2: float = 0.01, iters: int = 20000, lr: float = 0.5
        ) -> tuple[np.ndarray, float]:
    x = np.array([r[2] for r in rows], float)
    y = np.array([r[3] for r in rows], float)
    weight = np.array([2.0 if r[1] == "negative" else 1.0 for r in rows])
    w, b = np.zeros(x.shape[1]), 0.0
    for _ in range(iters):
        g = (1 / (1 + np.exp(-(x @ w + b))) - y) * weight
        w -= lr * (x.T @ g / len(y) + l2 * w)
        b -= lr * float(g.mean())
    return w, b


def figures(rows: list[Row], w: np.ndarray, b: float, threshold: float) -> dict[str, object]:
    by: dict[str, list[Row]] = {}
    for r in rows:
        by.setdefault(r[0], []).append(r)
    neg = neg_abstained = answerable = false_abstained = chosen_ok = 0
    for group in by.values():
        p = [1 / (1 + np.exp(-(np.dot(w, r[2]) + b))) for r in group]
        best = int(np.argmax(p))
        if group[0][1] == "negative":
            neg += 1
            neg_abstained += p[best] < threshold
        else:
            answerable += 1
            false_abstained += p[best] < threshold
            chosen_ok += group[best][3] == 1 and p[best] >= threshold
    return {"negatives_abstained": f"{neg_abstained}/{neg}",
            "false_abstention": f"{false_abstained}/{answerable}", "best_is_gold": chosen_ok}


def threshold_for(rows: list[Row], w: np.ndarray, b: float, max_false: float = 0.08) -> float:
    best = (0.0, -1)
    for t in np.arange(0.02, 0.9, 0.01):
        f = figures(rows, w, b, float(t))
        neg, false = (int(str(f[k]).split("/")[0]) for k in ("negatives_abstained", "false_abstention"))
        total = int(str(f["false_abstention"]).split("/")[1]) or 1
        if false / total <= max_false and neg > best[1]:
            best = (float(t), neg)
    return best[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data_dir", type=Path)
    ap.add_argument("questions", type=Path)
    ap.add_argument("--test", nargs=2, type=Path)
    ap.add_argument("--l2", type=float, default=0.01)
    a = ap.parse_args()
    train = collect(a.data_dir, a.questions)
    w, b = fit(train, a.l2)
    t = threshold_for(train, w, b)
    print("features:", FEATURES)
    print(f"weights=({', '.join(f'{v:.3f}' for v in w)}), bias={b:.3f}, threshold={t:.2f}")
    print("fitted on:", figures(train, w, b, t))
    if a.test:
        print("held out:", figures(collect(*a.test), w, b, t))


if __name__ == "__main__":
    main()
