"""A README-ready Markdown summary of a ``bench.quality`` JSON report.

    python -m bench.quality_markdown DIR/quality_report.json

Prints the world, the run's timings, and three tables: graph figures, questions per category
(Knotwork, vector RAG, ratio) and the recordlinkage / graspologic baselines with their ratios.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path

from bench.baselines.side_by_side import COMMUNITY_KEYS, RESOLUTION_KEYS

GRAPH_ROWS = (("entity precision / recall", ("entity_precision", "entity_recall")),
              ("person precision / recall", ("person_precision", "person_recall")),
              ("relation recall typed / untyped",
               ("relation_recall_typed", "relation_recall_untyped")),
              ("ended relations invalidated", ("ended_relations_invalidated",)),
              ("resolution mention pairs P / R / F1",
               ("resolution_precision", "resolution_recall", "resolution_f1")),
              ("alias pairs together / different people merged",
               ("alias_pairs_together", "confusable_pairs_merged")))


def _f(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2g}" if 0 < abs(value) < 0.1 else f"{value:.2f}"
    return str(value)


def _section(title: str, header: list[str], rows: list[list[str]]) -> list[str]:
    out = [title, "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return [*out, ""]


def markdown(report: Mapping[str, object]) -> str:
    w: Mapping[str, object] = report["world_summary"]  # type: ignore[assignment]
    g: Mapping[str, object] = report["graph"]  # type: ignore[assignment]
    head = (f"World: {w['people']} people, {w['entities']} entities, "
            f"{w['relations']} relations, {w['documents']} documents, "
            f"{report['questions']} questions (seed {w['seed']}). "
            f"Run {report.get('run_s')} s: ingest {report.get('ingest_s')} s "
            f"({report.get('chunks')} chunks), questions {report.get('query_s')} s; "
            f"load average {report.get('loadavg_start', '?')} → "
            f"{report.get('loadavg_end', '?')}; commit {report.get('commit')}"
            f"{' + changes' if report.get('dirty') else ''}.")
    lines = [head, ""]
    lines += _section("Graph", ["figure", "Knotwork"],
                      [[name, " / ".join(_f(g.get(k)) for k in keys)]
                       for name, keys in GRAPH_ROWS])
    kw: Mapping[str, Mapping[str, object]] = report["knotwork"]  # type: ignore[assignment]
    base: Mapping[str, Mapping[str, object]] = report.get("baseline") or {}  # type: ignore[assignment]
    ratios: Mapping[str, object] = report.get("baseline_ratio") or {}  # type: ignore[assignment]
    rows = [[cat, _f(row["n"]), _f(row["answered"]), _f(base.get(cat, {}).get("answered")),
             _f(ratios.get(cat))] for cat, row in kw.items()]
    rows.append(["all", _f(report["questions"]), "", "", _f(ratios.get("all"))])
    lines += _section("Questions (answered: gold answer in the answer or a cited text; "
                      "unanswerable: abstained)",
                      ["category", "n", "Knotwork", "vector RAG", "ratio"], rows)
    rows = []
    res = report.get("resolution_baseline")
    if isinstance(res, Mapping):
        rows += [[f"{k} (recordlinkage)", _f(res["knotwork"].get(k)),
                  _f(res["recordlinkage"].get(k)), _f(res["ratio"].get(k))]
                 for k in RESOLUTION_KEYS]
    com = report.get("community_baseline")
    if isinstance(com, Mapping):
        theirs, ratio = com.get("graspologic") or {}, com.get("ratio") or {}
        rows += [[f"leaf {k} (graspologic)", _f(com["knotwork"].get(k)), _f(theirs.get(k)),
                  _f(ratio.get(k))] for k in COMMUNITY_KEYS]
    if rows:
        lines += _section("Baselines (ratio = Knotwork / baseline; lower is better for "
                          "merged different people and seconds)",
                          ["figure", "Knotwork", "baseline", "ratio"], rows)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.quality_markdown",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="a bench.quality JSON report")
    args = parser.parse_args(argv)
    print(markdown(json.loads(args.report.read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
