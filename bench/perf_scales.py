"""Ingest, communities and query speed on a generated world at a named scale.

    python -m bench.perf_scales [--scale small|medium|large] [--seed 7] [--queries 10]

Scales are sized in world entities (people, teams, projects, systems, ...): small ≈ 1k
(650 people), medium ≈ 10k (6,500 people), large ≈ 100k (65,000 people). The world is
generated into a temporary directory (``bench.world``), ingested into a fresh embedded
store with the default settings, and timed: ingest chunks/s and its ratio to the compute
bound (spaCy + MiniLM alone over the same chunks), graph writes/s (entities + facts +
mentions stored per ingest second), LLM calls per chunk (0 without ``KNOTWORK_LLM_BASE_URL``;
the real count of the configured endpoint otherwise), resolution ms per resolved entity
mention (the ingest's resolution step, store look-ups included), Leiden time (detection
alone, and the whole community build), query p50/p95 per mode (local, global, drift, auto)
over the world's own questions, peak memory of this process and of the embedded FalkorDB.
Appends a JSON line to ``bench/results/perf_scales.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from bench.perf import _falkordb_peak_mb, _git_commit, _git_dirty, _percentile
from bench.world import generate_world

SCALES = {"small": 650, "medium": 6_500, "large": 65_000}  # people; entities ≈ 1.5 x people
RESULTS = Path(__file__).resolve().parent / "results" / "perf_scales.jsonl"
MODES = ("local", "global", "drift", "auto")


def _timed(fn: object) -> tuple[object, float]:
    t0 = time.perf_counter()
    out = fn()  # type: ignore[operator]
    return out, time.perf_counter() - t0


@dataclass
class ResolutionTimer:
    seconds: float = 0.0
    mentions: int = 0  # extracted entity mentions resolved (one per entity per chunk)
    spans: int = 0  # their text spans (what entity_mentions stores)

    @property
    def ms_per_mention(self) -> float | None:
        return round(self.seconds * 1000 / self.mentions, 3) if self.mentions else None


@contextmanager
def timed_resolution() -> Iterator[ResolutionTimer]:
    """Time ``BatchBuilder._resolve_all`` (candidate look-up, blocking and the decision for
    every extracted entity of a batch) while the block runs."""
    from knotwork.ingestion.graph_builder import BatchBuilder

    timer = ResolutionTimer()
    original = BatchBuilder._resolve_all

    def wrapped(self: BatchBuilder, items: Sequence[tuple[object, object]],
                result: object) -> list[list[str]]:
        t0 = time.perf_counter()
        try:
            return original(self, items, result)  # type: ignore[arg-type]
        finally:
            timer.seconds += time.perf_counter() - t0
            for _, ex in items:
                timer.mentions += len(ex.entities)  # type: ignore[attr-defined]
                timer.spans += sum(len(e.mentions) for e in ex.entities)  # type: ignore[attr-defined]

    BatchBuilder._resolve_all = wrapped  # type: ignore[assignment, method-assign]
    try:
        yield timer
    finally:
        BatchBuilder._resolve_all = original  # type: ignore[method-assign]


def llm_calls_total() -> float:
    """LLM calls of this process so far (ok, dropped and failed; retries are one call)."""
    from knotwork.observability.metrics import get_metrics

    total = 0.0
    for metric in get_metrics().llm_calls.collect():
        for sample in metric.samples:
            if sample.name.endswith("_total") and sample.labels.get("outcome") != "retried":
                total += sample.value
    return total


def leiden_seconds(kw: object) -> tuple[float, int]:
    """Seconds of hierarchical Leiden alone (the product's parameters) on the current fact
    graph, and the projected node count."""
    from knotwork.communities.detection import detect
    from knotwork.communities.projection import project
    from knotwork.domain.timeutil import utcnow

    rt, group = kw.runtime, kw.settings.group  # type: ignore[attr-defined]
    s = rt.settings
    graph = project(rt.graph.list_entities(group), rt.graph.list_facts(group), utcnow())
    _, secs = _timed(lambda: detect(graph, resolution=s.community_resolution,
                                    max_size=s.community_max_size, seed=s.community_seed,
                                    engine=s.community_engine))
    return secs, len(graph.nodes)


def run(scale: str, seed: int, queries: int, console: Console,
        people: int | None = None) -> dict[str, object]:
    from knotwork.core import Knotwork
    from knotwork.infra.embeddings.factory import create_embedder
    from knotwork.ingestion.chunking import chunk_text
    from knotwork.ingestion.extraction.spacy_model import load_spacy
    from knotwork.ingestion.loaders.detect import load_path
    from knotwork.settings import Settings

    root = Path(tempfile.mkdtemp(prefix=f"knotwork-scale-{scale}-"))
    try:
        world, data_dir = root / "world", root / "store"
        n_people = people or SCALES[scale]
        summary, gen_s = _timed(lambda: generate_world(world, n_people, seed, queries))
        console.print(f"world: {summary} in {gen_s:.1f}s")
        docs = [d for part in ("confluence", "slack")
                for d in load_path(world / part).documents]
        settings = Settings(data_dir=data_dir)
        with Knotwork(settings) as kw:
            nlp = load_spacy(settings.spacy_model)
            _ = kw.runtime.extractor
            list(nlp.pipe(["Warm-up sentence for Alice Novak in Berlin."]))
            kw.runtime.embedder.embed(["warm-up"])
            with Progress(TextColumn("ingest"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=console) as progress:
                task = progress.add_task("ingest", total=len(docs))
                calls0 = llm_calls_total()
                t0, c0 = time.perf_counter(), time.process_time()
                with timed_resolution() as resolution:
                    report = kw.ingest_documents(docs,
                                                 progress=lambda n: progress.advance(task, n))
                ingest_s, ingest_cpu = time.perf_counter() - t0, time.process_time() - c0
                llm_calls = llm_calls_total() - calls0
            counts = kw.runtime.graph.counts(settings.group)
            texts, embed_texts = [], []
            for d in docs:
                for span in chunk_text(d.content, settings.chunk_tokens, settings.chunk_overlap):
                    texts.append(span.text)
                    embed_texts.append(f"{d.title}\n{span.text}")
            t0, c0 = time.perf_counter(), time.process_time()
            for _doc in nlp.pipe(texts, batch_size=16):
                pass
            spacy_s = time.perf_counter() - t0
            # a fresh embedder (the same model, shared): the ingest's vector cache holds every
            # one-passage chunk's text, which the bound would otherwise read, not compute
            bound_embedder = create_embedder(settings)
            bound_embedder.embed(["warm-up"])
            _, embed_s = _timed(lambda: bound_embedder.embed(embed_texts))
            bound_s, bound_cpu = spacy_s + embed_s, time.process_time() - c0
            build, build_s = _timed(kw.build_communities)
            leiden_s, projected_nodes = leiden_seconds(kw)
            qs = [json.loads(line) for line in
                  (world / "truth" / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
            qs = [q for q in qs if q["category"] != "unanswerable"]
            latency: dict[str, dict[str, float | None]] = {}
            for i, mode in enumerate(MODES):  # other questions per mode: no answer caches
                times = []
                for q in (qs[i::len(MODES)] or qs)[:queries]:
                    _, s = _timed(lambda q=q, mode=mode: kw.query(q["question"], mode=mode))
                    times.append(s * 1000)
                latency[mode] = {
                    "p50_ms": round(statistics.median(times), 1) if times else None,
                    "p95_ms": round(_percentile(times, 95), 1) if times else None}
            falkor_mb = _falkordb_peak_mb(data_dir)
        writes = counts.entities + counts.facts + counts.mentions
        return {
            "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
            "commit": _git_commit(), "dirty": _git_dirty(), "scale": scale, "seed": seed,
            "people": n_people, "world_entities": summary.entities,  # type: ignore[attr-defined]
            "documents": len(docs), "chunks": report.chunks,
            "graph_entities": counts.entities, "graph_facts": counts.facts,
            "graph_mentions": counts.mentions,
            "ingest_s": round(ingest_s, 1), "ingest_cpu_s": round(ingest_cpu, 1),
            "chunks_per_s": round(report.chunks / ingest_s, 2) if ingest_s else None,
            "compute_bound_s": round(bound_s, 1),
            "ingest_over_bound": round(ingest_s / bound_s, 2) if bound_s else None,
            "compute_bound_cpu_s": round(bound_cpu, 1),
            "ingest_over_bound_cpu": round(ingest_cpu / bound_cpu, 2) if bound_cpu else None,
            "graph_writes_per_s": round(writes / ingest_s, 1) if ingest_s else None,
            "llm_configured": settings.llm_base_url is not None,
            "llm_calls": int(llm_calls),
            "llm_calls_per_chunk": round(llm_calls / report.chunks, 3) if report.chunks else None,
            "resolution_mentions": resolution.mentions,
            "resolution_ms_per_mention": resolution.ms_per_mention,
            "resolution_share_of_ingest": (round(resolution.seconds / ingest_s, 3)
                                           if ingest_s else None),
            "leiden_s": round(leiden_s, 2), "leiden_nodes": projected_nodes,
            "community_build_s": round(build_s, 2),
            "communities": build.communities,  # type: ignore[attr-defined]
            "query_latency": latency,
            "queries_per_mode": min(queries, len(qs) // len(MODES) or len(qs)),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "falkordb_peak_rss_mb": round(falkor_mb, 1) if falkor_mb is not None else None,
            "loadavg_end": round(os.getloadavg()[0], 2),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.perf_scales",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", choices=sorted(SCALES), default="small")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--queries", type=int, default=10, help="timed questions per mode")
    parser.add_argument("--people", type=int, default=None,
                        help="override the scale's head count (smoke runs)")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args(argv)
    console = Console()
    from knotwork.logging import configure_logging

    configure_logging("WARNING")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    figures = run(args.scale, args.seed, args.queries, console, args.people)
    table = Table(title=f"Knotwork at scale {args.scale}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, value in figures.items():
        table.add_row(key, json.dumps(value) if isinstance(value, dict) else str(value))
    console.print(table)
    if not args.no_record:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        with RESULTS.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(figures) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
