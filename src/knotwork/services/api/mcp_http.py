"""MCP over Streamable HTTP at ``/mcp``, behind the API's keys and its one tenant decision.

Before the SDK sees a request, :func:`auth.admit` decides it exactly as for a REST route: the
key (401 / 403), the scope (``ingest`` when the body calls a write tool, else ``query``), the
tenant (:func:`tenancy.decide` over every tenant the request names: ``?group_id=``, every
``group_id`` key of the body, each ``resources/read`` URI's ``knotwork://tenants/{group_id}/…``) and
the rate limit. A refusal is a problem+json response. The
decision travels to the tools on the request's state as a :class:`mcp_server.Caller`.

Stateless mode (no session kept between requests, JSON responses): any API replica can
answer any request, like the REST routes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from http import HTTPStatus

from fastapi import HTTPException
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from knotwork.domain.auth import Scope as KeyScope
from knotwork.services.api.auth import admit
from knotwork.services.api.tenancy import FIELD, Named
from knotwork.services.mcp_server import (
    CURRENT_CALLER,
    STATE_KEY,
    WRITE_TOOLS,
    Caller,
    KnotworkMcp,
)

PATH = "/mcp"
RESOURCE_SCHEME = "knotwork://tenants/"


def _messages(body: bytes) -> tuple[list[dict[str, object]], list[object]]:
    """The JSON-RPC messages of a body (one or a batch) and the value of every ``group_id``
    key in it, at any depth, duplicates and escaped spellings included (``json`` keeps only
    the last duplicate: a check that saw one could be fooled). Not JSON: nothing (the SDK
    answers the parse error itself)."""
    named: list[object] = []

    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        named.extend(value for key, value in items if key == FIELD)
        return dict(items)

    try:
        parsed = json.loads(body, object_pairs_hook=pairs) if body else None
    except (ValueError, RecursionError):
        return [], []
    items = parsed if isinstance(parsed, list) else [parsed]
    return [m for m in items if isinstance(m, dict)], named


def _params(message: dict[str, object]) -> dict[str, object]:
    params = message.get("params")
    return params if isinstance(params, dict) else {}


def mcp_scope(messages: list[dict[str, object]]) -> KeyScope:
    """``ingest`` when any message calls a write tool, else ``query``."""
    for message in messages:
        if message.get("method") == "tools/call" and _params(message).get("name") in WRITE_TOOLS:
            return KeyScope.INGEST
    return KeyScope.QUERY


def mcp_tenants(query: tuple[str, ...], messages: list[dict[str, object]],
                in_body: list[object]) -> Named:
    """Every tenant an MCP request names: ``?group_id=``, every ``group_id`` of the body and
    the tenant of every ``resources/read`` URI (a name that is not a string is malformed)."""
    found = list(in_body)
    for message in messages:
        uri = _params(message).get("uri")
        if message.get("method") == "resources/read" and isinstance(uri, str) \
                and uri.startswith(RESOURCE_SCHEME):
            found.append(uri.removeprefix(RESOURCE_SCHEME).split("/", 1)[0])
    names = tuple(query) + tuple(v for v in found if isinstance(v, str))
    return Named(names, any(v is not None and not isinstance(v, str) for v in found))


class McpEndpoint:
    """The ASGI endpoint mounted at ``/mcp`` (one per app; run :meth:`running` in the
    app's lifespan)."""

    def __init__(self, mcp: KnotworkMcp) -> None:
        self.mcp = mcp
        # builds the SDK's session manager; the Starlette app it returns is not used
        mcp.server.streamable_http_app(
            streamable_http_path=PATH, stateless_http=True, json_response=True,
            # Host / Origin checks are for unauthenticated local servers; this one is behind
            # the API's keys and its deployment's ingress
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.mcp.server.session_manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        body = await request.body()
        messages, in_body = _messages(body)
        try:
            key, tenant = await admit(request, PATH, mcp_scope(messages),
                                      mcp_tenants(tuple(request.query_params.getlist(FIELD)),
                                                  messages, in_body))
        except HTTPException as exc:
            from knotwork.services.api.app import problem

            response = problem(exc.status_code, HTTPStatus(exc.status_code).phrase,
                               str(exc.detail))
            response.headers.update(exc.headers or {})
            await response(scope, receive, send)
            return
        app = request.app
        caller = Caller(app.state.knotwork, tenant, key, app.state.write_lock)
        scope.setdefault("state", {})[STATE_KEY] = caller
        replayed = False

        async def replay() -> Message:  # the body was read for the decision: hand it on
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        token = CURRENT_CALLER.set(caller)  # for the static resources (no Context)
        try:
            await self.mcp.server.session_manager.handle_request(scope, replay, send)
        finally:
            CURRENT_CALLER.reset(token)
