"""Query latency per mode on the embedded stack over a synthetic graph, cache cold and warm.

    .venv/bin/python -m bench.query_latency [--entities 10000] [--facts 30000] [--queries 50]
        [--modes local,global,drift,auto] [--embedder minilm|hashing] [--keep DIR]
        [--cache-url redis://127.0.0.1:6379/0] [--optimize-vectors] [--warm-up SECONDS]

The graph is written straight through the stores (``bench.synthetic_graph``: entities, facts,
chunks, mentions, vectors), not through extraction. Then, per mode, the same questions are
asked three times: cache off, cache cold (empty cache, results stored) and cache warm (every
question a hit). p50 / p95 (nearest rank) in ms per pass; ``answered`` is the share of local
answers naming the expected entity. A process loads the community index (global, DRIFT)
once per community build; that first query is timed apart (``index_load_ms_*``).
After a fresh write the bench builds the HNSW indexes that are due (``build_due_indexes``,
what the ingestion pipeline does after each ingest call once ``vector_index_threshold`` points
are waiting in a collection); ``--exact`` skips that (every vector search exact) and
``--optimize-vectors`` optimizes every collection before timing, due or not. The default
``minilm`` embedder is the real model (query embedding included, ~10 ms per question);
``hashing`` writes 100k+ vectors in minutes. The floor is timed first, alone, per question:
the question's embedding, the entity / fact / chunk vector searches local search makes and
the 2-hop fact expansion from the entities found; each mode's p50 / p95 / p99 is printed beside
it as a ratio to the floor's (issue 23).
Each timed process is opened and warmed up as ``knotwork serve`` does (``Knotwork.warm_up``:
models, then local searches about the tenant's own entities for ``--warm-up`` seconds, default
``KNOTWORK_WARM_UP_S``; 0: models only); every question is timed after that, the first ones
included (``max_first10_ms``: the slowest of the first ten).
A JSON line goes to ``bench/results/query_latency.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from bench.synthetic_graph import generate, write
from knotwork import Knotwork, Settings
from knotwork.domain.models import QueryMode
from knotwork.domain.ports import Collection
from knotwork.infra.vector_factory import build_due_indexes
from knotwork.observability.tracing import unwrap
from knotwork.retrieval.config import LocalSearchConfig

HERE = Path(__file__).parent


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q * len(ordered) + 0.5) - 1))]


def _time(kw: Knotwork, questions: list[tuple[str, str]], mode: QueryMode
          ) -> tuple[list[float], list[float], int]:
    """Wall ms and CPU ms (this process, every thread; not the FalkorDB child) per question,
    and how many answers name the expected entity."""
    out: list[float] = []
    cpu: list[float] = []
    hits = 0
    for q, expected in questions:
        start, start_cpu = time.perf_counter(), time.process_time()
        result = kw.query(q, mode=mode)
        out.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        hits += expected.lower() in result.answer.lower()
    return out, cpu, hits


def _floor(kw: Knotwork, questions: list[tuple[str, str]], group: str) -> list[float]:
    """Wall ms per question of what any local answer needs: the question's embedding, the
    vector searches and the 2-hop expansion from the entities found."""
    rt, cfg = kw.runtime, LocalSearchConfig()
    out: list[float] = []
    for q, _ in questions:
        start = time.perf_counter()
        qvec = rt.embedder.embed([q])[0]
        seeds = rt.vectors.search(Collection.ENTITIES, qvec, group_id=group,
                                  limit=cfg.seed_vector_limit, min_score=cfg.seed_min_score)
        rt.vectors.search(Collection.FACTS, qvec, group_id=group, limit=cfg.fact_vector_limit)
        rt.vectors.search(Collection.CHUNKS, qvec, group_id=group, limit=cfg.chunk_vector_limit)
        rt.graph.expand_facts(group, [h.id for h in seeds], depth=2, limit=cfg.fact_limit)
        out.append((time.perf_counter() - start) * 1000)
    return out


def _ratio(value: float, floor: float) -> float | None:
    return round(value / floor, 2) if floor > 0 else None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--entities", type=int, default=10_000)
    p.add_argument("--facts", type=int, default=30_000)
    p.add_argument("--queries", type=int, default=50)
    p.add_argument("--modes", default="local,global,drift,auto")
    p.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    p.add_argument("--cache-url", default="redis://127.0.0.1:6379/0")
    p.add_argument("--keep", type=Path, default=None, help="build (or reuse) the store here")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--no-record", action="store_true")
    p.add_argument("--optimize-vectors", action="store_true",
                   help="optimize every qdrant-edge collection before timing, due or not")
    p.add_argument("--exact", action="store_true",
                   help="after a fresh write, skip the HNSW builds the product would run")
    p.add_argument("--warm-up", type=float, default=None,
                   help="seconds of start-up warm-up per timed process (default: the setting)")
    args = p.parse_args()
    data_dir = args.keep or Path(tempfile.mkdtemp(prefix="kw-latency-"))
    prefix = f"kwbench:{secrets.token_hex(4)}:"
    settings = Settings(data_dir=data_dir, embedder=args.embedder, cache_url=args.cache_url,  # type: ignore[arg-type]
                        cache_prefix=prefix, group="bench")
    if args.warm_up is not None:
        settings = settings.model_copy(update={"warm_up_s": args.warm_up})
    record: dict[str, object] = {"entities": args.entities, "facts": args.facts, "embedder": args.embedder,
                                 "queries": args.queries}
    graph, chunk_facts = generate("bench", args.entities, args.facts, args.seed)
    questions = graph.questions(args.queries, args.seed)
    reuse = args.keep is not None and (args.keep / "built.marker").exists()
    try:
        with Knotwork(settings) as kw:
            if not reuse:
                start = time.perf_counter()
                with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                              TimeElapsedColumn()) as bar:
                    tasks = {"entities": bar.add_task("entities", total=len(graph.entities)),
                             "facts": bar.add_task("facts", total=len(graph.facts))}
                    write(kw.runtime, "bench", graph, chunk_facts,
                          progress=lambda what, n: bar.advance(tasks[what], n))
                record["write_s"] = round(time.perf_counter() - start, 1)
                if not args.exact:
                    start = time.perf_counter()
                    record["indexes_built"] = [c.value for c in build_due_indexes(kw.runtime.vectors)]
                    record["index_s"] = round(time.perf_counter() - start, 1)
                if args.keep:
                    (args.keep / "built.marker").write_text("ok")
            optimize = getattr(unwrap(kw.runtime.vectors), "optimize", None)
            if args.optimize_vectors and callable(optimize):
                start = time.perf_counter()
                optimize()
                record["optimize_s"] = round(time.perf_counter() - start, 1)
            record["vectors_optimized"] = bool(args.optimize_vectors and callable(optimize))
            counts = kw.runtime.graph.counts("bench")
            record["graph_entities"], record["graph_facts"] = counts.entities, counts.facts
            modes = [QueryMode(m) for m in args.modes.split(",")]
            if any(m in (QueryMode.GLOBAL, QueryMode.DRIFT, QueryMode.AUTO) for m in modes):
                state = kw.runtime.graph.get_community_state("bench")
                if state is None or state.community_count == 0:
                    start = time.perf_counter()
                    kw.build_communities("bench")
                    record["communities_build_s"] = round(time.perf_counter() - start, 1)
            kw.query(questions[0][0], mode=QueryMode.LOCAL)  # models and connections warm
        rows = []
        record["loadavg_before"] = [round(x, 2) for x in os.getloadavg()]
        for cached in (False, True):
            with Knotwork(settings.model_copy(update={"cache_enabled": cached})) as kw:
                warmed = kw.warm_up()  # what `knotwork serve` does before its first request
                record[f"warm_up_{'cache' if cached else 'nocache'}"] = {
                    "budget_s": settings.warm_up_s, "seconds": warmed.seconds,
                    "queries": warmed.queries, "searches": warmed.searches}
                if any(m is not QueryMode.LOCAL for m in modes):
                    # a process loads the community index once per build: timed apart
                    start = time.perf_counter()
                    kw.query(questions[-1][0] + " overview", mode=QueryMode.GLOBAL)
                    record[f"index_load_ms_{'cache' if cached else 'nocache'}"] = \
                        round((time.perf_counter() - start) * 1000, 1)
                if not cached:
                    floor = _floor(kw, questions, "bench")
                    record["floor"] = {"p50_ms": round(_pct(floor, 0.5), 1),
                                       "p95_ms": round(_pct(floor, 0.95), 1),
                                       "p99_ms": round(_pct(floor, 0.99), 1)}
                    print(json.dumps({"floor": record["floor"]}), flush=True)
                for mode in modes:
                    passes = ["cold", "warm"] if cached else ["off"]
                    for name in passes:
                        times, cpu, hits = _time(kw, questions, mode)
                        row = {"mode": mode.value, "cache": name, "p50_ms": round(_pct(times, 0.5), 1),
                               "p95_ms": round(_pct(times, 0.95), 1),
                               "p99_ms": round(_pct(times, 0.99), 1), "max_ms": round(max(times), 1),
                               "max_first10_ms": round(max(times[:10]), 1),
                               "cpu_p50_ms": round(_pct(cpu, 0.5), 1),
                               "cpu_p95_ms": round(_pct(cpu, 0.95), 1),
                               "answered": round(hits / len(questions), 3)}
                        rows.append(row)
                        print(json.dumps(row), flush=True)
                if kw.runtime.cache is not None:
                    stats = kw.runtime.cache.stats()
                    record["cache_hit_rate"] = round(stats.hit_rate(), 3)
                    kw.runtime.cache.clear_group("bench")
        record["rows"] = rows
        record["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        if args.keep is None:
            shutil.rmtree(data_dir, ignore_errors=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], check=False, capture_output=True, text=True,
                            cwd=HERE.parent).stdout.strip()
    record["commit"] = commit
    floor_ms = record.get("floor", {})
    assert isinstance(floor_ms, dict)
    for row in rows:
        for q in ("p50", "p95", "p99"):
            row[f"{q}_x_floor"] = _ratio(float(row[f"{q}_ms"]), float(floor_ms.get(f"{q}_ms", 0)))
    print(f"{'mode':6} {'cache':5} {'p50_ms':>8} {'p95_ms':>8} {'p99_ms':>8} {'cpu_p50':>8} "
          f"{'cpu_p95':>8} {'answered':>8}  x floor p50/p95/p99")
    print(f"{'floor':6} {'-':5} {floor_ms.get('p50_ms', '-'):>8} {floor_ms.get('p95_ms', '-'):>8} "
          f"{floor_ms.get('p99_ms', '-'):>8}")
    for row in rows:
        print(f"{row['mode']:6} {row['cache']:5} {row['p50_ms']:>8} {row['p95_ms']:>8} "
              f"{row['p99_ms']:>8} {row['cpu_p50_ms']:>8} {row['cpu_p95_ms']:>8} "
              f"{row['answered']:>8}  {row['p50_x_floor']}/{row['p95_x_floor']}/{row['p99_x_floor']}")
    if not args.no_record:
        out = HERE / "results" / "query_latency.jsonl"
        out.parent.mkdir(exist_ok=True)
        with out.open("a") as fh:
            fh.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
