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

Pacing: by default each pause is drawn uniformly from 0.5-1.5 × ``--think-ms`` (seeded) and
the clients start spread over one pause, like independent analysts. ``--lockstep`` is the
earlier generator: every client starts at the same instant and pauses exactly ``--think-ms``,
so answers that finish together come back together, and the 20 clients stay a convoy of
bursts at ~6% server utilisation.

Also printed: the server's CPU ms per request in the concurrent phase (the ``serve``
process and its embedded redis-server, from /proc), the cache hits and misses it served
(``/metrics``), the share of requests that arrived while another was in flight, the load
average and this process's nice value (run the bench as ``nice -n -10 …`` as root to raise
both the load generator and the server it starts). Appends a JSON line to
bench/results/load.jsonl.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

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


class _Pacing:
    """The pause after each answer: exactly ``think_s`` (lockstep), else drawn uniformly from
    0.5-1.5 × ``think_s`` (the same mean); ``start`` is a client's delay before its first
    question (0 in lockstep, else spread over one pause)."""

    def __init__(self, think_s: float, lockstep: bool, seed: int) -> None:
        self.think_s = think_s
        self.lockstep = lockstep
        self._random = random.Random(seed)

    def pause(self) -> float:
        return self.think_s if self.lockstep else self.think_s * self._random.uniform(0.5, 1.5)

    def start(self) -> float:
        return 0.0 if self.lockstep else self._random.uniform(0.0, self.think_s)


async def _client(port: int, questions: list[str], pacing: _Pacing | None, until: float | None,
                  offset: int = 0, spans: list[tuple[float, float]] | None = None,
                  ) -> tuple[list[float], int]:
    """One client: asks ``questions`` in turn (cycling until ``until`` when given), pausing
    after each answer (no pause without ``pacing``); returns the latencies and the error
    count, and appends each request's (start, end) to ``spans``."""
    connection = _Connection(port)
    latencies: list[float] = []
    errors = 0
    i = offset
    if pacing is not None and until is not None:
        await asyncio.sleep(pacing.start())
    try:
        while (time.monotonic() < until) if until is not None else (i - offset < len(questions)):
            begun = time.monotonic()
            elapsed, ok = await connection.ask(questions[i % len(questions)])
            i += 1
            latencies.append(elapsed)
            if spans is not None:
                spans.append((begun, begun + elapsed))
            errors += not ok
            if pacing is not None and pacing.think_s:
                await asyncio.sleep(pacing.pause())
    finally:
        await connection.close()
    return latencies, errors


def _overlapped(spans: list[tuple[float, float]]) -> float:
    """The share of requests that started while another one was still in flight."""
    spans = sorted(spans)
    busy_until, overlapped = float("-inf"), 0
    for begun, ended in spans:
        overlapped += begun < busy_until
        busy_until = max(busy_until, ended)
    return overlapped / len(spans) if spans else 0.0


class _Phase(NamedTuple):
    back_to_back: list[float]
    single: list[float]
    latencies: list[float]
    errors: int
    wall: float
    overlapped: float
    cpu_s: float  # the server's CPU seconds in the concurrent phase (with its children)
    cache: dict[str, float]  # query-cache hits / misses the server counted meanwhile


async def _measure(port: int, clients: int, seconds: float, think_s: float, lockstep: bool,
                   server_pid: int) -> _Phase:
    await _client(port, QUESTIONS, None, None)  # warm-up: models, caches, first-touch costs
    back_to_back, _ = await _client(port, QUESTIONS * 2, None, None)
    # one client alone, pacing exactly like each concurrent one
    single, _ = await _client(port, QUESTIONS * 4, _Pacing(think_s, lockstep, seed=1), None)
    pacings = [_Pacing(think_s, lockstep, seed=100 + k) for k in range(clients)]
    spans: list[tuple[float, float]] = []
    cache_before, cpu_before = _cache_counts(port), _cpu_seconds(server_pid)
    until = time.monotonic() + seconds
    started = time.monotonic()
    runs = await asyncio.gather(*(_client(port, QUESTIONS, pacings[k], until, k * 3, spans)
                                  for k in range(clients)))
    wall = time.monotonic() - started
    cpu_s = _cpu_seconds(server_pid) - cpu_before
    cache_after = _cache_counts(port)
    latencies = [x for run, _ in runs for x in run]
    return _Phase(back_to_back, single, latencies, sum(e for _, e in runs), wall,
                  _overlapped(spans), cpu_s,
                  {k: cache_after.get(k, 0.0) - cache_before.get(k, 0.0) for k in ("hit", "miss")})


def _cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` and its child processes (Linux /proc; 0.0 elsewhere)."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0.0
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(c) for c in children]
        for p in pids:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    except (OSError, ValueError, IndexError):
        return 0.0
    return total


_CACHE_LINE = re.compile(r'^knotwork_cache_requests_total\{layer="query",outcome="(hit|miss)"\} (\S+)$',
                         re.MULTILINE)


def _cache_counts(port: int) -> dict[str, float]:
    """The server's query-cache lookups so far, by outcome (``/metrics``)."""
    try:
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    except httpx.HTTPError:
        return {}
    return {outcome: float(value) for outcome, value in _CACHE_LINE.findall(text)}


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
    parser.add_argument("--lockstep", action="store_true",
                        help="all clients start together and pause exactly --think-ms "
                             "(default: staggered starts, pauses of 0.5-1.5 × --think-ms)")
    args = parser.parse_args()
    load_before = os.getloadavg()
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
            phase = asyncio.run(_measure(port, args.clients, args.seconds, args.think_ms / 1000,
                                         args.lockstep, server.pid))
        finally:
            server.terminate()
            server.wait(timeout=30)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    single, back_to_back, latencies = phase.single, phase.back_to_back, phase.latencies
    figures: dict[str, object] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"), "clients": args.clients,
        "cache": not args.no_cache, "think_ms": args.think_ms,
        "pacing": "lockstep" if args.lockstep else "jittered",
        "hits_on_event_loop": env.get("KNOTWORK_CACHE_HITS_ON_EVENT_LOOP", "default"),
        "nice": os.nice(0) if hasattr(os, "nice") else 0,
        "loadavg_before": round(load_before[0], 2), "loadavg_after": round(os.getloadavg()[0], 2),
        "seconds": args.seconds, "requests": len(latencies), "errors": phase.errors,
        "throughput_rps": round(len(latencies) / phase.wall, 2),
        "server_cpu_ms_per_request": round(phase.cpu_s * 1000 / max(len(latencies), 1), 2),
        "cache_hits": int(phase.cache["hit"]), "cache_misses": int(phase.cache["miss"]),
        "overlapped_share": round(phase.overlapped, 3),
        "single_p50_ms": round(statistics.median(single) * 1000, 1),
        "single_p95_ms": round(_pct(single, 95) * 1000, 1),
        "single_back_to_back_p95_ms": round(_pct(back_to_back, 95) * 1000, 1),
        "concurrent_p50_ms": round(statistics.median(latencies) * 1000, 1) if latencies else None,
        "concurrent_p95_ms": round(_pct(latencies, 95) * 1000, 1),
        "concurrent_max_ms": round(max(latencies, default=0) * 1000, 1),
    }
    concurrent_p95, single_p95 = round(_pct(latencies, 95) * 1000, 1), round(_pct(single, 95) * 1000, 1)
    figures["p95_ratio"] = round(concurrent_p95 / max(single_p95, 0.001), 2)
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
