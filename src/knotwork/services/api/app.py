"""FastAPI app: the Knotwork instance is opened and closed in the lifespan."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

import structlog
from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from knotwork.domain.errors import UnknownReference
from knotwork.observability.metrics import render_latest
from knotwork.observability.tracing import configure_tracing
from knotwork.services.api.auth import Authenticator, authorize
from knotwork.services.api.docs_ui import install_docs
from knotwork.services.api.middleware import OpsMiddleware, is_store_outage, store_outage_errors
from knotwork.services.api.query_hits import HitBodies
from knotwork.services.api.request_models import PATTERN_MESSAGES
from knotwork.settings import Settings

if TYPE_CHECKING:
    from knotwork.core import Knotwork
    from knotwork.infra.cache.async_reader import AsyncCacheReader

PROBLEM = "application/problem+json"
_STATUSES = {s.value for s in HTTPStatus}
log = structlog.get_logger(__name__)


def problem(status: int, title: str, detail: str) -> JSONResponse:
    return JSONResponse(status_code=status, media_type=PROBLEM,
                        content={"type": "about:blank", "title": title, "status": status,
                                 "detail": detail})


class Problem(BaseModel):
    """RFC 9457 problem details: every 4xx/5xx body."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str


_PROBLEM_SCHEMA = {"application/problem+json": {"schema": Problem.model_json_schema()}}
PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"description": HTTPStatus(code).phrase, "content": _PROBLEM_SCHEMA}
    for code in (400, 401, 403, 404, 409, 413, 422, 429, 500, 503)
}


def _refresh_queue_depth(app: FastAPI) -> None:
    """Set ``knotwork_queue_depth`` from the job queue's streams (best effort, on scrape)."""
    from knotwork.observability.metrics import get_metrics

    kw = getattr(app.state, "knotwork", None)
    if kw is None:
        return
    try:
        queue = getattr(app.state, "job_queue", None)
        if queue is None:
            from knotwork.infra.queue.factory import create_job_queue

            queue = app.state.job_queue = create_job_queue(kw.settings, kw.runtime.graph)
        stats = queue.stats()
    except Exception as exc:  # noqa: BLE001 - no queue (e.g. Neo4j without Redis): no gauge
        log.debug("metrics.queue_unavailable", error=type(exc).__name__)
        return
    gauge = get_metrics().queue_depth
    for stream in stats.streams:
        gauge.labels(stream.stream).set(stream.length)
    gauge.labels("retrying").set(stats.retrying)
    gauge.labels("dead").set(stats.dead)


_METRICS_WAIT_S = 0.5  # how long a scrape waits for the queue depth before sending the last one
_refreshing = threading.Lock()  # one queue-depth refresh at a time


def _refresh_queue_depth_bounded(app: FastAPI) -> None:
    """Refresh the queue depth in a thread and wait for it at most ``_METRICS_WAIT_S``: a
    stalled store (the queue is on its server) leaves the gauge at its last value instead of
    blocking the scrape; while one refresh hangs, scrapes start no other."""
    if not _refreshing.acquire(blocking=False):
        return

    def run() -> None:
        try:
            _refresh_queue_depth(app)
        finally:
            _refreshing.release()

    worker = threading.Thread(target=run, name="metrics-queue-depth", daemon=True)
    worker.start()
    worker.join(_METRICS_WAIT_S)


def _async_cache_reader(kw: Knotwork, settings: Settings) -> AsyncCacheReader | None:
    from knotwork.infra.cache.redis_cache import RedisCache

    cache = kw.runtime.cache
    if not settings.cache_hits_on_event_loop or not isinstance(cache, RedisCache):
        return None
    return cache.async_reader()


def allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at the request's path (a 405's Allow header), found by
    matching (included routers are matched lazily, not listed)."""
    found = []
    for method in ("DELETE", "GET", "PATCH", "POST", "PUT"):
        scope = {**request.scope, "method": method}
        if any(route.matches(scope)[0] is Match.FULL for route in request.app.router.routes):
            found.append(method)
    return found


def create_app(settings: Settings | None = None, *, knotwork: Knotwork | None = None) -> FastAPI:
    """The REST app. It opens (and closes) its own Knotwork in the lifespan, or serves
    ``knotwork``, an instance its caller opened and keeps ownership of."""
    from knotwork.services.admin import routes as admin_routes
    from knotwork.services.api import (
        action_routes,
        community_routes,
        document_routes,
        entity_routes,
        graph_routes,  # retrieval helper: /v1/graph/*
        graphrag_routes,
        routes,
        stream_routes,  # retrieval helper: SSE answers
    )
    from knotwork.services.api.mcp_http import PATH as MCP_PATH
    from knotwork.services.api.mcp_http import McpEndpoint
    from knotwork.services.mcp_server import KnotworkMcp

    store_outage_errors()  # the store clients' exception classes, imported before an outage

    settings = settings or Settings()
    mcp = McpEndpoint(KnotworkMcp(None, settings.group))  # MCP over Streamable HTTP at /mcp
    configure_tracing(settings.otel_endpoint)
    if not structlog.is_configured():  # plain tracebacks, never rich ones with locals (secrets)
        from knotwork.logging import configure_logging

        configure_logging("INFO", json_logs=settings.log_format == "json")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        import anyio.to_thread

        from knotwork.core import Knotwork

        kw = knotwork if knotwork is not None else await anyio.to_thread.run_sync(Knotwork, settings)
        app.state.knotwork = kw
        app.state.auth = Authenticator(settings, kw.runtime.documents.api_keys())
        app.state.write_lock = threading.Lock()
        app.state.cache_reader = _async_cache_reader(kw, settings)  # cache hits on the event loop
        app.state.hit_bodies = HitBodies()
        try:
            async with mcp.running():
                yield
        finally:
            if app.state.cache_reader is not None:
                await app.state.cache_reader.aclose()
            if knotwork is None:  # a caller's instance stays open: its owner closes it
                await anyio.to_thread.run_sync(kw.close)

    app = FastAPI(title="Knotwork", version="0.1.0", lifespan=lifespan, responses=PROBLEM_RESPONSES,
                  dependencies=[Depends(authorize)], docs_url=None, redoc_url=None)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        said = PATTERN_MESSAGES.get((first.get("ctx") or {}).get("pattern", ""))
        return problem(422, "Invalid request",
                       f"{where}: {said or first.get('msg', 'invalid')}".strip(": "))

    @app.exception_handler(UnknownReference)
    async def _unknown(_: Request, exc: UnknownReference) -> JSONResponse:
        return problem(404, "Not Found", str(exc))

    @app.exception_handler(ValueError)
    async def _bad_value(_: Request, exc: ValueError) -> JSONResponse:
        # input the code rejected; logged with its traceback, since a library's ValueError
        # (a tokenizer's, say) lands here too and would otherwise leave no trace
        log.info("api.bad_value", error=str(exc)[:200], exc_info=exc)
        return problem(400, "Bad request", str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        title = HTTPStatus(exc.status_code).phrase if exc.status_code in _STATUSES else "Error"
        response = problem(exc.status_code, title, str(exc.detail))
        response.headers.update(exc.headers or {})
        if exc.status_code == 405:  # Starlette names the first matching route's methods only
            response.headers["Allow"] = ", ".join(allowed_methods(request))
        return response

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        if is_store_outage(exc):  # a store is down: nothing was half-written; try again later
            log.warning("api.store_unavailable", error=type(exc).__name__)
            response = problem(503, "Service Unavailable",
                               f"a backing store is unavailable ({type(exc).__name__}); retry later")
            response.headers["Retry-After"] = str(settings.retry_after_s)
            return response
        log.exception("api.unhandled_error")
        return problem(500, "Internal Server Error", type(exc).__name__)

    @app.get("/metrics", include_in_schema=False)
    def metrics(request: Request) -> Response:
        _refresh_queue_depth_bounded(request.app)
        body, content_type = render_latest()
        return Response(content=body, media_type=content_type)

    app.add_middleware(OpsMiddleware, max_body_bytes=settings.max_request_bytes)

    app.include_router(routes.router)
    app.include_router(entity_routes.router)  # issue 5: entities, review queue, merges
    app.include_router(action_routes.router)  # split, move, undo
    app.include_router(document_routes.router)  # upload, list, status, delete
    app.include_router(admin_routes.router)  # issue 5: the /admin UI
    app.include_router(graphrag_routes.router)
    app.include_router(community_routes.router)
    app.include_router(graph_routes.router)
    app.include_router(stream_routes.router)
    # a plain ASGI route: it authorizes itself (auth.admit), as the SDK parses the JSON-RPC;
    # Starlette serves an endpoint that is not a function as an ASGI app (typed as a function)
    app.router.add_route(MCP_PATH, mcp, include_in_schema=False)  # type: ignore[arg-type]
    install_docs(app, settings.auth_mode)  # /docs from local assets, GET / -> /docs, securitySchemes
    return app
