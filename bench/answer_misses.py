"""Why a retrieved answer is not the one given: classify each answerable question's miss.

    python -m bench.answer_misses DATA_DIR CORPUS [--eval RESULT.json] [--ids cv001,cv002]
        [--all] [--out misses.json]

A data dir is one a corpus was ingested into (``corpus_eval.py CORPUS --keep DIR``). With
``--eval`` (corpus_eval's JSON) only the answerable non-global questions whose context holds
the gold answer and whose answer does not are asked (``--all``: every answerable non-global
question). Each is asked in AUTO mode; every local search it runs is recorded (its ranking as
it stood before the learned choice, the choice, the units the answer shows), and the miss is
classified:

  abstained        the answer withholds (a gate or the answerability model)
  other path       no local search answered (a count, a section, a chain, global search)
  no candidate     no scored unit states the gold answer
  below window     one does, below the learned choice's window
  ranked lower     one in the window does; the choice took another
  composition      a chosen unit states it; the answer's first words do not
  right            the answer states it
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path

import knotwork.retrieval.local as local_module
from bench.fit_answerability import _correct, states_gold
from knotwork import Knotwork, Settings
from knotwork.domain.models import QueryMode
from knotwork.retrieval import answer_rank
from knotwork.retrieval.answer_rank import WINDOW
from knotwork.retrieval.config import LocalSearchConfig
from knotwork.retrieval.local import NO_ANSWER

ASKED = ("local", "multi_hop", "temporal", "aggregation")


@dataclass
class Search:
    question: str
    ranked: list[dict[str, object]] = field(default_factory=list)
    choice: int | None = None


def _row(q: dict[str, object], u: object, i: int) -> dict[str, object]:
    text = getattr(u, "display", "") or getattr(u, "text", "")
    return {"i": i, "score": round(float(getattr(u, "score", 0.0)), 3),
            "fact": getattr(u, "fact", None) is not None,
            "gold": states_gold(q, text), "text": text[:220],
            "context": str(getattr(u, "context", ""))[:80],
            "parts": {k: round(v, 3) for k, v in getattr(u, "parts", {}).items()}}


def classify(q: dict[str, object], answer: str, searches: list[Search]) -> str:
    if _correct(q, answer):
        return "right"
    if answer.strip() == NO_ANSWER or answer.startswith("I found nothing"):
        return "abstained"
    if not searches:
        return "other path"
    last = searches[-1]
    golds = [r["i"] for r in last.ranked if r["gold"]]
    if not golds:
        return "no candidate"
    if min(golds) >= WINDOW:  # type: ignore[operator]
        return "below window"
    chosen = last.choice or 0
    if chosen in golds:
        return "composition"
    return "ranked lower"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", type=Path)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--eval", type=Path, default=None)
    ap.add_argument("--ids", default="")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--depth", type=int, default=48, help="ranked units recorded per search")
    ap.add_argument("--set", action="append", default=[], help="a local search setting, key=value")
    ap.add_argument("--rows", type=int, default=16, help="ranked units whose features are recorded")
    args = ap.parse_args()
    questions = [json.loads(x) for x in (args.corpus / "questions.jsonl").read_text().splitlines()
                 if x.strip()]
    wanted = set(filter(None, args.ids.split(",")))
    if args.eval is not None and not args.all:
        rows = json.loads(args.eval.read_text())["question_rows"]
        wanted |= {r["id"] for r in rows if r["category"] in ASKED
                   and (r.get("context_score") or 0) > (r.get("answer_score") or 0)}
    asked = [q for q in questions if q["category"] in ASKED and (args.all or q["id"] in wanted)]
    searches: list[Search] = []
    current: dict[str, object] = {}
    original = local_module.model_order

    def spy(question, ranked, anchors, focus, lookup, model=answer_rank.MODEL, window=WINDOW):
        search = Search(question, [_row(current, u, i) for i, u in enumerate(ranked[: args.depth])])
        rows = answer_rank.features(question, list(ranked[: args.rows]), anchors, focus, lookup)
        order = {f: i for i, f in enumerate(answer_rank.FEATURES)}
        for r, row in zip(search.ranked, rows, strict=False):
            r["features"] = dict(zip(answer_rank.FEATURES, (round(x, 3) for x in row), strict=True))
            if model is not None:
                r["model"] = round(model.score([row[order[f]] for f in model.features]), 3)
        ordered = original(question, ranked, anchors, focus, lookup, model, window)
        search.choice = ordered[0][0] if ordered and ordered[0][0] > 0 else None
        searches.append(search)
        return ordered

    local_module.model_order = spy  # type: ignore[assignment]
    if args.set:
        settings = dict(kv.split("=", 1) for kv in args.set)
        local_module.LocalSearchConfig = lambda: LocalSearchConfig(**settings)  # type: ignore[assignment,misc]
    out: list[dict[str, object]] = []
    try:
        with Knotwork(Settings(data_dir=args.data)) as kw:
            for q in asked:
                searches.clear()
                current.clear()
                current.update(q)
                result = kw.query(str(q["question"]), mode=QueryMode.AUTO)
                kind = classify(q, result.answer, searches)
                out.append({"id": q["id"], "category": q["category"], "question": q["question"],
                            "gold": q["answer"], "class": kind, "answer": result.answer,
                            "mode": result.mode_used.value, "trace": result.reasoning_trace,
                            "searches": [{"question": s.question, "choice": s.choice,
                                          "ranked": s.ranked} for s in searches]})
                print(f"{q['id']} {q['category']:<11} {kind:<13} {str(q['question'])[:90]}", flush=True)
    finally:
        local_module.model_order = original  # type: ignore[assignment]
        local_module.LocalSearchConfig = LocalSearchConfig  # type: ignore[misc]
    counts: dict[str, int] = {}
    for r in out:
        counts[str(r["class"])] = counts.get(str(r["class"]), 0) + 1
    print(", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])))
    if args.out is not None:
        args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
