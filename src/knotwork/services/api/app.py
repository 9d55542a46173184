"""FastAPI app: the Knotwork instance is opened and closed in the lifespan."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from http import HTTPStatus

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from knotwork.settings import Settings

PROBLEM = "application/problem+json"
_STATUSES = {s.value for s in HTTPStatus}
log = structlog.get_logger(__name__)


def problem(status: int, title: str, detail: str) -> JSONResponse:
    return JSONResponse(status_code=status, media_type=PROBLEM,
                        content={"type": "about:blank", "title": title, "status": status,
                                 "detail": detail})


def create_app(settings: Settings | None = None) -> FastAPI:
    from knotwork.services.api import community_routes, graphrag_routes, routes

    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        import anyio.to_thread

        from knotwork.core import Knotwork

        kw = await anyio.to_thread.run_sync(Knotwork, settings)
        app.state.knotwork = kw
        app.state.write_lock = threading.Lock()
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(kw.close)

    app = FastAPI(title="Knotwork", version="0.1.0", lifespan=lifespan)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        return problem(422, "Invalid request", f"{where}: {first.get('msg', 'invalid')}".strip(": "))

    @app.exception_handler(ValueError)
    async def _bad_value(_: Request, exc: ValueError) -> JSONResponse:
        return problem(400, "Bad request", str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        title = HTTPStatus(exc.status_code).phrase if exc.status_code in _STATUSES else "Error"
        response = problem(exc.status_code, title, str(exc.detail))
        response.headers.update(exc.headers or {})
        return response

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("api.unhandled_error")
        return problem(500, "Internal Server Error", type(exc).__name__)

    app.include_router(routes.router)
    app.include_router(graphrag_routes.router)
    app.include_router(community_routes.router)
    return app
