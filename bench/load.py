"""Load test: concurrent query clients against ``knotwork serve`` on the embedded stack.

    python -m bench.load [--clients 20] [--seconds 60] [--data DIR] [--port 8765]

Ingests the sample corpus into a fresh data dir (or uses ``--data``), starts ``knotwork serve``
as a child process, measures the single-client latency over the question set, then runs
``--clients`` concurrent clients for ``--seconds`` and prints p50/p95/max, throughput, the
error count and the ratio of the concurrent p95 to the single-client p95 (goal ≤ 2.0, with
zero errors). ``--think-ms`` gives each client a pause between requests (an analyst reading
the answer); 0 sends back to back, which on 2 cores measures queueing more than the service.
The server runs with the query cache on (``--no-cache`` to compare); the
single-client figure is measured after a warm-up pass, like the concurrent one, by one client
behaving exactly like each concurrent one (the same questions and the same think time), so the
ratio isolates what concurrency costs; the back-to-back single-client p95 is printed too.
Appends a JSON line to bench/results/load.jsonl.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results" / "load.jsonl"
SAMPLE = ROOT.parent / "src" / "knotwork" / "sample_data"
QUESTIONS = [q["q"] for q in json.loads((ROOT / "sample_questions.json").read_text())]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] if ordered else 0.0


def _knotwork() -> list[str]:
    script = Path(sys.executable).with_name("knotwork")
    return [str(script)] if script.exists() else [sys.executable, "-m", "knotwork.services.cli"]


def _serve(data: Path, port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([*_knotwork(), "--data-dir", str(data), "serve", "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"knotwork serve exited: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    proc.kill()
    raise SystemExit("knotwork serve did not become ready in 180 s")


class _Connection:
    """One keep-alive HTTP/1.1 connection speaking just enough of the protocol to POST a query
    and read the answer (like ``wrk``): the load generator costs tens of microseconds per
    request, so what is measured is the server, not the client's own thread contention."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def ask(self, question: str) -> tuple[float, bool]:
        body = json.dumps({"query": question, "mode": "AUTO"}).encode()
        request = (f"POST /v1/graphrag/query HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                   f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                   ).encode() + body
        started = time.perf_counter()
        try:
            if self.writer is None:
                self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
            assert self.reader is not None
            self.writer.write(request)
            head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), 60)
            status = int(head.split(b" ", 2)[1])
            length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            await asyncio.wait_for(self.reader.readexactly(length), 60)
            ok = status == 200
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                TimeoutError, StopIteration, ValueError):
            await self.close()
            ok = False
        return time.perf_counter() - started, ok

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


async def _client(port: int, questions: list[str], think_s: float, until: float | None,
                  offset: int = 0) -> tuple[list[float], int]:
    """One client: asks ``questions`` in turn (cycling until ``until`` when given), pausing
    ``think_s`` after each answer; returns the latencies and the error count."""
    connection = _Connection(port)
    latencies: list[float] = []
    errors = 0
    i = offset
    try:
        while (time.monotonic() < until) if until is not None else (i - offset < len(questions)):
            elapsed, ok = await connection.ask(questions[i % len(questions)])
            i += 1
            latencies.append(elapsed)
            errors += not ok
            if think_s:
                await asyncio.sleep(think_s)
    finally:
        await connection.close()
    return latencies, errors


async def _measure(port: int, clients: int, seconds: float, think_s: float
                   ) -> tuple[list[float], list[float], list[float], int, float]:
    await _client(port, QUESTIONS, 0.0, None)  # warm-up: models, caches, first-touch costs
    back_to_back, _ = await _client(port, QUESTIONS * 2, 0.0, None)
    # one client alone, pacing exactly like each concurrent one
    single, _ = await _client(port, QUESTIONS * 4, think_s, None)
    until = time.monotonic() + seconds
    started = time.monotonic()
    runs = await asyncio.gather(*(_client(port, QUESTIONS, think_s, until, k * 3)
                                  for k in range(clients)))
    wall = time.monotonic() - started
    latencies = [x for run, _ in runs for x in run]
    return back_to_back, single, latencies, sum(e for _, e in runs), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--data", type=Path, default=None, help="an ingested data dir to serve")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--think-ms", type=float, default=0.0,
                        help="pause of each client between requests (0: back to back)")
    parser.add_argument("--no-cache", action="store_true",
                        help="serve without the Redis query cache (on by default here)")
    args = parser.parse_args()
    console = Console()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    if not args.no_cache:  # the design's query-result cache (the embedded FalkorDB's Redis)
        env["KNOTWORK_CACHE_ENABLED"] = "true"
    workdir = Path(tempfile.mkdtemp(prefix="knotwork-load-"))
    data = args.data or workdir / "data"
    try:
        if args.data is None:
            console.print(f"ingesting {SAMPLE} …")
            subprocess.run([*_knotwork(), "--data-dir", str(data), "ingest", str(SAMPLE)],
                           env=env, check=True, stdout=subprocess.DEVNULL)
        port = args.port or _free_port()
        server = _serve(data, port, env)
        try:
            console.print(f"one client, then {args.clients} clients for {args.seconds:.0f} s …")
            back_to_back, single, latencies, error_count, wall = asyncio.run(
                _measure(port, args.clients, args.seconds, args.think_ms / 1000))
            errors = [error_count]
        finally:
            server.terminate()
            server.wait(timeout=30)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    figures = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"), "clients": args.clients,
        "cache": not args.no_cache, "think_ms": args.think_ms,
        "seconds": args.seconds, "requests": len(latencies), "errors": errors[0],
        "throughput_rps": round(len(latencies) / wall, 2),
        "single_p50_ms": round(statistics.median(single) * 1000, 1),
        "single_p95_ms": round(_pct(single, 95) * 1000, 1),
        "single_back_to_back_p95_ms": round(_pct(back_to_back, 95) * 1000, 1),
        "concurrent_p50_ms": round(statistics.median(latencies) * 1000, 1) if latencies else None,
        "concurrent_p95_ms": round(_pct(latencies, 95) * 1000, 1),
        "concurrent_max_ms": round(max(latencies, default=0) * 1000, 1),
    }
    figures["p95_ratio"] = round(figures["concurrent_p95_ms"] / max(figures["single_p95_ms"], 0.001), 2)
    table = Table(title="knotwork serve under load (embedded stack)")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, value in figures.items():
        table.add_row(key, str(value))
    console.print(table)
    console.print(f"p95 ratio {figures['p95_ratio']} (goal ≤ 2.0), errors {figures['errors']} (goal 0)")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with RESULTS.open("a", encoding="utf-8") as out:
        out.write(json.dumps(figures) + "\n")


if __name__ == "__main__":
    main()
