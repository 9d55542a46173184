"""Hit rates of the question time-constraint patterns (knotwork.retrieval.time_constraint).

    python -m bench.time_patterns CORPUS_DIR [CORPUS_DIR ...] [--eval RESULT.json ...] [--now 2025-06-20]

For each corpus (a dir with ``questions.jsonl``: ``id``, ``category``, ``question``) and for
Knotwork's own question set (``bench/query_questions.json``): how many questions each named
pattern fired on, how many of those are temporal questions (category ``temporal``), and how
many temporal questions got no constraint. With ``--eval`` (corpus_eval.py result files,
matched by question id), the share of the questions each rule fired on that were answered
(answer score 1). Count and list questions get no constraint (``answer_time``).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path

from knotwork.retrieval.time_fit import answer_time

_OWN = Path(__file__).with_name("query_questions.json")


def _questions(path: Path) -> list[tuple[str, str, str]]:
    """(id, category, question) of a corpus dir or of the bench question set."""
    if path.is_dir():
        rows = [
            json.loads(line)
            for line in (path / "questions.jsonl").read_text().splitlines()
            if line.strip()
        ]
        return [(r["id"], r["category"], r["question"]) for r in rows]
    rows = json.loads(path.read_text())
    return [(f"own{n}", r["cat"], r["q"]) for n, r in enumerate(rows)]


def _answered(paths: list[Path]) -> dict[str, float]:
    out: dict[str, float] = {}
    for p in paths:
        data = json.loads(p.read_text())
        for row in data.get("question_rows", []):
            if "id" in row:
                out[row["id"]] = float(row.get("answer_score") or 0.0)
    return out


def report(
    name: str, questions: list[tuple[str, str, str]], answered: dict[str, float], now: datetime
) -> None:
    fired: Counter[str] = Counter()
    temporal: Counter[str] = Counter()
    scores: dict[str, list[float]] = defaultdict(list)
    missed = 0
    for qid, category, question in questions:
        found = answer_time(question, now)
        if found is None:
            missed += category == "temporal"
            continue
        fired[found.rule] += 1
        temporal[found.rule] += category == "temporal"
        if qid in answered:
            scores[found.rule].append(answered[qid])
    total_temporal = sum(c == "temporal" for _, c, _ in questions)
    print(
        f"\n{name}: {len(questions)} questions, {total_temporal} temporal, "
        f"{missed} temporal without a constraint"
    )
    print(f"  {'rule':28} {'fired':>5} {'temporal':>8} {'answered':>8}")
    for rule, n in fired.most_common():
        got = scores.get(rule)
        share = f"{sum(got) / len(got):.2f}" if got else "-"
        print(f"  {rule:28} {n:5d} {temporal[rule]:8d} {share:>8}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpora", nargs="*", type=Path)
    ap.add_argument("--eval", nargs="*", type=Path, default=[])
    ap.add_argument("--now", default=None, help="the date relative phrases count from (ISO)")
    a = ap.parse_args()
    now = datetime.fromisoformat(a.now).replace(tzinfo=UTC) if a.now else datetime.now(UTC)
    answered = _answered(a.eval)
    for corpus in a.corpora:
        report(corpus.name, _questions(corpus), answered, now)
    report("knotwork query set", _questions(_OWN), {}, now)


if __name__ == "__main__":
    main()
