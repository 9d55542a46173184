"""Crash benchmark: ``kill -9`` at random points of an ingest, the documented recovery, and a
store-by-store comparison with a clean ingest of the same files.

``python -m bench.crash --runs 20`` (see bench/README.md). Each run ingests a small generated
world (``bench.world``, Confluence pages) with ``knotwork ingest`` in a fresh data directory
and kills, at a seeded random moment, either the CLI process or the embedded FalkorDB server
it started; or enqueues the pages (``ingest --queue``) and kills ``knotwork worker`` while it
works the queue. The recovery is the one documented command: the same ``knotwork ingest``
again, or for the worker ``knotwork worker --until-empty`` (it takes the dead worker's jobs
over and rolls back what they half wrote); the worker runs are compared with a clean run of
the queue path.
Then the graph (entities, facts with confidences and evidence, episodes, MENTIONS), the
vectors (ids, payloads, values) and the SQL rows must equal a clean ingest's
(``bench.crash_state``). A killed graph server must make the CLI exit 2 with one line.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.crash_state import Snapshot, compare, facts_without_vectors, snapshot

TARGETS = ("cli", "graph", "worker")
CLAIM_IDLE_S = "0.5"  # a dead worker's jobs are taken over this soon (default 60 s)
_EARLY = 0.2  # share of kills anywhere before the first write (startup, extraction)
BATCH = 16  # documents per inline ingest batch (IngestionPipeline's default)


@dataclass
class Timeline:
    """A clean run's batches: when each was begun (its rows PROCESSING in SQL) and when it
    was COMPLETED, in seconds after the start."""

    begun_s: list[float]
    completed_s: list[float]

    def window(self, batch: int) -> float:
        return self.completed_s[batch] - self.begun_s[batch]


@dataclass
class Run:
    index: int
    target: str
    batch: int  # the kill came this long after the batch was begun (-1: after the start)
    kill_at_s: float
    killed: bool  # False: the ingest finished before the kill
    exit_code: int = 0
    error_lines: int = 0
    unfinished: int = 0  # documents not COMPLETED after the kill
    recovery_exit: int = 0
    differences: int = 0
    facts_without_vectors: int = 0
    first_differences: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)  # the killed command's last lines

    @property
    def exit_ok(self) -> bool:
        """A killed CLI says nothing; a CLI whose graph server died exits 2 with one line, or
        0 when every document was finished before (the server died as the CLI closed)."""
        if not self.killed or self.target == "cli":
            return True
        if self.target == "worker":  # a killed worker says nothing either
            return True
        return (self.exit_code == 2 and self.error_lines == 1) \
            or (self.exit_code == 0 and self.unfinished == 0)


_PROGRESS = re.compile(r"^[a-z][a-z -]*: \d+(?:/\d+)?[ ,]")  # 'ingest: 16/31 (52%), 2.1/s, …'


def _error_lines(stderr: str) -> int:
    """The lines a command said on stderr besides its periodic progress lines."""
    return sum(1 for line in stderr.strip().splitlines() if not _PROGRESS.match(line))


def _env(data: Path, embedder: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KNOTWORK_")}
    env.update({"KNOTWORK_DATA_DIR": str(data), "KNOTWORK_EMBEDDER": embedder,
                "HF_HUB_OFFLINE": "1", "NO_COLOR": "1",
                "KNOTWORK_QUEUE_CLAIM_IDLE_S": CLAIM_IDLE_S})
    return env


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "knotwork.services.cli", *args]


def _documents(data: Path) -> tuple[int, int]:
    """(rows, COMPLETED rows) of the documents table; (0, 0) before it exists."""
    db = data / "knotwork.db"
    if not db.exists():
        return 0, 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            rows, done = conn.execute(
                "select count(*), coalesce(sum(processing_status = 'COMPLETED'), 0) "
                "from documents").fetchone()
            return int(rows), int(done)
    except sqlite3.Error:
        return 0, 0


def _ingest(source: Path, data: Path, embedder: str) -> subprocess.Popen[str]:
    return subprocess.Popen(_command("ingest", str(source)), env=_env(data, embedder),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _rows_reach(proc: subprocess.Popen[str], data: Path, rows: int, done: int) -> bool:
    """Wait until the documents table has ``rows`` rows and ``done`` COMPLETED (False: the
    process ended first)."""
    while proc.poll() is None:
        have, finished = _documents(data)
        if have >= rows and finished >= done:
            return True
        time.sleep(0.01)
    return False


def _worker(data: Path, embedder: str) -> subprocess.Popen[str]:
    return subprocess.Popen(_command("worker", "--until-empty"), env=_env(data, embedder),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _enqueue(source: Path, data: Path, embedder: str) -> None:
    done = subprocess.run(_command("ingest", str(source), "--queue"), env=_env(data, embedder),
                          capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench.crash: ingest --queue failed ({done.returncode}): "
                         f"{done.stderr.strip()}")


def _touched(data: Path) -> int:
    """Documents the worker has begun (not PENDING any more)."""
    db = data / "knotwork.db"
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return int(conn.execute("select count(*) from documents "
                                    "where processing_status != 'PENDING'").fetchone()[0])
    except sqlite3.Error:
        return 0


def _first_touch(proc: subprocess.Popen[str], data: Path) -> float:
    """Wait until the worker begins its first document (past the model loading); its time."""
    while proc.poll() is None and _touched(data) == 0:
        time.sleep(0.01)
    return time.monotonic()


def clean_queue(source: Path, data: Path, embedder: str) -> float:
    """The queue path run to the end: enqueue, one worker until the queue is empty; returns
    how long the worker took from its first document (the worker kills land up to 1.25
    times that after its first document, or during its start-up)."""
    _enqueue(source, data, embedder)
    proc = _worker(data, embedder)
    t0 = _first_touch(proc, data)
    _, err = proc.communicate(timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"bench.crash: the clean worker failed ({proc.returncode}): {err.strip()}")
    return time.monotonic() - t0


def worker_run(index: int, rng: random.Random, worker_s: float, source: Path, data: Path,
               embedder: str, clean: Snapshot) -> Run:
    """Enqueue, start a worker, kill -9 it at a random moment; recover with a new worker."""
    _enqueue(source, data, embedder)
    early = rng.random() < _EARLY  # during the start-up, before any document
    delay = rng.uniform(0.0, 5.0 if early else 1.25 * worker_s)
    proc = _worker(data, embedder)
    t0 = time.monotonic() if early else _first_touch(proc, data)
    killed = False
    while proc.poll() is None:
        if time.monotonic() - t0 >= delay:
            os.kill(proc.pid, signal.SIGKILL)
            killed = True
            break
        time.sleep(0.01)
    def recover() -> int:
        recovery = _worker(data, embedder)
        recovery.communicate(timeout=1800)
        return recovery.returncode

    return _outcome(Run(index=index, target="worker", batch=-1 if early else 0,
                        kill_at_s=round(delay, 3), killed=killed), proc, recover, data,
                    embedder, clean)


def _outcome(run: Run, proc: subprocess.Popen[str], recover: Callable[[], int], data: Path,
             embedder: str, clean: Snapshot) -> Run:
    """After the kill: the killed process's exit, the documented recovery, and the stores
    compared with the clean run's."""
    _, err = proc.communicate(timeout=600)
    rows, done = _documents(data)
    run.recovery_exit = recover()
    after = _state(data, embedder)
    diffs = compare(clean, after)
    run.exit_code, run.error_lines, run.unfinished = proc.returncode, _error_lines(err), rows - done
    run.differences, run.facts_without_vectors = len(diffs), facts_without_vectors(after)
    run.first_differences = [d.line() for d in diffs[:8]]
    run.stderr = err.strip().splitlines()[-3:]
    return run


def clean_ingest(source: Path, data: Path, embedder: str) -> Timeline:
    t0 = time.monotonic()
    proc = _ingest(source, data, embedder)
    begun: dict[int, float] = {}
    completed: dict[int, float] = {}
    while proc.poll() is None:
        have, finished = _documents(data)
        now = time.monotonic() - t0
        for batch in range((have + BATCH - 1) // BATCH):
            begun.setdefault(batch, now)
            if finished == have:  # every begun row COMPLETED: this batch is written
                completed.setdefault(batch, now)
        time.sleep(0.01)
    _, err = proc.communicate()
    if proc.returncode != 0 or not begun or completed.keys() != begun.keys():
        raise SystemExit(f"bench.crash: the clean ingest failed ({proc.returncode}): {err.strip()}")
    return Timeline([begun[b] for b in sorted(begun)], [completed[b] for b in sorted(begun)])


def _graph_pid(data: Path) -> int | None:
    try:
        return int(json.loads((data / "falkordb" / "server.json").read_text())["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _kill_at(rng: random.Random, timeline: Timeline) -> tuple[int, float]:
    """(batch, seconds after it was begun): a batch at random, a moment up to 1.25 times its
    write in the clean run; or (-1, seconds after the start) before the first write."""
    if rng.random() < _EARLY:
        return -1, rng.uniform(0.0, timeline.begun_s[0])
    batch = rng.randrange(len(timeline.begun_s))
    return batch, rng.uniform(0.0, 1.25 * timeline.window(batch))


def _state(data: Path, embedder: str) -> Snapshot:
    from knotwork.core import Knotwork
    from knotwork.settings import Settings

    with Knotwork(Settings(data_dir=data, embedder=embedder)) as kw:  # type: ignore[arg-type]
        return snapshot(kw)


def crash_run(index: int, target: str, kill_at: tuple[int, float], source: Path, data: Path,
              embedder: str, clean: Snapshot) -> Run:
    t0 = time.monotonic()
    proc = _ingest(source, data, embedder)
    batch, delay = kill_at
    if batch >= 0 and _rows_reach(proc, data, batch * BATCH + 1, 0):
        t0 = time.monotonic()
    killed = False
    while proc.poll() is None:
        if time.monotonic() - t0 >= delay:
            pid = proc.pid if target == "cli" else _graph_pid(data)
            if pid is not None:
                os.kill(pid, signal.SIGKILL)
                killed = True
                break
        time.sleep(0.01)
    def recover() -> int:
        return subprocess.run(_command("ingest", str(source)), env=_env(data, embedder),
                              capture_output=True, text=True, timeout=900, check=False).returncode

    return _outcome(Run(index=index, target=target, batch=batch, kill_at_s=round(delay, 3),
                        killed=killed), proc, recover, data, embedder, clean)


def _describe(run: Run) -> str:
    at = f"+{run.kill_at_s:.2f}s after " + (
        "the worker began its first document" if run.target == "worker" and run.batch >= 0
        else "the worker started" if run.target == "worker"
        else f"batch {run.batch + 1} began" if run.batch >= 0 else "the start")
    when = f"kill -9 {run.target} {at}" if run.killed else f"(ingest finished before {at})"
    exit_note = "" if run.exit_ok else f", EXIT {run.exit_code} with {run.error_lines} line(s)"
    return (f"run {run.index:>2}: {when}: exit {run.exit_code}, {run.unfinished} unfinished"
            f"{exit_note}; recovery exit {run.recovery_exit}; differences {run.differences}, "
            f"facts without vectors {run.facts_without_vectors}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.crash", description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7, help="kill points and targets")
    parser.add_argument("--people", type=int, default=8, help="world size (8: 30 pages)")
    parser.add_argument("--targets", default=",".join(TARGETS),
                        help="comma-separated: cli (the ingest), graph (its FalkorDB server), "
                        "worker (knotwork worker on the queue path)")
    parser.add_argument("--embedder", default="hashing", help="hashing (fast) or minilm")
    parser.add_argument("--keep", type=Path, help="keep the data directories here")
    parser.add_argument("--json", type=Path, help="write the runs as JSON here")
    args = parser.parse_args(argv)
    targets = [t for t in args.targets.split(",") if t]
    if not targets or any(t not in TARGETS for t in targets):
        parser.error(f"--targets: choose from {', '.join(TARGETS)}")
    from bench.world.build import generate_world
    from knotwork.logging import configure_logging

    configure_logging("WARNING")

    root = Path(tempfile.mkdtemp(prefix="kw-crash-")) if args.keep is None else args.keep
    root.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    started = time.monotonic()
    try:
        world = root / "world"
        if not world.exists():
            generate_world(world, args.people, args.seed, 1)
        source = world / "confluence"
        pages = len(list(source.glob("*.json")))
        timeline = clean_ingest(source, root / "clean", args.embedder)
        clean = _state(root / "clean", args.embedder)
        print(f"clean ingest of {pages} pages: {len(clean['entities'])} entities, "
              f"{len(clean['facts'])} facts, {len(clean['vectors'])} vectors, "
              f"{len(clean['sql'])} SQL rows; batches written "
              + ", ".join(f"+{b:.1f}s..+{c:.1f}s" for b, c in zip(timeline.begun_s,
                                                                  timeline.completed_s, strict=True)),
              flush=True)
        worker_s, queued = 0.0, clean
        if "worker" in targets:
            worker_s = clean_queue(source, root / "clean-queue", args.embedder)
            queued = _state(root / "clean-queue", args.embedder)
            print(f"clean queue path: {len(queued['entities'])} entities, "
                  f"{len(queued['facts'])} facts, worker {worker_s:.1f}s", flush=True)
        runs: list[Run] = []
        for index in range(1, args.runs + 1):
            target, kill_at = rng.choice(targets), _kill_at(rng, timeline)
            data = root / f"run{index:02d}"
            if target == "worker":
                run = worker_run(index, rng, worker_s, source, data, args.embedder, queued)
            else:
                run = crash_run(index, target, kill_at, source, data, args.embedder, clean)
            runs.append(run)
            print(_describe(run), flush=True)
            if not run.exit_ok:
                for line in run.stderr:
                    print(f"        stderr: {line[:300]}", flush=True)
            for line in run.first_differences:
                print(f"        {line[:600]}", flush=True)
            if args.keep is None:
                shutil.rmtree(data, ignore_errors=True)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    landed = [r for r in runs if r.killed]
    failed = [r for r in runs if r.differences or r.recovery_exit or not r.exit_ok]
    print(f"{len(runs)} runs ({len(landed)} kills landed: "
          f"{sum(r.target == 'cli' for r in landed)} cli, "
          f"{sum(r.target == 'graph' for r in landed)} graph, "
          f"{sum(r.target == 'worker' for r in landed)} worker; "
          f"{sum(r.unfinished > 0 for r in landed)} left unfinished documents), "
          f"{sum(r.differences for r in runs)} differences, {len(failed)} failed runs, "
          f"{time.monotonic() - started:.0f}s")
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in runs], indent=2))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
