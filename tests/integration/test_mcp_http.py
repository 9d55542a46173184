"""MCP over Streamable HTTP at ``/mcp`` in the API (a real uvicorn server), driven by the
official SDK's client: the API's keys, scopes and tenant decision apply (401 without a key,
403 for a write tool without the ingest scope, 403 for a bound key naming another tenant)."""

from __future__ import annotations

import json
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from knotwork.core import Knotwork
from knotwork.domain.auth import Scope
from knotwork.services.api.app import create_app
from knotwork.settings import EmbedderBackend, Settings

pytestmark = [pytest.mark.integration]

ALPHA_TEXT = "Aino Arnesen leads Project Larkspur. Aino Arnesen works in Lisbon."
BETA_TEXT = "Bram Bakkerud leads Project Quillfeather. Bram Bakkerud works in Trondheim."


@dataclass
class Served:
    url: str
    kw: Knotwork
    alpha: str
    beta: str
    keys: dict[str, str]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> Iterator[Served]:
    tmp: Path = tmp_path_factory.mktemp("mcp_http")
    settings = Settings(data_dir=tmp / "data", group=f"dflt_{secrets.token_hex(3)}",  # type: ignore[call-arg]
                        falkordb_url=falkordb_url, embedder=EmbedderBackend.HASHING)
    app = create_app(settings)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 120
        while not server.started and time.monotonic() < deadline and thread.is_alive():
            time.sleep(0.1)
        assert server.started, "uvicorn did not start"
        kw: Knotwork = app.state.knotwork
        alpha, beta = f"alpha_{secrets.token_hex(3)}", f"beta_{secrets.token_hex(3)}"
        when = datetime(2026, 3, 1, tzinfo=UTC)
        kw.add_episode(ALPHA_TEXT, group_id=alpha, reference_time=when)
        kw.add_episode(BETA_TEXT, group_id=beta, reference_time=when)
        store = kw.runtime.documents.api_keys()
        keys = {"query": store.create("a-query", [Scope.QUERY], tenant=alpha).secret,
                "ingest": store.create("a-ingest", [Scope.QUERY, Scope.INGEST], tenant=alpha).secret,
                "any": store.create("any-query", [Scope.QUERY]).secret}
        app.state.auth.forget()
        yield Served(f"http://127.0.0.1:{port}/mcp", kw, alpha, beta, keys)
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def _rpc(url: str, secret: str | None, method: str, params: dict[str, Any],
         query: str = "") -> httpx.Response:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "MCP-Protocol-Version": "2025-06-18"}
    if secret:
        headers["Authorization"] = f"Bearer {secret}"
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx.post(url + query, headers=headers, content=json.dumps(body), timeout=60)


def _call(url: str, secret: str | None, tool: str, arguments: dict[str, Any],
          query: str = "") -> httpx.Response:
    return _rpc(url, secret, "tools/call", {"name": tool, "arguments": arguments}, query)


async def _with_client(url: str, secret: str, calls: Any) -> Any:
    with anyio.fail_after(120):
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"},
                                      timeout=60) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            return await calls(client)


def test_sdk_client_reads_its_own_tenant(served: Served) -> None:
    async def calls(client: Client) -> tuple[set[str], dict[str, Any], str, str]:
        tools = {t.name for t in (await client.list_tools()).tools}
        answer = await client.call_tool("query", {"query": "Who leads Project Larkspur?"})
        listing = await client.read_resource(f"knotwork://tenants/{served.alpha}/documents")
        mine = await client.read_resource("knotwork://documents")  # the key's tenant
        return tools, answer.structured_content, listing.contents[0].text, mine.contents[0].text

    tools, answer, listing, mine = anyio.run(_with_client, served.url, served.keys["query"], calls)
    assert {"query", "search", "entity", "add_episode", "delete_document"} <= tools
    assert "Aino Arnesen" in answer["answer"] and "Bakkerud" not in json.dumps(answer)
    assert json.loads(listing)["total"] == 1 and json.loads(mine) == json.loads(listing)
    assert "Bakkerud" not in mine


def test_write_tools_need_the_ingest_scope(served: Served) -> None:
    episode = {"content": "Ondrej Vasko joined the Harbor Team."}
    refused = _call(served.url, served.keys["query"], "add_episode", episode)
    assert refused.status_code == 403 and "ingest" in refused.json()["detail"]
    assert refused.headers["content-type"].startswith("application/problem+json")
    before = served.kw.runtime.documents.counts(served.alpha)

    async def calls(client: Client) -> dict[str, Any]:
        result = await client.call_tool("add_episode", episode)
        assert result.is_error is False, result.content
        data: dict[str, Any] = result.structured_content
        return data

    added = anyio.run(_with_client, served.url, served.keys["ingest"], calls)
    assert added["episode_ids"]
    assert served.kw.runtime.documents.counts(served.alpha) != before


def test_no_key_is_401(served: Served) -> None:
    response = _call(served.url, None, "query", {"query": "Who leads Project Larkspur?"})
    assert response.status_code == 401 and "API key" in response.json()["detail"]
    assert _call(served.url, "kw_not-a-key", "query", {"query": "x"}).status_code == 401


def test_an_unbound_key_names_its_tenant(served: Served) -> None:
    async def calls(client: Client) -> dict[str, Any]:
        result = await client.call_tool("query", {"query": "Who leads Project Quillfeather?",
                                                  "group_id": served.beta})
        data: dict[str, Any] = result.structured_content
        return data

    answer = anyio.run(_with_client, served.url, served.keys["any"], calls)
    assert "Bram Bakkerud" in answer["answer"]
