"""The API's own documentation: Swagger UI served from the installed ``swagger-ui-bundle-v2``
assets (no CDN, so ``/docs`` renders offline), ``GET /`` sending a browser there, and the
OpenAPI security schemes (the Authorize button) as the auth mode enforces them."""

from __future__ import annotations

from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from knotwork.services.api.auth import scope_for
from knotwork.settings import AuthMode

DOCS = "/docs"
ASSETS = "/docs/assets"
BEARER, API_KEY = "bearerAuth", "apiKeyHeader"
log = structlog.get_logger(__name__)
_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}

SECURITY_SCHEMES: dict[str, dict[str, str]] = {
    BEARER: {"type": "http", "scheme": "bearer",
             "description": "An API key (`knotwork keys create NAME --scope query`) as "
                            "`Authorization: Bearer <key>`."},
    API_KEY: {"type": "apiKey", "in": "header", "name": "X-API-Key",
              "description": "The same API key in the `X-API-Key` header."},
}


def add_security(schema: dict[str, Any], mode: AuthMode) -> None:
    """Declare both ways to send a key and which operations need one. ``off``: none does;
    ``auto``: keys are enforced only once one was issued, so a key is optional (``{}``);
    open paths (``/healthz``, …) never need one."""
    if mode is AuthMode.OFF:
        return
    schema.setdefault("components", {})["securitySchemes"] = SECURITY_SCHEMES
    keyed: list[dict[str, list[str]]] = [{BEARER: []}, {API_KEY: []}]
    if mode is AuthMode.AUTO:
        keyed.append({})
    for path, item in schema.get("paths", {}).items():
        for method, operation in item.items():
            if method in _METHODS:
                operation["security"] = keyed if scope_for(method.upper(), path) else []


def _swagger_ui_assets() -> str | None:
    """The installed Swagger UI directory; None (and a warning) in an environment installed
    before the dependency was added, so the API still serves."""
    try:
        from swagger_ui_bundle import swagger_ui_path
    except ImportError:
        log.warning("docs.assets_missing", detail="swagger-ui-bundle-v2 is not installed: "
                    "/docs loads Swagger UI from its CDN (blank offline)")
        return None
    return str(swagger_ui_path)


def install_docs(app: FastAPI, mode: AuthMode) -> None:
    """Mount the Swagger UI assets, serve ``/docs`` from them, redirect ``/`` and add the
    security schemes to the schema. The app must be built with ``docs_url=None``."""
    assets = _swagger_ui_assets()
    if assets is not None:
        app.mount(ASSETS, StaticFiles(directory=assets), name="docs-assets")

    @app.get(DOCS, include_in_schema=False)
    def docs(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        local: dict[str, Any] = {} if assets is None else {
            "swagger_js_url": f"{root}{ASSETS}/swagger-ui-bundle.js",
            "swagger_css_url": f"{root}{ASSETS}/swagger-ui.css",
            "swagger_favicon_url": f"{root}{ASSETS}/favicon-32x32.png"}
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}", title=f"{app.title} API",
            swagger_ui_parameters={"persistAuthorization": True}, **local)

    @app.get("/", include_in_schema=False)
    def home(request: Request) -> RedirectResponse:
        return RedirectResponse(f"{request.scope.get('root_path', '')}{DOCS}")

    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            add_security(generate(), mode)
        assert app.openapi_schema is not None
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
