"""How often each open-question rule fires on a question set, by the questions' category.

    python -m bench.open_questions QUESTIONS.jsonl [QUESTIONS.jsonl ...]

Each line is a JSON object with ``question`` and, optionally, ``category`` (the development
corpora's ``questions.jsonl``; ``bench/query_questions.json``-style files with a list work too).
Prints, per rule of :data:`knotwork.retrieval.open_questions.OPEN_QUESTIONS`, the questions it
made open and their categories, and the questions no rule made open, by category: a rule that
fires on questions asking for one value (who / when / which) is too wide.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from knotwork.retrieval.open_questions import OPEN_QUESTIONS, open_question


def read_questions(path: Path) -> list[tuple[str, str]]:
    text = path.read_text(encoding="utf-8").strip()
    rows = json.loads(text) if text.startswith("[") else [json.loads(x) for x in text.splitlines() if x]
    return [(str(r.get("question", r.get("q", ""))), str(r.get("category", r.get("cat", "?"))))
            for r in rows]


def hit_rates(questions: list[tuple[str, str]]) -> dict[str, Counter[str]]:
    """Rule name (or '-' for none) -> categories of the questions it made open."""
    out: dict[str, Counter[str]] = {name: Counter() for name, _ in OPEN_QUESTIONS}
    out["-"] = Counter()
    for question, category in questions:
        out[open_question(question) or "-"][category] += 1
    return out


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    for arg in argv:
        questions = read_questions(Path(arg))
        print(f"{arg}: {len(questions)} questions")
        for rule, categories in hit_rates(questions).items():
            total = sum(categories.values())
            share = total / max(len(questions), 1)
            detail = ", ".join(f"{c} {n}" for c, n in categories.most_common())
            print(f"  {rule:20s} {total:4d} ({share:.0%})  {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
