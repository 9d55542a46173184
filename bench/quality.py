"""Quality of Knotwork on a generated world, side by side with three baselines.

    python -m bench.quality DIR [--keep STORE] [--out FILE] [--questions N] [--no-baseline]

DIR is a world made by ``python -m bench.world DIR``. The world's Confluence pages and
Slack export are ingested into a fresh embedded store; then entity precision/recall,
relation recall, resolution pairwise P/R/F1, temporal correctness and per-category
question answering are measured against ``DIR/truth``. In the same process (unless
``--no-baseline``): naive vector RAG on the same questions (``bench/baselines/vector_rag.py``),
recordlinkage's classic linkage on the same resolution pairs and mentions, and graspologic's
hierarchical Leiden on the same projected fact graph (``bench/baselines/side_by_side.py``),
each with Knotwork / baseline ratios. Printed as tables, written as JSON (``--out``, default
``DIR/quality_report.json``) and appended to ``bench/results/quality.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from bench.quality_metrics import (
    GoldRelation,
    GraphEntity,
    GraphFact,
    Judged,
    assign_mentions,
    baseline_ratio,
    entity_scores,
    forms_together,
    judge,
    normalize,
    pair_classification_scores,
    pairwise_scores,
    ratio,
    relation_scores,
    together_rates,
)

if TYPE_CHECKING:
    from knotwork.core import Knotwork

RESULTS = Path(__file__).resolve().parent / "results" / "quality.jsonl"
ABSTAIN_CONFIDENCE = 0.3  # below this (or without citations) an answer counts as abstaining
CATEGORIES = ["local", "multi_hop", "temporal", "global", "aggregation", "unanswerable"]


class WorldError(Exception):
    """The directory is not a generated world."""


@dataclass
class GoldWorld:
    entities: list[dict[str, object]]
    relations: list[dict[str, object]]
    mentions: dict[str, list[tuple[str, str]]]
    questions: list[dict[str, object]]
    pairs: list[tuple[str, str, bool]]
    summary: dict[str, object]
    communities: dict[str, list[dict[str, object]]]


def _jsonl(path: Path) -> list[dict[str, object]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_truth(world: Path) -> GoldWorld:
    truth = world / "truth"
    needed = ["entities.jsonl", "relations.jsonl", "mentions.jsonl", "questions.jsonl",
              "resolution_pairs.jsonl", "world.json", "communities.json"]
    missing = [n for n in needed if not (truth / n).is_file()]
    if missing or not (world / "confluence").is_dir() or not (world / "slack").is_dir():
        raise WorldError(f"{world} is not a generated world (missing "
                         f"{', '.join(missing) or 'confluence/ or slack/'}); "
                         "make one with: python -m bench.world DIR")
    mentions = {str(row["doc"]): [(str(e), str(f)) for e, f in row["mentions"]]  # type: ignore[attr-defined]
                for row in _jsonl(truth / "mentions.jsonl")}
    pairs = [(str(p["a"]), str(p["b"]), bool(p["same"]))
             for p in _jsonl(truth / "resolution_pairs.jsonl")]
    return GoldWorld(_jsonl(truth / "entities.jsonl"), _jsonl(truth / "relations.jsonl"),
                     mentions, _jsonl(truth / "questions.jsonl"), pairs,
                     json.loads((truth / "world.json").read_text(encoding="utf-8")),
                     json.loads((truth / "communities.json").read_text(encoding="utf-8")))


def _kw_mentions(kw: Knotwork) -> list[tuple[str, str, str]]:
    """(document source id, mention text, entity id) of every stored mention."""
    from sqlalchemy import create_engine, text

    engine = create_engine(kw.settings.resolved_database_url())
    query = text("SELECT d.source_id, m.text, m.entity_id FROM entity_mentions m "
                 "JOIN chunks c ON m.chunk_id = c.id JOIN documents d ON c.document_id = d.id "
                 "WHERE m.group_id = :group")
    try:
        with engine.connect() as conn:
            return [(str(a), str(b), str(c))
                    for a, b, c in conn.execute(query, {"group": kw.settings.group})]
    finally:
        engine.dispose()


# --------------------------------------------------------------------------- graph metrics
@dataclass
class GraphSide:
    """What the side-by-side baselines need of the graph metrics' inputs."""

    gold_to_graph: dict[str, set[str]]
    # (gold id, normalized text) of the very mentions the resolution P/R/F1 is computed on
    mention_forms: list[tuple[str, str]]


def graph_metrics(kw: Knotwork, gold: GoldWorld) -> tuple[dict[str, object], GraphSide]:
    export = kw.export_graph()
    graph = [GraphEntity(e.id, e.name, e.type, list(e.aliases)) for e in export.entities]
    forms = {str(e["id"]): [str(f) for f in e["forms"]] for e in gold.entities}  # type: ignore[union-attr]
    kinds = {str(e["id"]): str(e["kind"]) for e in gold.entities}
    ents = entity_scores(forms, kinds, graph)
    person_graph = [g for g in graph if g.type == "PERSON"]
    person_forms = {k: v for k, v in forms.items() if kinds[k] == "person"}
    persons = entity_scores(person_forms, kinds, person_graph)
    rels = [GoldRelation(str(r["id"]), str(r["type"]), str(r["subject"]), str(r["object"]),
                         r["valid_to"])  # type: ignore[arg-type]
            for r in gold.relations if r["evidence"]]
    facts = [GraphFact(f.source, f.target, f.type, f.invalid_at) for f in export.facts]
    rel = relation_scores(rels, ents.gold_to_graph, facts)
    rows = _kw_mentions(kw)
    assigned = assign_mentions(rows, gold.mentions)
    res = pairwise_scores(assigned)
    forms = assign_mentions([(d, t, normalize(t)) for d, t, _ in rows], gold.mentions)
    owners: dict[str, str | None] = {}
    for g in graph:
        for key in g.name_keys():
            owners[key] = g.id if owners.get(key, g.id) == g.id else None
    together = forms_together(gold.pairs, owners)
    alias_ok, confusable_merged = together_rates(gold.pairs, together)
    pair = pair_classification_scores(gold.pairs, together)
    return {
        "graph_entities": len(graph), "graph_facts": len(facts),
        "entity_precision": ents.precision, "entity_recall": ents.recall,
        "entity_recall_by_kind": ents.recall_by_kind,
        "person_precision": persons.precision, "person_recall": persons.recall,
        "relations_evaluated": rel.evaluated, "relation_recall_typed": rel.typed_recall,
        "relation_recall_untyped": rel.untyped_recall,
        "relation_recall_typed_by_type": rel.typed_by_type,
        "ended_relations_invalidated": rel.ended_invalidated,
        "resolution_mentions": res.mentions, "resolution_precision": res.precision,
        "resolution_recall": res.recall, "resolution_f1": res.f1,
        "alias_pairs_together": alias_ok, "confusable_pairs_merged": confusable_merged,
        "resolution_pairs": pair.mentions, "resolution_pair_precision": pair.precision,
        "resolution_pair_recall": pair.recall, "resolution_pair_f1": pair.f1,
    }, GraphSide(ents.gold_to_graph, forms)


def community_metrics(kw: Knotwork, gold: GoldWorld,
                      gold_to_graph: dict[str, set[str]]) -> dict[str, object]:
    """Pairwise agreement of Knotwork's leaf communities with the generator's teams, over
    the people both know (builds the communities when there are none)."""
    group = kw.settings.group
    t0 = time.perf_counter()
    state = kw.runtime.graph.get_community_state(group)
    if state is None or state.community_count == 0:
        kw.build_communities()
    build_s = time.perf_counter() - t0
    leaf_of: dict[str, str] = {}
    for c in kw.runtime.graph.list_communities(group, level=0):
        for eid in c.entity_ids:
            leaf_of[eid] = c.id
    assigned = []
    for team in gold.communities.get("teams", []):
        for person in team["members"]:  # type: ignore[attr-defined]
            graph_ids = gold_to_graph.get(str(person), set())
            if len(graph_ids) == 1 and next(iter(graph_ids)) in leaf_of:
                assigned.append((str(team["id"]), leaf_of[next(iter(graph_ids))]))
    scores = pairwise_scores(assigned)
    return {"community_people": scores.mentions, "community_team_precision": scores.precision,
            "community_team_recall": scores.recall, "community_team_f1": scores.f1,
            "community_build_s": round(build_s, 2)}


# --------------------------------------------------------------------------- questions
@dataclass
class Asked:
    id: str
    category: str
    question: str
    gold: list[str]
    answer: str
    judged: Judged
    ms: float


def ask_all(questions: list[dict[str, object]], ask: object, label: str,
            console: Console) -> list[Asked]:
    """``ask(question, as_of) -> QueryResult`` over every question, judged."""
    out: list[Asked] = []
    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task(label, total=len(questions))
        for q in questions:
            as_of = q.get("as_of")
            when = datetime.fromisoformat(str(as_of)).replace(tzinfo=UTC) if as_of else None
            t0 = time.perf_counter()
            result = ask(str(q["question"]), when)  # type: ignore[operator]
            ms = (time.perf_counter() - t0) * 1000
            cited = [(c.source_id, c.text) for c in result.citations]
            abstained = not result.citations or result.confidence < ABSTAIN_CONFIDENCE
            j = judge(str(q["category"]), list(q["answers"]), list(q["items"]),  # type: ignore[call-overload]
                      list(q["wrong_answers"]), str(q["match"]), list(q["supporting_docs"]),  # type: ignore[call-overload]
                      result.answer, cited, abstained)
            gold = list(q["answers"]) or [" / ".join(i[0] for i in q["items"])]  # type: ignore[call-overload, index]
            out.append(Asked(str(q["id"]), str(q["category"]), str(q["question"]), gold,
                             result.answer, j, ms))
            progress.advance(task)
    return out


def summarize(asked: list[Asked]) -> dict[str, dict[str, object]]:
    by_cat: dict[str, dict[str, object]] = {}
    for cat in CATEGORIES:
        rows = [a for a in asked if a.category == cat]
        if not rows:
            continue
        cps = [a.judged.citation_precision for a in rows if a.judged.citation_precision is not None]
        strict = [a.judged.temporal_strict for a in rows if a.judged.temporal_strict is not None]
        cov = [a.judged.coverage for a in rows if a.judged.coverage is not None]
        by_cat[cat] = {
            "n": len(rows),
            "answered": ratio(sum(a.judged.answered for a in rows), len(rows)),
            "in_answer": ratio(sum(a.judged.in_answer for a in rows), len(rows)),
            "citation_precision": round(statistics.mean(cps), 4) if cps else None,
            "abstained": ratio(sum(a.judged.abstained for a in rows), len(rows)),
            "temporal_strict": ratio(sum(strict), len(strict)) if strict else None,
            "coverage": round(statistics.mean(cov), 4) if cov else None,
            "p50_ms": round(statistics.median(a.ms for a in rows), 1),
        }
    return by_cat


def failures(asked: list[Asked], per_category: int = 5) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for cat in CATEGORIES:
        misses = [a for a in asked if a.category == cat and not a.judged.answered]
        out += [{"category": cat, "question": a.question, "gold": a.gold[:2],
                 "answer": a.answer[:240]} for a in misses[:per_category]]
    return out


# --------------------------------------------------------------------------- main
def evaluate(world: Path, data_dir: Path, console: Console, *, baseline: bool = True,
             max_questions: int | None = None) -> dict[str, object]:
    from knotwork.core import Knotwork
    from knotwork.settings import Settings

    gold = load_truth(world)
    questions = gold.questions[:max_questions] if max_questions else gold.questions
    report: dict[str, object] = {
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"), "world": str(world),
        "world_summary": gold.summary, "questions": len(questions)}
    with Knotwork(Settings(data_dir=data_dir)) as kw:
        n_docs = sum(1 for _ in (world / "truth" / "documents.jsonl").open(encoding="utf-8"))
        t0 = time.perf_counter()
        with Progress(TextColumn("ingest"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=console, transient=True) as progress:
            task = progress.add_task("ingest", total=n_docs)
            chunks = 0
            for part in ("confluence", "slack"):
                rep = kw.ingest_path(world / part, progress=lambda n: progress.advance(task, n))
                chunks += rep.chunks
        report["ingest_s"] = round(time.perf_counter() - t0, 1)
        report["chunks"] = chunks
        t0 = time.perf_counter()
        report["graph"], side = graph_metrics(kw, gold)
        gold_to_graph = side.gold_to_graph
        report["graph_metrics_s"] = round(time.perf_counter() - t0, 1)
        t0 = time.perf_counter()
        asked = ask_all(questions, lambda q, when: kw.query(q, as_of=when), "knotwork",
                        console)
        report["query_s"] = round(time.perf_counter() - t0, 1)
        report["knotwork"] = summarize(asked)
        report["communities"] = community_metrics(kw, gold, gold_to_graph)
        report["knotwork_failures"] = failures(asked)
        report["knotwork_answers"] = [{"id": a.id, "answered": a.judged.answered,
                                       "answer": a.answer[:300]} for a in asked]
        if baseline:
            from bench.baselines.vector_rag import VectorRAG

            rag = VectorRAG(kw.runtime, kw.settings.group)
            base = ask_all(questions, lambda q, when: rag.query(q), "vector-rag", console)
            report["baseline"] = summarize(base)
            report["baseline_ratio"] = answered_ratios(report["knotwork"], report["baseline"])
            from bench.baselines.side_by_side import community_baseline, resolution_baseline

            report["resolution_baseline"] = resolution_baseline(
                gold.pairs, side.mention_forms, report["graph"])  # type: ignore[arg-type]
            report["community_baseline"] = community_baseline(kw, gold.communities,
                                                              gold_to_graph)
    return report


def answered_ratios(kw: dict[str, dict[str, object]],
                    base: dict[str, dict[str, object]]) -> dict[str, float | None]:
    """Knotwork's answered share over the baseline's, per category and overall."""
    out = {cat: baseline_ratio(row["answered"], base.get(cat, {}).get("answered"))  # type: ignore[arg-type]
           for cat, row in kw.items()}
    out["all"] = baseline_ratio(_overall(kw), _overall(base))
    return out


def _overall(by_cat: dict[str, dict[str, object]]) -> float | None:
    n = sum(int(v["n"]) for v in by_cat.values())  # type: ignore[call-overload]
    return ratio(sum(float(v["answered"] or 0) * int(v["n"]) for v in by_cat.values()), n)  # type: ignore[call-overload, arg-type]


def print_report(report: dict[str, object], console: Console) -> None:
    g: dict[str, object] = report["graph"]  # type: ignore[assignment]
    table = Table(title=f"Knotwork quality — {report['world']}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key in ("graph_entities", "graph_facts", "entity_precision", "entity_recall",
                "person_precision", "person_recall", "relations_evaluated",
                "relation_recall_typed", "relation_recall_untyped", "ended_relations_invalidated",
                "resolution_mentions", "resolution_precision", "resolution_recall",
                "resolution_f1", "alias_pairs_together", "confusable_pairs_merged"):
        table.add_row(key, str(g[key]))
    table.add_row("ingest_s / chunks", f"{report['ingest_s']} / {report['chunks']}")
    console.print(table)
    console.print(f"typed relation recall by type: {g['relation_recall_typed_by_type']}",
                  highlight=False)
    console.print(f"entity recall by kind: {g['entity_recall_by_kind']}", highlight=False)
    console.print(f"leaf communities vs teams (pairwise over people): {report['communities']}",
                  highlight=False)
    kw: dict[str, dict[str, object]] = report["knotwork"]  # type: ignore[assignment]
    base: dict[str, dict[str, object]] = report.get("baseline") or {}  # type: ignore[assignment]
    qt = Table(title="Questions: Knotwork vs naive vector RAG (answered = gold in answer or "
               "cited text; unanswerable: abstained)")
    for col in ("category", "n", "answered kw", "answered rag", "ratio", "in answer kw",
                "cite prec kw", "cite prec rag", "temporal strict", "coverage", "p50 ms kw"):
        qt.add_column(col, justify="right")
    for cat, row in kw.items():
        b = base.get(cat, {})
        a_kw, a_rag = row["answered"], b.get("answered")
        r = baseline_ratio(a_kw, a_rag)  # type: ignore[arg-type]
        ratio_s = f"{r:.2f}" if r is not None else "-"
        qt.add_row(cat, str(row["n"]), str(a_kw), str(a_rag), ratio_s, str(row["in_answer"]),
                   str(row["citation_precision"]), str(b.get("citation_precision")),
                   str(row["temporal_strict"]), str(row["coverage"]), str(row["p50_ms"]))
    r_all = baseline_ratio(_overall(kw), _overall(base)) if base else None
    qt.add_row("all", str(report["questions"]), str(_overall(kw)),
               str(_overall(base)) if base else "-", f"{r_all:.2f}" if r_all else "-",
               "", "", "", "", "", "")
    console.print(qt)
    if "resolution_baseline" in report or "community_baseline" in report:
        from bench.baselines.side_by_side import print_baselines

        print_baselines(report, console)
    for f in report["knotwork_failures"]:  # type: ignore[attr-defined]
        console.print(f"  miss [{f['category']}] {f['question']} → gold {f['gold']}; "
                      f"answer: {f['answer']!r}", highlight=False, markup=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.quality",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("world", type=Path, help="a world directory (python -m bench.world)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="build the store in this (empty or absent) directory and keep it")
    parser.add_argument("--out", type=Path, default=None, help="JSON report path")
    parser.add_argument("--questions", type=int, default=None, help="ask only the first N")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--no-record", action="store_true",
                        help="do not append to bench/results/quality.jsonl")
    args = parser.parse_args(argv)
    console = Console()
    console = Console(width=max(console.width, 160))  # the question table is wide
    from knotwork.logging import configure_logging

    configure_logging("WARNING")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        load_truth(args.world)
    except WorldError as exc:
        print(f"bench.quality: error: {exc}", file=sys.stderr)
        return 2
    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        print(f"bench.quality: error: --keep {args.keep} is not empty", file=sys.stderr)
        return 2
    data_dir = args.keep or Path(tempfile.mkdtemp(prefix="knotwork-quality-"))
    t0 = time.perf_counter()
    load_start = round(os.getloadavg()[0], 2)
    try:
        report = evaluate(args.world, data_dir, console, baseline=not args.no_baseline,
                          max_questions=args.questions)
    finally:
        if args.keep is None:
            shutil.rmtree(data_dir, ignore_errors=True)
    report["run_s"] = round(time.perf_counter() - t0, 1)
    report["loadavg_start"], report["loadavg_end"] = load_start, round(os.getloadavg()[0], 2)
    from bench.perf import _git_commit, _git_dirty

    report["commit"], report["dirty"] = _git_commit(), _git_dirty()
    print_report(report, console)
    out = args.out or args.world / "quality_report.json"
    out.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    console.print(f"report: {out}")
    if not args.no_record:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        line = {k: v for k, v in report.items() if k != "knotwork_answers"}
        with RESULTS.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(line, default=str) + "\n")
    return 0


__all__ = ["WorldError", "asdict", "evaluate", "load_truth", "main", "normalize"]

if __name__ == "__main__":
    raise SystemExit(main())
