"""An MCP (Model Context Protocol) server over stdio exposing Knotwork's search and query.

``knotwork mcp`` speaks JSON-RPC 2.0, one message per line on stdin/stdout (the MCP stdio
transport): ``initialize``, ``ping``, ``tools/list`` and ``tools/call``. Tools:

- ``query``: a cited answer (mode AUTO/LOCAL/GLOBAL/DRIFT, optional ``as_of``);
- ``search``: per-layer hybrid search with a named preset (facts, entities, chunks, communities);
- ``traverse``: k-hop neighbourhood of entities.

A tool failure is a result with ``isError: true`` and one line of text; malformed JSON-RPC
gets the standard error codes. Logs go to stderr, never stdout.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime
from typing import IO, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from knotwork.core import Knotwork
from knotwork.domain.models import QueryMode
from knotwork.domain.timeutil import ensure_utc
from knotwork.retrieval.graph_ops import Direction, EdgeFilter, GraphOps, UnknownEntities
from knotwork.retrieval.search import HybridSearch
from knotwork.retrieval.search_config import SEARCH_PRESETS, preset

PROTOCOL_VERSION = "2025-06-18"
JsonObject = dict[str, Any]


class QueryArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=4000, description="the question")
    mode: QueryMode = QueryMode.AUTO
    as_of: datetime | None = Field(default=None, description="answer as of this time (ISO 8601)")


class SearchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=4000)
    preset: str = Field(default="combined_hybrid_rrf", description="one of: " + ", ".join(SEARCH_PRESETS))
    center_entity_id: str | None = Field(default=None, description="for the node_distance presets")
    limit: int = Field(default=10, ge=1, le=100)


class TraverseArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entity_ids: list[str] = Field(min_length=1, max_length=100)
    max_hops: int = Field(default=2, ge=1, le=4)
    direction: Direction = Direction.BOTH


class ToolError(Exception):
    pass


class McpServer:
    def __init__(self, kw: Knotwork, group_id: str | None = None) -> None:
        self._kw = kw
        self._group = group_id or kw.settings.group
        self._tools: dict[str, tuple[str, type[BaseModel], Callable[[Any], JsonObject]]] = {
            "query": ("Answer a question over the knowledge graph, with citations.", QueryArgs, self._query),
            "search": ("Hybrid search (BM25 + vectors + graph) of facts, entities, chunks, communities.",
                       SearchArgs, self._search),
            "traverse": ("Entities and relationships within k hops of the given entities.",
                         TraverseArgs, self._traverse),
        }

    # ------------------------------------------------------------------ tools
    def _query(self, args: QueryArgs) -> JsonObject:
        result = self._kw.query(args.query, group_id=self._group, mode=args.mode,
                                as_of=ensure_utc(args.as_of) if args.as_of else None)
        return {"answer": result.answer, "confidence": result.confidence,
                "mode_used": result.mode_used.value.upper(), "reasoning_trace": result.reasoning_trace,
                "citations": [c.model_dump(mode="json") for c in result.citations]}

    def _search(self, args: SearchArgs) -> JsonObject:
        config = preset(args.preset)
        layers = {name: getattr(config, name) for name in ("facts", "entities", "chunks", "communities")}
        config = config.model_copy(update={n: c.model_copy(update={"limit": args.limit})
                                           for n, c in layers.items() if c is not None})
        try:
            out = HybridSearch(self._kw.runtime, self._group).search(
                args.query, config, center_entity_id=args.center_entity_id)
        except UnknownEntities as exc:
            raise ToolError(str(exc)) from exc
        return {"facts": [{"id": s.item.id, "fact": s.item.fact, "type": s.item.type.value, "score": s.score}
                          for s in out.facts],
                "entities": [{"id": s.item.id, "name": s.item.name, "type": s.item.type.value,
                              "score": s.score} for s in out.entities],
                "chunks": [{"id": s.item.id, "text": s.item.content[:500], "score": s.score} for s in out.chunks],
                "communities": [{"id": s.item.id, "name": s.item.name, "summary": s.item.summary[:500],
                                 "score": s.score} for s in out.communities]}

    def _traverse(self, args: TraverseArgs) -> JsonObject:
        try:
            walk = GraphOps(self._kw.runtime.graph, self._group).traverse(
                args.entity_ids, max_hops=args.max_hops, flt=EdgeFilter(direction=args.direction))
        except UnknownEntities as exc:
            raise ToolError(str(exc)) from exc
        return {"entities": [{"id": e.id, "name": e.name, "type": e.type.value} for e in walk.entities],
                "relationships": [{"id": f.id, "source_id": f.source_id, "target_id": f.target_id,
                                   "type": f.type.value, "fact": f.fact} for f in walk.relationships]}

    # ------------------------------------------------------------------ JSON-RPC
    def tools(self) -> list[JsonObject]:
        return [{"name": name, "description": desc, "inputSchema": model.model_json_schema()}
                for name, (desc, model, _) in self._tools.items()]

    def call(self, name: str, arguments: JsonObject) -> JsonObject:
        if name not in self._tools:
            raise ToolError(f"unknown tool {name!r}")
        _, model, run = self._tools[name]
        try:
            args = model.model_validate(arguments)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ToolError(f"{where}: {first['msg']}") from exc
        try:
            return run(args)
        except ValueError as exc:
            raise ToolError(str(exc).splitlines()[0]) from exc

    def handle(self, message: JsonObject) -> JsonObject | None:
        """One JSON-RPC message in, its response out (None for notifications)."""
        msg_id = message.get("id")
        method = message.get("method")
        if not isinstance(method, str):
            return _error(msg_id, -32600, "invalid request: no method")
        if msg_id is None:  # a notification (e.g. notifications/initialized)
            return None
        params = message.get("params") or {}
        if method == "initialize":
            return _ok(msg_id, {"protocolVersion": params.get("protocolVersion", PROTOCOL_VERSION),
                                "capabilities": {"tools": {"listChanged": False}},
                                "serverInfo": {"name": "knotwork", "version": "0.1.0"}})
        if method == "ping":
            return _ok(msg_id, {})
        if method == "tools/list":
            return _ok(msg_id, {"tools": self.tools()})
        if method == "tools/call":
            try:
                data = self.call(str(params.get("name", "")), params.get("arguments") or {})
            except ToolError as exc:
                return _ok(msg_id, {"content": [{"type": "text", "text": str(exc)}], "isError": True})
            return _ok(msg_id, {"content": [{"type": "text", "text": json.dumps(data, default=str)}],
                                "structuredContent": data, "isError": False})
        return _error(msg_id, -32601, f"method not found: {method}")

    def serve(self, stdin: IO[str] = sys.stdin, stdout: IO[str] = sys.stdout) -> None:
        for line in stdin:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                response: JsonObject | None = _error(None, -32700, "parse error")
            else:
                response = self.handle(message) if isinstance(message, dict) else \
                    _error(None, -32600, "invalid request")
            if response is not None:
                stdout.write(json.dumps(response) + "\n")
                stdout.flush()


def _ok(msg_id: object, result: JsonObject) -> JsonObject:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def _error(msg_id: object, code: int, message: str) -> JsonObject:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
