"""``knotwork mcp`` over stdio, driven by the official SDK's client (a real subprocess), on a
store written through the ports (session FalkorDB, qdrant-edge, SQLite, hashing embedder)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from knotwork.runtime import open_runtime
from tests.conftest import SettingsFactory
from tests.integration.test_search import IDS, _populate

pytestmark = [pytest.mark.integration, pytest.mark.models]


def _structured(result: Any) -> dict[str, Any]:
    assert result.is_error is False, result.content
    data: dict[str, Any] = result.structured_content
    return data


def _error(result: Any) -> str:
    assert result.is_error is True
    text: str = result.content[0].text
    return text


async def _session(params: StdioServerParameters, group: str) -> None:
    with anyio.fail_after(300):
        await _calls(params, group)


async def _calls(params: StdioServerParameters, group: str) -> None:
    async with Client(params) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {"query", "search", "entity", "traverse", "add_episode",
                              "add_document", "delete_document"}
        assert all(t.input_schema["type"] == "object" and t.output_schema for t in tools.values())
        assert tools["query"].annotations.read_only_hint is True

        answer = _structured(await client.call_tool(
            "query", {"query": "Who leads Project Atlas?", "mode": "local"}))
        assert "Priya Raman" in answer["answer"] and answer["mode_used"] == "LOCAL"
        search = _structured(await client.call_tool(
            "search", {"query": "Who leads Project Atlas?", "limit": 3}))
        assert search["facts"][0]["fact"] == "Priya Raman leads Project Atlas."
        assert len(search["facts"]) <= 3
        walk = _structured(await client.call_tool(
            "traverse", {"entity_ids": [IDS["priya"]], "max_hops": 1}))
        assert {"Priya Raman", "Project Atlas", "Marcus Webb"} <= {e["name"] for e in walk["entities"]}
        found = _structured(await client.call_tool("entity", {"name": "Priya Raman"}))
        assert found["entity"]["id"] == IDS["priya"]
        assert any(r["fact"] == "Priya Raman leads Project Atlas." for r in found["relationships"])
        by_id = _structured(await client.call_tool("entity", {"entity_id": IDS["atlas"]}))
        assert by_id["entity"]["name"] == "Project Atlas" and by_id["confidence"] == 1.0

        # bad input and unknown ids: an error result with one line, the session goes on
        assert "query" in _error(await client.call_tool("search", {}))
        assert "nobody" in _error(await client.call_tool("traverse", {"entity_ids": ["nobody"]}))
        assert "exactly one" in _error(await client.call_tool("entity", {}))
        assert "group_id" in _error(await client.call_tool(
            "query", {"query": "x", "group_id": "not a tenant!"}))

        # writes: an episode, a document (resource listing), its deletion
        added = _structured(await client.call_tool(
            "add_episode", {"content": "Ondrej Vasko leads the Pricing Engine project.",
                            "reference_time": "2026-03-01T00:00:00Z"}))
        assert added["episode_ids"] and added["unchanged"] is False
        doc = _structured(await client.call_tool(
            "add_document", {"name": "notes/harbor.md", "format": "markdown",
                             "content": "# Harbor\n\nMarta Vasko leads the Harbor Team."}))
        assert doc["outcome"] == "added" and doc["document"]["status"].lower() == "completed"
        listing = await client.read_resource(f"knotwork://tenants/{group}/documents")
        assert "notes/harbor.md" in listing.contents[0].text
        gone = _structured(await client.call_tool(
            "delete_document", {"document_id": doc["document"]["id"]}))
        assert gone["documents"] == 1
        listing = await client.read_resource(f"knotwork://tenants/{group}/documents")
        assert "notes/harbor.md" not in listing.contents[0].text
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        assert listed == {"knotwork://documents", "knotwork://reports/latest"}
        mine = await client.read_resource("knotwork://documents")  # the process's --group
        assert mine.contents[0].text == listing.contents[0].text
        templates = (await client.list_resource_templates()).resource_templates
        assert {t.uri_template for t in templates} == {"knotwork://tenants/{group_id}/documents",
                                                       "knotwork://tenants/{group_id}/reports/latest"}


def test_mcp_stdio_with_the_sdk_client(make_settings: SettingsFactory) -> None:
    settings = make_settings(embedder="hashing")
    rt = open_runtime(settings)
    try:
        _populate(rt, settings.group)
    finally:
        rt.close()
    knotwork = str(Path(sys.executable).parent / "knotwork")  # the entry point
    env = {**os.environ, "KNOTWORK_EMBEDDER": "hashing", "HF_HUB_OFFLINE": "1",
           "KNOTWORK_FALKORDB_URL": str(settings.falkordb_url)}
    params = StdioServerParameters(
        command=knotwork, args=["--data-dir", str(settings.data_dir), "--group", settings.group,
                                "mcp"], env=env)
    anyio.run(_session, params, settings.group)
