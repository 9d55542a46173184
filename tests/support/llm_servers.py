"""A scripted OpenAI-compatible HTTP server (fails, stalls, replies or proxies as told).

The real llama.cpp server lives in ``knotwork.infra.llm.local_server``.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self

import httpx


@dataclass
class Step:
    """What the scripted server does with one request."""

    status: int = 200
    content: str | None = None  # the assistant message (200 only)
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    proxy: str | None = None  # forward the request to this base URL instead
    body: str | None = None  # the error body (non-200 only)
    stream: list[str] | None = None  # 200 as Server-Sent chat-completion chunks: these deltas
    stream_cut_after: int | None = None  # drop the connection after this many deltas
    stream_gap_s: float = 0.0  # pause before each delta


def stream_chunk(delta: str | None, usage: tuple[int, int] | None = None) -> bytes:
    """One ``data:`` line of a streamed chat completion (a usage-only chunk when no delta)."""
    choices = [] if delta is None else [{"index": 0, "delta": {"content": delta},
                                          "finish_reason": None}]
    chunk: dict[str, object] = {"id": "x", "object": "chat.completion.chunk",
                                "model": "scripted", "choices": choices}
    if usage is not None:
        chunk["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                          "total_tokens": sum(usage)}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def completion(content: str, prompt_tokens: int = 11, completion_tokens: int = 7) -> bytes:
    return json.dumps({
        "id": "x", "object": "chat.completion", "model": "scripted",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }).encode()


class ScriptedServer:
    """One step per request (the last repeats); request bodies are recorded."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = list(steps)
        self.requests: list[dict[str, object]] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                server.requests.append(json.loads(raw or b"{}"))
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                server.times.append(time.monotonic())
                step = server.steps.pop(0) if len(server.steps) > 1 else server.steps[0]
                if step.delay_s:
                    time.sleep(step.delay_s)
                if step.stream is not None and not step.proxy and step.status == 200:
                    self._stream(step)
                    return
                if step.proxy:
                    upstream = httpx.post(step.proxy.rstrip("/") + "/chat/completions",
                                          content=raw, timeout=300.0,
                                          headers={"content-type": "application/json"})
                    status, body = upstream.status_code, upstream.content
                elif step.status == 200:
                    status, body = 200, completion(step.content or "{}")
                else:
                    status = step.status
                    body = (step.body or '{"error": {"message": "scripted failure"}}').encode()
                try:
                    self.send_response(status)
                    for key, value in step.headers.items():
                        self.send_header(key, value)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def _stream(self, step: Step) -> None:
                assert step.stream is not None
                try:
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.end_headers()
                    self.wfile.write(b": keep-alive\n\n")
                    for i, delta in enumerate(step.stream):
                        if step.stream_cut_after is not None and i >= step.stream_cut_after:
                            self.close_connection = True  # EOF before [DONE]
                            return
                        if step.stream_gap_s:
                            time.sleep(step.stream_gap_s)
                        self.wfile.write(stream_chunk(delta))
                        self.wfile.flush()
                    self.wfile.write(stream_chunk(None, (11, len(step.stream))))
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
