"""Answer quality per question category, every query mode against a naive vector-RAG baseline.

    .venv/bin/python -m bench.query_eval [--data-dir DIR] [--modes baseline,local,global,drift,auto]
                                         [--questions bench/query_questions.json] [--verbose]

Corpus: the bundled sample data plus ``bench/query_corpus`` (same Confluence / Slack formats;
kept apart so the sample data's document counts stay what the tests expect). No LLM.

Per system and category:

- ``answered``: the question's gold answers (at least ``need`` of them, case-insensitive) appear
  in the answer text or in the cited text (citation excerpts); for unanswerable questions,
  the system abstained (confidence < 0.3).
- ``in_answer``: the same, answer text only.
- ``cite_prec``: mean share of a question's citations whose source_id is one of its supporting
  documents (questions with citations only); ``cite_hit``: share of answerable questions with
  at least one citation of a supporting document.
- ``false_abstain``: answerable questions the system abstained on.

Each graph mode is held to the categories it is for: local → local, multi-hop, temporal;
global → global; drift → aggregation and global; auto → all. Every one must beat the baseline's
``answered`` there (and abstain at least as often on unanswerable questions).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from bench.baselines.vector_rag import VectorRAG
from knotwork import Knotwork, Settings
from knotwork.domain.models import QueryResult

HERE = Path(__file__).parent
SAMPLE = HERE.parent / "src" / "knotwork" / "sample_data"
EXTRA = HERE / "query_corpus"
ABSTAIN_BELOW = 0.3
OWN: dict[str, tuple[str, ...]] = {
    "local": ("local", "multi-hop", "temporal"),
    "global": ("global",),
    "drift": ("aggregation", "global"),
    "auto": ("local", "multi-hop", "temporal", "global", "aggregation"),
}


@dataclass(frozen=True)
class Question:
    q: str
    cat: str
    a: tuple[str, ...]
    need: int
    sources: tuple[str, ...]
    as_of: datetime | None


@dataclass
class Score:
    answered: int = 0
    in_answer: int = 0
    n: int = 0
    cite_prec: list[float] = field(default_factory=list)
    cite_hit: int = 0
    false_abstain: int = 0
    ms: list[float] = field(default_factory=list)


def load_questions(path: Path) -> list[Question]:
    out = []
    for item in json.loads(path.read_text()):
        as_of = datetime.fromisoformat(item["as_of"]).replace(tzinfo=UTC) if item.get("as_of") else None
        out.append(Question(item["q"], item["cat"], tuple(item["a"]), int(item.get("need", 1)),
                            tuple(item.get("sources", [])), as_of))
    return out


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("ß", "ss").split())


def found(golds: tuple[str, ...], text: str) -> int:
    hay = _norm(text)
    return sum(1 for g in golds if _norm(g) in hay)


def judge(question: Question, result: QueryResult, score: Score) -> bool:
    score.n += 1
    abstained = result.confidence < ABSTAIN_BELOW
    if not question.a:
        ok = abstained
        score.answered += ok
        score.in_answer += ok
        return ok
    need = min(question.need, len(question.a))
    cited = " ".join(c.text for c in result.citations)
    ok = not abstained and found(question.a, f"{result.answer} {cited}") >= need
    score.answered += ok
    score.in_answer += (not abstained and found(question.a, result.answer) >= need)
    score.false_abstain += abstained
    if result.citations:
        good = sum(c.source_id in question.sources for c in result.citations)
        score.cite_prec.append(good / len(result.citations))
        score.cite_hit += good > 0
    return ok


def run(kw: Knotwork, questions: list[Question], systems: list[str],
        verbose: bool, every: bool = False) -> dict[str, dict[str, Score]]:
    baseline = VectorRAG(kw.runtime, kw.settings.group)
    table: dict[str, dict[str, Score]] = {}
    for system in systems:
        per_cat = table.setdefault(system, {})
        for question in questions:
            if not every and system in OWN and question.cat not in (*OWN[system], "unanswerable"):
                continue
            start = time.perf_counter()
            if system == "baseline":
                result = baseline.query(question.q)
            else:
                result = kw.query(question.q, mode=system, as_of=question.as_of)
            score = per_cat.setdefault(question.cat, Score())
            score.ms.append((time.perf_counter() - start) * 1000)
            ok = judge(question, result, score)
            if verbose or not ok:
                mark = "ok  " if ok else "MISS"
                print(f"[{system}] {mark} ({question.cat}) {question.q}"
                      f"{' @' + question.as_of.date().isoformat() if question.as_of else ''}\n"
                      f"      -> {result.answer[:150]!r} ({result.confidence:.2f})")
    return table


def report(table: dict[str, dict[str, Score]]) -> list[str]:
    cats = sorted({c for per in table.values() for c in per})
    header = (f"{'system':9} {'category':13} {'n':>3} {'answered':>8} {'in_ans':>6} "
              f"{'cite_prec':>9} {'cite_hit':>8} {'false_abst':>10} {'p50_ms':>7}")
    lines = [header]
    for system, per in table.items():
        for cat in cats:
            s = per.get(cat)
            if s is None:
                continue
            prec = sum(s.cite_prec) / len(s.cite_prec) if s.cite_prec else float("nan")
            answerable = s.n if cat != "unanswerable" else 0
            ms = sorted(s.ms)[len(s.ms) // 2]
            lines.append(f"{system:9} {cat:13} {s.n:>3} {s.answered / s.n:>8.2f} {s.in_answer / s.n:>6.2f} "
                         f"{prec:>9.2f} {(s.cite_hit / answerable if answerable else float('nan')):>8.2f} "
                         f"{(s.false_abstain / answerable if answerable else float('nan')):>10.2f} {ms:>7.0f}")
    base = table.get("baseline", {})
    for system, cats_owned in OWN.items():
        if system not in table or not base:
            continue
        for cat in (*cats_owned, "unanswerable"):
            mine, theirs = table[system].get(cat), base.get(cat)
            if mine is None or theirs is None:
                continue
            a, b = mine.answered / mine.n, theirs.answered / theirs.n
            verdict = "beats" if a > b else ("ties" if a == b else "LOSES TO")
            lines.append(f"{system} {verdict} baseline on {cat}: {a:.2f} vs {b:.2f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--questions", type=Path, default=HERE / "query_questions.json")
    parser.add_argument("--modes", default="baseline,local,global,drift,auto")
    parser.add_argument("--categories", default="", help="comma-separated; default all")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--every-category", action="store_true",
                        help="ask every mode every question (default: its own categories + unanswerable)")
    args = parser.parse_args()
    questions = load_questions(args.questions)
    if args.categories:
        wanted = set(args.categories.split(","))
        questions = [q for q in questions if q.cat in wanted]
    data_dir = args.data_dir or Path(f"/tmp/kw-query-eval-{int(time.time())}")
    with Knotwork(Settings(data_dir=data_dir)) as kw:
        kw.ingest_path(SAMPLE)
        kw.ingest_path(EXTRA)
        table = run(kw, questions, args.modes.split(","), args.verbose, args.every_category)
    lines = report(table)
    print("\n".join(lines))
    out = HERE / "results" / "query_eval.txt"
    out.parent.mkdir(exist_ok=True)
    out.write_text(f"# {datetime.now(UTC).isoformat(timespec='seconds')} {len(questions)} questions\n"
                   + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
