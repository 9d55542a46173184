"""Hit rates of the chained-question shapes (knotwork.retrieval.chain_plan.SHAPES).

    python -m bench.chain_shapes CORPUS_DIR [CORPUS_DIR ...] [--eval RESULT.json ...]

For each corpus (a dir with ``questions.jsonl``: ``id``, ``category``, ``question``) and for
Knotwork's own question set (``bench/query_questions.json``): how many questions each named
shape fired on, how many of those are multi-hop questions (category ``multi_hop``), and how
many multi-hop questions no shape fired on. With ``--eval`` (corpus_eval.py result files,
matched by question id), the share of the questions each shape fired on that were answered
(answer score 1). A shape that fires is only planned here: at query time a hop that finds
nothing falls back to the one-pass answer (the trace says ``chain (<shape>)`` when it held).
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from pathlib import Path

from bench.time_patterns import _answered, _questions
from knotwork.retrieval.chain_plan import plan

_OWN = Path(__file__).with_name("query_questions.json")
_MULTI = ("multi_hop", "multi-hop")  # the corpora's category name, and the own set's


def report(name: str, questions: list[tuple[str, str, str]], answered: dict[str, float]) -> None:
    fired: Counter[str] = Counter()
    multi: Counter[str] = Counter()
    scores: dict[str, list[float]] = defaultdict(list)
    missed = 0
    for qid, category, question in questions:
        found = plan(question)
        if found is None:
            missed += category in _MULTI
            continue
        fired[found.shape] += 1
        multi[found.shape] += category in _MULTI
        if qid in answered:
            scores[found.shape].append(answered[qid])
    total = sum(c in _MULTI for _, c, _ in questions)
    print(f"\n{name}: {len(questions)} questions, {total} multi-hop, {missed} multi-hop without a shape")
    print(f"  {'shape':22} {'fired':>5} {'multi-hop':>9} {'answered':>8}")
    for shape, n in fired.most_common():
        got = scores.get(shape)
        share = f"{sum(got) / len(got):.2f}" if got else "-"
        print(f"  {shape:22} {n:5d} {multi[shape]:9d} {share:>8}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpora", nargs="*", type=Path)
    ap.add_argument("--eval", nargs="*", type=Path, default=[])
    a = ap.parse_args()
    answered = _answered(a.eval)
    for corpus in a.corpora:
        report(corpus.name, _questions(corpus), answered)
    report("knotwork query set", _questions(_OWN), {})


if __name__ == "__main__":
    main()
