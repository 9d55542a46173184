"""``knotwork mcp``: JSON-RPC over the stdio of a real subprocess, on a store written through
the ports (session FalkorDB, qdrant-edge, SQLite, hashing embedder)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from knotwork.runtime import open_runtime
from tests.conftest import SettingsFactory
from tests.integration.test_search import IDS, _populate

pytestmark = [pytest.mark.integration, pytest.mark.models]


def test_mcp_stdio_tools(make_settings: SettingsFactory) -> None:
    settings = make_settings(embedder="hashing")
    rt = open_runtime(settings)
    try:
        _populate(rt, settings.group)
    finally:
        rt.close()
    messages: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "query", "arguments": {"query": "Who leads Project Atlas?", "mode": "local"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "search", "arguments": {"query": "Who leads Project Atlas?", "limit": 3}}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
         "params": {"name": "traverse", "arguments": {"entity_ids": [IDS["priya"]], "max_hops": 1}}},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "search", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
         "params": {"name": "traverse", "arguments": {"entity_ids": ["nobody"]}}},
        {"jsonrpc": "2.0", "id": 8, "method": "nope"},
    ]
    stdin = "\n".join(json.dumps(m) for m in messages) + "\nnot json\n"
    env = {**os.environ, "KNOTWORK_EMBEDDER": "hashing", "KNOTWORK_FALKORDB_URL": str(settings.falkordb_url),
           "HF_HUB_OFFLINE": "1"}
    knotwork = str(Path(sys.executable).parent / "knotwork")  # the entry point (not -m: one cli module)
    proc = subprocess.run([knotwork, "--data-dir", str(settings.data_dir),
                           "--group", settings.group, "mcp"], input=stdin, capture_output=True, text=True,
                          env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    replies = [json.loads(line) for line in proc.stdout.splitlines()]  # stdout: JSON-RPC only
    by_id = {r["id"]: r for r in replies}
    assert by_id[1]["result"]["serverInfo"]["name"] == "knotwork"
    assert {t["name"] for t in by_id[2]["result"]["tools"]} == {"query", "search", "traverse"}
    assert all(t["inputSchema"]["type"] == "object" for t in by_id[2]["result"]["tools"])
    answer = by_id[3]["result"]["structuredContent"]
    assert "Priya Raman" in answer["answer"] and by_id[3]["result"]["isError"] is False
    search = by_id[4]["result"]["structuredContent"]
    assert search["facts"][0]["fact"] == "Priya Raman leads Project Atlas." and len(search["facts"]) <= 3
    names = {e["name"] for e in by_id[5]["result"]["structuredContent"]["entities"]}
    assert {"Priya Raman", "Project Atlas", "Marcus Webb"} <= names
    assert by_id[6]["result"]["isError"] is True and "query" in by_id[6]["result"]["content"][0]["text"]
    assert by_id[7]["result"]["isError"] is True and "nobody" in by_id[7]["result"]["content"][0]["text"]
    assert by_id[8]["error"]["code"] == -32601
    assert replies[-1]["error"]["code"] == -32700 and len(replies) == 9  # no reply to the notification
