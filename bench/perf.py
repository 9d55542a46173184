"""Ingest + query benchmark on the embedded stack.

    python -m bench.perf [--chunks 200] [--queries 100] [--seed 7] [--keep DIR]

Generates a synthetic enterprise corpus (bench.corpus), ingests it into a Knotwork with the
default settings in a fresh data dir (FalkorDB embedded, qdrant-edge, SQLite; MiniLM + spaCy),
times the pure model work over the same chunks (the compute bound), runs the generated
questions in local mode, prints the figures and appends them to bench/results/perf.jsonl.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from bench.corpus import generate_corpus

DEFAULT_CHUNKS = 200  # ~5-6 min on 2 quiet cores; see bench/README.md
RESULTS = Path(__file__).resolve().parent / "results" / "perf.jsonl"


def _git(*args: str) -> subprocess.CompletedProcess[str] | None:
    """A read-only git command in the repo; None when git or the repo is missing."""
    try:
        return subprocess.run(
            ["git", *args],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parent,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None


def _git_commit() -> str | None:
    out = _git("rev-parse", "--short", "HEAD")
    return (out.stdout.strip() or None) if out is not None and out.returncode == 0 else None


def _git_dirty() -> bool | None:
    """True when tracked files differ from HEAD (the figures are not of the commit alone)."""
    out = _git("diff", "--no-ext-diff", "--quiet", "HEAD", "--")
    return None if out is None or out.returncode not in (0, 1) else out.returncode == 1


def _percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def _falkordb_peak_mb(data_dir: Path) -> float | None:
    """Peak RSS (VmHWM) of the embedded FalkorDB child, read before it stops."""
    try:
        state = json.loads((data_dir / "falkordb" / "server.json").read_text())
        for line in Path(f"/proc/{int(state['pid'])}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, KeyError):
        return None
    return None


def _question_kind(question: str) -> str:
    for prefix, kind in (
        ("Who leads Project", "project_lead"),
        ("Who leads the", "team_lead"),
        ("Who does", "reports_to"),
        ("Which team maintains", "maintains"),
        ("Which team is", "member_of"),
        ("Where is", "located_in"),
        ("What does", "depends_on"),
    ):
        if question.startswith(prefix):
            return kind
    return "other"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.perf", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--chunks", type=int, default=DEFAULT_CHUNKS, help="target number of chunks"
    )
    parser.add_argument(
        "--queries", type=int, default=100, help="timed questions (plus one warm-up)"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="build the store in DIR (empty or absent) and keep it afterwards",
    )
    parser.add_argument(
        "--no-record", action="store_true", help="do not append to bench/results/perf.jsonl"
    )
    args = parser.parse_args(argv)

    console = Console()
    from knotwork.logging import configure_logging

    configure_logging("WARNING")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    from knotwork.core import Knotwork
    from knotwork.infra.embeddings.factory import create_embedder
    from knotwork.ingestion.chunking import chunk_text
    from knotwork.ingestion.embedding_text import passage_text, passage_texts
    from knotwork.ingestion.extraction.spacy_model import load_spacy
    from knotwork.settings import Settings

    if args.keep is not None:
        if args.keep.exists() and any(args.keep.iterdir()):
            console.print(f"[red]--keep {args.keep}: the directory is not empty[/red]")
            return 2
        data_dir = args.keep
    else:
        data_dir = Path(tempfile.mkdtemp(prefix="knotwork-bench-"))
    settings = Settings(data_dir=data_dir)

    run_t0 = time.perf_counter()
    load_start = os.getloadavg()[0]
    t0 = time.perf_counter()
    corpus = generate_corpus(
        args.chunks,
        seed=args.seed,
        questions=args.queries + 1,
        chunk_tokens=settings.chunk_tokens,
        chunk_overlap=settings.chunk_overlap,
    )
    generate_s = time.perf_counter() - t0
    docs = corpus.documents
    console.print(
        f"corpus: {len(docs)} documents, {corpus.chunks} chunks, {corpus.words} words, "
        f"{len(corpus.world.people)} people, {len(corpus.world.facts())} true facts "
        f"(generated in {generate_s:.1f}s); data dir {data_dir}"
    )

    figures: dict[str, object] = {}
    kw: Knotwork | None = None
    try:
        t0 = time.perf_counter()
        kw = Knotwork(settings)
        open_s = time.perf_counter() - t0
        rt = kw.runtime

        # models loaded and warmed outside every timed phase
        t0 = time.perf_counter()
        nlp = load_spacy(settings.spacy_model)
        _ = rt.extractor
        list(nlp.pipe(["Warm-up sentence for Alice Novak in Berlin."]))
        rt.embedder.embed(["warm-up"])
        models_s = time.perf_counter() - t0

        # ---------------------------------------------------------------- ingest
        progress = Progress(
            TextColumn("ingest"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("docs"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
        )
        with progress:
            task = progress.add_task("ingest", total=len(docs))
            t0, c0 = time.perf_counter(), time.process_time()
            report = kw.ingest_documents(docs, progress=lambda n: progress.advance(task, n))
            ingest_s = time.perf_counter() - t0
            ingest_cpu_s = time.process_time() - c0
        counts = rt.graph.counts(settings.group)

        # ---------------------------------------------------------------- compute bound
        contents: list[str] = []
        embed_texts: list[str] = []
        whole_texts: list[str] = []  # every word of each chunk, in MiniLM-sized passages
        for d in docs:
            for span in chunk_text(d.content, settings.chunk_tokens, settings.chunk_overlap):
                contents.append(span.text)
                embed_texts.append(f"{d.title}\n{span.text}")
                whole_texts.extend(passage_text(d.title, p)
                                   for p in passage_texts(span.text, settings.passage_tokens))
        with console.status("compute bound: spaCy nlp.pipe over the chunks"):
            t0, c0 = time.perf_counter(), time.process_time()
            for _doc in nlp.pipe(contents, batch_size=16):
                pass
            spacy_s = time.perf_counter() - t0
        # a fresh embedder (the same model, shared): the ingest's vector cache holds every
        # one-passage chunk's text, which the bound would otherwise read instead of computing
        bound_embedder = create_embedder(settings)
        bound_embedder.embed(["warm-up"])
        with console.status("compute bound: MiniLM embeddings of the chunks"):
            t0 = time.perf_counter()
            bound_embedder.embed(embed_texts)
            embed_s = time.perf_counter() - t0
            bound_cpu_s = time.process_time() - c0
        bound_s = spacy_s + embed_s
        # MiniLM reads a chunk's first 256 word pieces: the bound above embeds only that, the
        # pipeline embeds all of it (passages). The same model over every word of the chunks
        # is the bound of a pipeline that keeps the whole text searchable.
        with console.status("compute bound: MiniLM embeddings of the chunks' whole text"):
            t0 = time.perf_counter()
            create_embedder(settings).embed(whole_texts)
            whole_embed_s = time.perf_counter() - t0
        whole_bound_s = spacy_s + whole_embed_s

        # ---------------------------------------------------------------- queries
        questions = corpus.questions
        latencies: list[float] = []
        hits_cited = 0
        hits_answer = 0
        by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        failures: list[dict[str, str]] = []
        with Progress(
            TextColumn("query "),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        ) as qprogress:
            qtask = qprogress.add_task("query", total=len(questions))
            for i, (question, expected) in enumerate(questions):
                t0 = time.perf_counter()
                result = kw.query(question, mode="local")
                elapsed_ms = (time.perf_counter() - t0) * 1000
                qprogress.advance(qtask)
                if i == 0:
                    continue  # warm-up: neither timed nor scored
                latencies.append(elapsed_ms)
                want = expected.lower()
                in_answer = want in result.answer.lower()
                cited = in_answer or any(want in c.text.lower() for c in result.citations)
                hits_answer += in_answer
                hits_cited += cited
                kind = by_kind[_question_kind(question)]
                kind[0] += cited
                kind[1] += 1
                if not cited and len(failures) < 5:
                    failures.append(
                        {"q": question, "expected": expected, "answer": result.answer[:200]}
                    )
        n_q = len(latencies)

        falkor_mb = _falkordb_peak_mb(data_dir)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        figures = {
            "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
            "commit": _git_commit(),
            "dirty": _git_dirty(),
            "seed": args.seed,
            "target_chunks": args.chunks,
            "documents": len(docs),
            "chunks": report.chunks,
            "words": corpus.words,
            "graph_entities": counts.entities,
            "graph_facts": counts.facts,
            "graph_mentions": counts.mentions,
            "open_s": round(open_s, 2),
            "model_load_s": round(models_s, 2),
            "ingest_s": round(ingest_s, 2),
            "chunks_per_s": round(report.chunks / ingest_s, 2) if ingest_s else None,
            "compute_bound_s": round(bound_s, 2),
            "compute_spacy_s": round(spacy_s, 2),
            "compute_embed_s": round(embed_s, 2),
            "ingest_over_bound": round(ingest_s / bound_s, 2) if bound_s else None,
            "compute_embed_whole_text_s": round(whole_embed_s, 2),
            "ingest_over_whole_text_bound": round(ingest_s / whole_bound_s, 2)
            if whole_bound_s else None,
            "ingest_cpu_s": round(ingest_cpu_s, 2),
            "compute_bound_cpu_s": round(bound_cpu_s, 2),
            "ingest_over_bound_cpu": round(ingest_cpu_s / bound_cpu_s, 2) if bound_cpu_s else None,
            "queries": n_q,
            "query_p50_ms": round(statistics.median(latencies), 1) if latencies else None,
            "query_p95_ms": round(_percentile(latencies, 95), 1) if latencies else None,
            "query_max_ms": round(max(latencies), 1) if latencies else None,
            "answered_at_cited": round(hits_cited / n_q, 3) if n_q else None,
            "answered_in_answer": round(hits_answer / n_q, 3) if n_q else None,
            "answered_by_kind": {k: f"{v[0]}/{v[1]}" for k, v in sorted(by_kind.items())},
            "peak_rss_mb": round(peak_mb, 1),
            "falkordb_peak_rss_mb": round(falkor_mb, 1) if falkor_mb is not None else None,
            "cpus": os.cpu_count(),
            "loadavg_start": round(load_start, 2),
            "loadavg_end": round(os.getloadavg()[0], 2),
            "embedder": str(settings.embedder),
            "graph_backend": str(settings.graph_backend),
            "vector_backend": str(settings.vector_backend),
            "chunk_tokens": settings.chunk_tokens,
            "python": sys.version.split()[0],
        }
    finally:
        if kw is not None:
            kw.close()
        if args.keep is None:
            shutil.rmtree(data_dir, ignore_errors=True)

    if not figures:
        return 1
    figures["run_s"] = round(time.perf_counter() - run_t0, 1)
    _print(console, figures, failures)
    if not args.no_record:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        with RESULTS.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(figures, sort_keys=False) + "\n")
        console.print(f"appended to {RESULTS}")
    return 0


def _print(console: Console, f: dict[str, object], failures: list[dict[str, str]]) -> None:
    table = Table(title=f"Knotwork perf — {f['documents']} docs, commit {f['commit'] or '?'}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    rows = [
        ("documents", f["documents"]),
        ("chunks", f["chunks"]),
        ("graph entities / facts", f"{f['graph_entities']} / {f['graph_facts']}"),
        ("ingest wall (s)", f["ingest_s"]),
        ("chunks/s", f["chunks_per_s"]),
        (
            "compute bound (s) spaCy + MiniLM",
            f"{f['compute_bound_s']} ({f['compute_spacy_s']} + {f['compute_embed_s']})",
        ),
        ("ingest / compute bound", f["ingest_over_bound"]),
        (
            "MiniLM over the whole text (s); ingest / that bound",
            f"{f['compute_embed_whole_text_s']}; {f['ingest_over_whole_text_bound']}",
        ),
        (
            "CPU s: ingest / compute bound (ratio)",
            f"{f['ingest_cpu_s']} / {f['compute_bound_cpu_s']} ({f['ingest_over_bound_cpu']})",
        ),
        (
            "query p50 / p95 / max (ms)",
            f"{f['query_p50_ms']} / {f['query_p95_ms']} / {f['query_max_ms']}",
        ),
        ("answered@cited", f"{f['answered_at_cited']} of {f['queries']}"),
        ("answered (in answer text)", f["answered_in_answer"]),
        ("peak RSS (MB) python / falkordb", f"{f['peak_rss_mb']} / {f['falkordb_peak_rss_mb']}"),
        ("store open / model load (s)", f"{f['open_s']} / {f['model_load_s']}"),
        ("1-min load average start / end", f"{f['loadavg_start']} / {f['loadavg_end']}"),
        ("whole run (s)", f["run_s"]),
    ]
    for name, value in rows:
        table.add_row(name, str(value))
    console.print(table)
    console.print(f"answered@cited by question kind: {f['answered_by_kind']}")
    for item in failures:
        console.print(
            f"  miss: {item['q']} → expected {item['expected']!r}; answer: {item['answer']!r}",
            highlight=False,
            markup=False,
        )
    # plain lines, easy to grep
    for key in (
        "documents",
        "chunks",
        "ingest_s",
        "chunks_per_s",
        "compute_bound_s",
        "compute_spacy_s",
        "compute_embed_s",
        "ingest_over_bound",
        "compute_embed_whole_text_s",
        "ingest_over_whole_text_bound",
        "ingest_cpu_s",
        "compute_bound_cpu_s",
        "ingest_over_bound_cpu",
        "query_p50_ms",
        "query_p95_ms",
        "query_max_ms",
        "answered_at_cited",
        "answered_in_answer",
        "peak_rss_mb",
        "falkordb_peak_rss_mb",
        "run_s",
    ):
        print(f"{key}={f[key]}")


if __name__ == "__main__":
    raise SystemExit(main())
