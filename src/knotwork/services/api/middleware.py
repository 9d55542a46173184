"""Cross-cutting HTTP behaviour: request ids, body size limits, latency metrics, store outages.

Pure ASGI middleware (no ``BaseHTTPMiddleware``), so streamed responses pass through untouched.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from functools import lru_cache
from typing import Any

import structlog

from knotwork.observability.metrics import get_metrics

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_REQUEST_ID = b"x-request-id"
log = structlog.get_logger(__name__)


class BodyTooLargeError(Exception):
    pass


class OpsMiddleware:
    """Request id (``X-Request-ID`` kept or minted, bound to every log line), a cap on the request
    body (413 problem before the route runs) and a latency histogram per route template."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        request_id = headers.get(_REQUEST_ID, b"").decode("latin-1")[:128] or uuid.uuid4().hex
        structlog.contextvars.bind_contextvars(request_id=request_id)
        started = time.perf_counter()
        status = {"code": 500}

        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            await _too_large(send, request_id, self.max_body_bytes)
            _observe(scope, 413, started)
            structlog.contextvars.unbind_contextvars("request_id")
            return

        seen = {"bytes": 0}

        async def capped_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                seen["bytes"] += len(message.get("body", b""))
                if seen["bytes"] > self.max_body_bytes:
                    raise BodyTooLargeError
            return message

        async def tagged_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (_REQUEST_ID, request_id.encode("latin-1"))]
            await send(message)

        try:
            await self.app(scope, capped_receive, tagged_send)
        except BodyTooLargeError:
            status["code"] = 413
            await _too_large(send, request_id, self.max_body_bytes)
        finally:
            _observe(scope, status["code"], started)
            structlog.contextvars.unbind_contextvars("request_id")


def _observe(scope: Scope, status: int, started: float) -> None:
    """The latency histogram and the request's log line (INFO: the route template, not the
    raw path, so ids and query strings stay out of the logs)."""
    route = scope.get("route")
    template = getattr(route, "path", None) or "unmatched"
    method = scope.get("method", "?")
    seconds = time.perf_counter() - started
    get_metrics().http_seconds.labels(method, template, str(status)).observe(seconds)
    log.info("http.request", method=method, route=template, status=status,
             ms=round(seconds * 1000, 1))


async def _too_large(send: Send, request_id: str, limit: int) -> None:
    body = json.dumps({"type": "about:blank", "title": "Payload Too Large", "status": 413,
                       "detail": f"request body exceeds {limit} bytes"}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/problem+json"),
                            (b"content-length", str(len(body)).encode()),
                            (_REQUEST_ID, request_id.encode("latin-1"))]})
    await send({"type": "http.response.body", "body": body})


@lru_cache(maxsize=1)
def store_outage_errors() -> tuple[type[BaseException], ...]:
    """Exception classes meaning "a store cannot be reached" (each client imported lazily)."""
    found: list[type[BaseException]] = [ConnectionError, TimeoutError]
    candidates = [
        ("redis.exceptions", "ConnectionError"), ("redis.exceptions", "TimeoutError"),
        ("redis.exceptions", "BusyLoadingError"),
        ("sqlalchemy.exc", "OperationalError"), ("sqlalchemy.exc", "InterfaceError"),
        ("psycopg", "OperationalError"),
        ("neo4j.exceptions", "ServiceUnavailable"), ("neo4j.exceptions", "SessionExpired"),
        ("httpx", "ConnectError"), ("httpx", "ConnectTimeout"),
        ("qdrant_client.http.exceptions", "ResponseHandlingException"),
    ]
    import importlib

    for module_name, name in candidates:
        try:
            cls = getattr(importlib.import_module(module_name), name)
        except (ImportError, AttributeError):
            continue
        if isinstance(cls, type) and issubclass(cls, BaseException):
            found.append(cls)
    return tuple(found)


def is_store_outage(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, store_outage_errors()):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False
