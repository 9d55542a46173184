"""Sync benchmark: a generated Confluence space ingested inline and through the job queue.

    python -m bench.sync_bench [--pages 2000] [--workers 2] [--embedder minilm] [--no-record]

Writes a ``--pages``-page space as an offline directory of Confluence REST v2 page objects
(the bench.corpus company rendered as storage XHTML), then on the embedded stack (FalkorDB,
qdrant-edge, SQLite; each mode in a fresh data dir):

* **inline** — ``knotwork ingest DIR`` in-process (models loaded and warmed before timing);
* **queued** — ``--workers`` ``knotwork worker`` processes started and warmed first, then
  ``ingest DIR --queue`` and the wait until every document is COMPLETED and the queue empty;
* **resync** — the same directory enqueued again: no task, no extraction (the incremental
  path).

Prints documents/s and chunks/s with the queued/inline ratio and appends a JSON line to
bench/results/sync_bench.jsonl. Workers serialise their store writes (see
``knotwork.services.worker.stores``), so the gain comes from parallel extraction/embedding.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from bench.corpus import generate_corpus
from bench.perf import _git_commit, _git_dirty

RESULTS = Path(__file__).resolve().parent / "results" / "sync_bench.jsonl"
READY_TIMEOUT_S = 900.0  # model loading on a busy shared machine takes minutes


def _storage(text: str) -> str:
    """Plain corpus text as Confluence storage XHTML (headings, list items, paragraphs)."""
    out: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            level = min(len(stripped) - len(stripped.lstrip("#")), 3)
            out.append(f"<h{level}>{html.escape(stripped.lstrip('#').strip())}</h{level}>")
        elif stripped.startswith(("- ", "* ")):
            out.append(f"<ul><li>{html.escape(stripped[2:])}</li></ul>")
        else:
            out.append(f"<p>{html.escape(stripped)}</p>")
    return "".join(out)


def write_space(root: Path, pages: int, seed: int) -> int:
    """``pages`` page objects in ``root`` (one JSON file each); returns the page count."""
    corpus = generate_corpus(target_chunks=pages, seed=seed, questions=1)
    docs = corpus.documents
    root.mkdir(parents=True, exist_ok=True)
    for i in range(pages):
        doc = docs[i % len(docs)]
        created = (doc.created_at or datetime(2024, 1, 8, tzinfo=UTC)).isoformat()
        page = {
            "id": str(100_000 + i), "status": "current", "spaceId": "98304",
            "title": doc.title if i < len(docs) else f"{doc.title} ({i // len(docs) + 1})",
            "parentId": "99999", "authorId": "bench", "createdAt": created,
            "version": {"number": 1, "createdAt": created, "authorId": "bench"},
            "body": {"storage": {"value": _storage(doc.content), "representation": "storage"}},
            "_links": {"webui": f"/spaces/BENCH/pages/{100_000 + i}"},
        }
        (root / f"page-{i:05d}.json").write_text(json.dumps(page), encoding="utf-8")
    return pages


def _progress(console: Console, label: str) -> Progress:
    return Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(),
                    TaskProgressColumn(), TextColumn("{task.fields[rate]}"),
                    TimeElapsedColumn(), TimeRemainingColumn(), console=console)


def run_inline(space: Path, data_dir: Path, env: dict[str, str], console: Console
               ) -> dict[str, float]:
    from knotwork.core import Knotwork
    from knotwork.ingestion.loaders.detect import load_path
    from knotwork.settings import Settings

    settings = Settings(data_dir=data_dir, embedder=env["KNOTWORK_EMBEDDER"])  # type: ignore[arg-type]
    docs = load_path(space).documents
    with Knotwork(settings) as kw:
        kw.runtime.extractor.extract(["Warm up."], {})
        kw.runtime.embedder.embed(["warm up"])
        with _progress(console, "inline") as bar:
            task = bar.add_task("inline", total=len(docs), rate="")
            started = time.perf_counter()

            def tick(n: int) -> None:
                bar.advance(task, n)
                done = bar.tasks[0].completed
                bar.update(task, rate=f"{done / max(time.perf_counter() - started, 1e-9):.2f} docs/s")

            report = kw.ingest_documents(docs, progress=tick)
            seconds = time.perf_counter() - started
    return {"documents": report.documents_ingested, "chunks": report.chunks, "seconds": seconds}


def _cli(data_dir: Path, *args: str) -> list[str]:
    """The console script (``python -m knotwork.services.cli`` would run a second copy of the
    cli module, whose registered commands do not see ``--data-dir``)."""
    script = Path(sys.executable).with_name("knotwork")
    return [str(script), "--data-dir", str(data_dir), *args]


def _tails(logs: list[Path], lines: int = 25) -> str:
    """The end of each worker log (the data dir is removed on exit)."""
    return "\n".join(f"--- {log.name}\n" + "\n".join(
        log.read_text(errors="replace").splitlines()[-lines:]) for log in logs if log.exists())


def run_queued(space: Path, data_dir: Path, env: dict[str, str], workers: int,
               console: Console) -> dict[str, float]:
    data_dir.mkdir(parents=True, exist_ok=True)
    logs = [data_dir / f"worker-{i}.log" for i in range(workers)]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for i, log in enumerate(logs):  # the first one starts the embedded FalkorDB
            with log.open("wb") as handle:
                procs.append(subprocess.Popen(_cli(data_dir, "-v", "worker", "--name",
                                                   f"bench-{i}"),
                                              env=env, stdout=handle, stderr=subprocess.STDOUT))
            time.sleep(1.0 if i == 0 else 0)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not all("worker.ready" in log.read_text(errors="replace") for log in logs):
            if any(p.poll() is not None for p in procs) or time.monotonic() > deadline:
                raise RuntimeError(f"a worker did not start:\n{_tails(logs)}")
            time.sleep(0.5)
        from knotwork.domain.models import ProcessingStatus
        from knotwork.infra.graph_factory import create_graph_store
        from knotwork.infra.queue.factory import create_job_queue
        from knotwork.infra.sql.store import SqlDocumentStore
        from knotwork.ingestion.loaders.detect import load_path
        from knotwork.services.worker.enqueue import enqueue_documents
        from knotwork.settings import Settings

        settings = Settings(data_dir=data_dir)
        docs = load_path(space).documents
        store = SqlDocumentStore(settings.resolved_database_url())
        graph = create_graph_store(settings)  # joins the workers' embedded FalkorDB
        queue = create_job_queue(settings, graph)
        try:
            started = time.perf_counter()
            enqueued = enqueue_documents(docs, store, queue, settings.group)
            enqueued_s = time.perf_counter() - started
            with _progress(console, f"{workers} workers") as bar:
                task = bar.add_task("queued", total=enqueued.enqueued, rate="")
                while True:
                    stored = store.list_documents(settings.group)
                    done = sum(d.processing_status in (ProcessingStatus.COMPLETED,
                                                       ProcessingStatus.FAILED) for d in stored)
                    elapsed = time.perf_counter() - started
                    bar.update(task, completed=done,
                               rate=f"{done / max(elapsed, 1e-9):.2f} docs/s")
                    if done >= len(stored) and queue.stats().outstanding == 0:
                        break
                    if any(p.poll() is not None for p in procs):
                        raise RuntimeError(f"a worker exited:\n{_tails(logs)}")
                    time.sleep(0.5)
            seconds = time.perf_counter() - started
            failed = sum(d.processing_status is ProcessingStatus.FAILED for d in stored)
            chunks = sum(d.chunk_count for d in stored)
            again_t = time.perf_counter()
            again = enqueue_documents(load_path(space).documents, store, queue, settings.group)
            resync_s = time.perf_counter() - again_t
        finally:
            queue.close()
            graph.close()
            store.close()
        return {"documents": len(stored), "chunks": chunks, "seconds": seconds,
                "enqueue_seconds": enqueued_s, "failed": failed,
                "resync_tasks": again.enqueued, "resync_seconds": resync_s}
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()


def _rate(r: dict[str, float]) -> float:
    return r["documents"] / r["seconds"]


def _report_mode(console: Console, name: str, r: dict[str, float]) -> None:
    console.print(f"{name}: {r['documents']:.0f} documents, {r['chunks']:.0f} chunks in "
                  f"{r['seconds']:.1f}s = {r['documents'] / r['seconds']:.2f} docs/s, "
                  f"{r['chunks'] / r['seconds']:.2f} chunks/s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sync_bench",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    parser.add_argument("--no-record", action="store_true")
    parser.add_argument("--skip-inline", action="store_true",
                        help="only the queued run (its ratio to inline is then not computed)")
    args = parser.parse_args(argv)

    console = Console()
    from knotwork.logging import configure_logging

    configure_logging("WARNING")
    root = Path(tempfile.mkdtemp(prefix="knotwork-syncbench-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KNOTWORK_")}
    env.update({"KNOTWORK_EMBEDDER": args.embedder, "HF_HUB_OFFLINE": "1",
                "TOKENIZERS_PARALLELISM": "false"})
    try:
        t0 = time.perf_counter()
        pages = write_space(root / "space", args.pages, args.seed)
        console.print(f"space: {pages} Confluence page objects in {root / 'space'} "
                      f"({time.perf_counter() - t0:.1f}s)")
        inline: dict[str, float] | None = None
        if not args.skip_inline:
            inline = run_inline(root / "space", root / "inline", env, console)
            _report_mode(console, "inline", inline)  # shown now: the queued run takes as long
        queued = run_queued(root / "space", root / "queued", env, args.workers, console)
        _report_mode(console, f"{args.workers} workers", queued)
    finally:
        shutil.rmtree(root, ignore_errors=True)

    modes = [("inline", inline), (f"{args.workers} workers", queued)]
    ratio_docs = (_rate(queued) / _rate(inline)) if inline is not None else None
    table = Table(title=f"sync of a {pages}-page Confluence space ({args.embedder})")
    for column in ("mode", "documents", "chunks", "seconds", "docs/s", "chunks/s", "vs inline"):
        table.add_column(column, justify="right" if column != "mode" else "left")
    for name, r in modes:
        if r is None:
            continue
        ratio = _rate(r) / _rate(inline) if inline is not None else None
        table.add_row(name, f"{r['documents']:.0f}", f"{r['chunks']:.0f}", f"{r['seconds']:.1f}",
                      f"{_rate(r):.2f}", f"{r['chunks'] / r['seconds']:.2f}",
                      f"{ratio:.2f}x" if ratio is not None else "-")
    table.add_row("resync (unchanged)", f"{queued['resync_tasks']:.0f} tasks", "",
                  f"{queued['resync_seconds']:.1f}", "", "", "")
    console.print(table)
    record: dict[str, object] = {
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"), "commit": _git_commit(),
        "dirty": _git_dirty(), "pages": pages, "workers": args.workers, "seed": args.seed,
        "embedder": args.embedder, "cpus": os.cpu_count(), "load_avg": os.getloadavg()[0],
        "inline_s": round(inline["seconds"], 2) if inline else None,
        "inline_docs_per_s": round(_rate(inline), 3) if inline else None,
        "inline_chunks_per_s": round(inline["chunks"] / inline["seconds"], 3) if inline else None,
        "queued_s": round(queued["seconds"], 2), "queued_docs_per_s": round(_rate(queued), 3),
        "queued_chunks_per_s": round(queued["chunks"] / queued["seconds"], 3),
        "queued_over_inline": round(ratio_docs, 3) if ratio_docs is not None else None,
        "queued_failed": queued["failed"],
        "enqueue_s": round(queued["enqueue_seconds"], 2),
        "resync_tasks": queued["resync_tasks"], "resync_s": round(queued["resync_seconds"], 2),
    }
    if not args.no_record:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        with RESULTS.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        console.print(f"recorded in {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
