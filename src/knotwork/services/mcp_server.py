"""Knotwork's MCP (Model Context Protocol) server, built on the official SDK (``mcp``).

One server definition, two transports: stdio (``knotwork mcp``: a local, trusted process on
its ``--group``) and Streamable HTTP mounted in the API at ``/mcp``
(:mod:`knotwork.services.api.mcp_http`: the API's keys, scopes and tenant decision).

Tools — read: ``query`` (a cited answer), ``search`` (hybrid search with a named preset),
``entity`` (look an entity up by id or name), ``traverse`` (k-hop neighbourhood); write (the
ingest scope over HTTP): ``add_episode``, ``add_document``, ``delete_document``. Resources:
``knotwork://documents`` and ``knotwork://reports/latest`` (the caller's tenant), and the
templates ``knotwork://tenants/{group_id}/documents`` and ``knotwork://tenants/{group_id}/reports/latest``.

Every tool takes an optional ``group_id``; over HTTP the tenant was decided before the SDK saw
the request (a key bound to another tenant is refused with 403), over stdio it defaults to the
process's group. A tool failure is a result with ``isError: true`` and one line of text.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal, TypeVar

from fastapi import HTTPException
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from knotwork.core import Knotwork
from knotwork.domain.auth import ApiKey, Scope
from knotwork.domain.errors import UnknownReference
from knotwork.domain.models import QueryMode
from knotwork.domain.timeutil import ensure_utc
from knotwork.ingestion.loaders.upload import UploadFormat, uploaded_document
from knotwork.resolution.merge import NotFoundError
from knotwork.resolution.workflow import EntityWorkflow
from knotwork.retrieval.graph_ops import Direction, EdgeFilter, GraphOps, UnknownEntities
from knotwork.retrieval.options import QueryOptions
from knotwork.retrieval.search import HybridSearch
from knotwork.retrieval.search_config import SEARCH_PRESETS
from knotwork.retrieval.search_config import preset as search_preset
from knotwork.services.api.tenancy import GROUP_PATTERN, Named, decide
from knotwork.services.mcp_models import (
    DocumentAdded,
    DocumentDeleted,
    DocumentList,
    DocumentView,
    EntityFound,
    EntityRef,
    EpisodeAdded,
    QueryAnswer,
    RelationshipRef,
    SearchResults,
    Traversal,
)

T = TypeVar("T")
# the HTTP caller, set by the /mcp endpoint around the SDK's handling (the SDK's tasks copy
# it): static resources take no Context
CURRENT_CALLER: ContextVar[Caller | None] = ContextVar("knotwork_mcp_caller", default=None)
WRITE_TOOLS = frozenset({"add_episode", "add_document", "delete_document"})
STATE_KEY = "knotwork_mcp"  # where the HTTP endpoint leaves the request's Caller
GroupArg = Annotated[str | None, Field(default=None, pattern=GROUP_PATTERN, description=(
    "the tenant; a key bound to a tenant may only name its own"))]


@dataclass(frozen=True)
class Caller:
    """Who calls and for which tenant: ``key`` None is a trusted caller (stdio, auth off)."""

    kw: Knotwork
    tenant: str
    key: ApiKey | None
    write_lock: threading.Lock

    def reader(self) -> Knotwork:
        """The tenant's view; a key that is not admin reads through its source ACLs."""
        if self.key is not None and not self.key.allows(Scope.ADMIN):
            return self.kw.for_reader(self.tenant, self.key.principals)
        return self.kw.for_tenant(self.tenant)

    def writer(self) -> Knotwork:
        if self.key is not None and not self.key.allows(Scope.INGEST):
            raise ToolError(f"this key lacks the {Scope.INGEST.value!r} scope")
        return self.kw.for_tenant(self.tenant)


class KnotworkMcp:
    """The SDK server with Knotwork's tools; ``kw`` serves stdio calls (HTTP calls carry
    their own :class:`Caller`)."""

    def __init__(self, kw: Knotwork | None, group_id: str | None = None) -> None:
        self._kw = kw
        self._group = group_id or (kw.settings.group if kw is not None else "default")
        self._lock = threading.Lock()
        self.server: MCPServer = MCPServer(
            "knotwork", version="0.1.0", log_level="WARNING",
            instructions="A bi-temporal knowledge graph with cited answers: `query` answers a "
                         "question with citations, `search` and `entity` look things up.")
        self._register()

    def caller(self, ctx: Context | None, group_id: str | None) -> Caller:
        request = ctx.request_context.request if ctx is not None else None
        bound = CURRENT_CALLER.get()
        if ctx is None and bound is not None:
            return bound
        if request is not None:
            decided = getattr(request.state, STATE_KEY, None)
            if not isinstance(decided, Caller):
                raise ToolError("the request was not authorized")
            if group_id is not None and group_id != decided.tenant:  # pragma: no cover
                raise ToolError(f"this request is for tenant {decided.tenant!r}")
            return decided
        if self._kw is None:
            raise ToolError("the request was not authorized")
        try:  # stdio: the process's own tenant, or the one the call names
            tenant = decide(None, Named((group_id,) if group_id else ()), self._group)
        except HTTPException as exc:
            raise ToolError(str(exc.detail)) from exc
        return Caller(self._kw, tenant, None, self._lock)

    # ------------------------------------------------------------------ tools
    def _register(self) -> None:
        mcp = self.server
        read_only = ToolAnnotations(read_only_hint=True)

        @mcp.tool(description="Answer a question over the knowledge graph, with citations.",
                  annotations=read_only)
        def query(ctx: Context,
                  query: Annotated[str, Field(min_length=1, max_length=4000,
                                              description="the question")],
                  mode: QueryMode = QueryMode.AUTO,
                  as_of: Annotated[datetime | None, Field(
                      description="answer as of this time (ISO 8601)")] = None,
                  group_id: GroupArg = None) -> QueryAnswer:
            kw = self.caller(ctx, group_id).reader()
            options = QueryOptions(mode=mode, as_of=ensure_utc(as_of) if as_of else None)
            result = _guard(lambda: kw.query(query, options=options))
            return QueryAnswer.of(result)

        @mcp.tool(description="Hybrid search (BM25 + vectors + graph) of facts, entities, "
                              "chunks and communities.", annotations=read_only)
        def search(ctx: Context,
                   query: Annotated[str, Field(min_length=1, max_length=4000)],
                   preset: Annotated[str, Field(
                       description="one of: " + ", ".join(SEARCH_PRESETS))]
                   = "combined_hybrid_rrf",
                   center_entity_id: str | None = None,
                   limit: Annotated[int, Field(ge=1, le=100)] = 10,
                   group_id: GroupArg = None) -> SearchResults:
            caller = self.caller(ctx, group_id)
            kw = caller.reader()
            config = _guard(lambda: search_preset(preset))
            layers = {n: getattr(config, n) for n in ("facts", "entities", "chunks", "communities")}
            config = config.model_copy(update={n: c.model_copy(update={"limit": limit})
                                               for n, c in layers.items() if c is not None})
            out = _guard(lambda: HybridSearch(kw.runtime, caller.tenant).search(
                query, config, center_entity_id=center_entity_id))
            return SearchResults.of(out)

        @mcp.tool(description="Look an entity up by id, or by name (resolved like a mention): "
                              "its type, aliases, summary and current relationships.",
                  annotations=read_only)
        def entity(ctx: Context,
                   entity_id: Annotated[str | None, Field(max_length=200)] = None,
                   name: Annotated[str | None, Field(min_length=1, max_length=300)] = None,
                   group_id: GroupArg = None) -> EntityFound:
            if (entity_id is None) == (name is None):
                raise ToolError("give exactly one of entity_id and name")
            caller = self.caller(ctx, group_id)
            kw = caller.reader()
            confidence = 1.0
            if name is not None:
                resolved = _guard(lambda: kw.resolve_entity(name))
                if resolved.entity_id is None:
                    raise ToolError(f"no entity matches {name!r}")
                entity_id, confidence = resolved.entity_id, resolved.confidence
            assert entity_id is not None
            wanted = entity_id
            view = _guard(lambda: EntityWorkflow(kw.runtime, caller.tenant).view(wanted))
            return EntityFound(
                entity=EntityRef.of(view.entity), summary=view.entity.summary,
                aliases=list(view.entity.aliases), confidence=confidence,
                relationships=[RelationshipRef.of(f) for f in view.relationships[:50]],
                mentions_count=view.mentions_count)

        @mcp.tool(description="Entities and relationships within k hops of the given entities.",
                  annotations=read_only)
        def traverse(ctx: Context,
                     entity_ids: Annotated[list[str], Field(min_length=1, max_length=100)],
                     max_hops: Annotated[int, Field(ge=1, le=4)] = 2,
                     direction: Direction = Direction.BOTH,
                     group_id: GroupArg = None) -> Traversal:
            caller = self.caller(ctx, group_id)
            kw = caller.reader()
            walk = _guard(lambda: GraphOps(kw.runtime.graph, caller.tenant).traverse(
                entity_ids, max_hops=max_hops, flt=EdgeFilter(direction=direction)))
            return Traversal(entities=[EntityRef.of(e) for e in walk.entities],
                             relationships=[RelationshipRef.of(f) for f in walk.relationships])

        @mcp.tool(description="Add one episode (a message or a text) to the graph now.")
        def add_episode(ctx: Context,
                        content: Annotated[str, Field(min_length=1, max_length=100_000)],
                        reference_time: datetime | None = None,
                        name: Annotated[str | None, Field(max_length=300)] = None,
                        group_id: GroupArg = None) -> EpisodeAdded:
            caller = self.caller(ctx, group_id)
            kw = caller.writer()
            with caller.write_lock:
                result = _guard(lambda: kw.add_episode(content, reference_time=reference_time,
                                                       name=name))
            return EpisodeAdded(**result.model_dump())

        @mcp.tool(description="Ingest one document (text, markdown or html) now; the same "
                              "name again replaces the earlier version.")
        def add_document(ctx: Context,
                         name: Annotated[str, Field(min_length=1, max_length=300,
                                                    pattern=r"^[\w.\-][\w.\-/ ]*$")],
                         content: Annotated[str, Field(min_length=1, max_length=5_000_000)],
                         format: UploadFormat = UploadFormat.TEXT,
                         title: Annotated[str | None, Field(max_length=500)] = None,
                         group_id: GroupArg = None) -> DocumentAdded:
            if ".." in name.split("/"):
                raise ToolError("the name may not contain a '..' segment")
            caller = self.caller(ctx, group_id)
            kw = caller.writer()
            if len(content) > kw.settings.max_document_chars:
                raise ToolError(f"the document has {len(content)} characters; the limit is "
                                f"{kw.settings.max_document_chars}")
            raw = _guard(lambda: uploaded_document(name, content, format, title=title))
            with caller.write_lock:
                report = _guard(lambda: kw.ingest_documents([raw]))
            stored = next(d for d in kw.list_documents()
                          if d.source_id == raw.source_id and d.source_system == raw.source_system)
            outcome: Literal["added", "updated", "unchanged"] = (
                "added" if report.added else "updated" if report.updated else "unchanged")
            return DocumentAdded(document=DocumentView.of(stored), outcome=outcome,
                                 entities=report.entities, facts=report.facts)

        @mcp.tool(description="Delete a document and everything only it evidenced.",
                  annotations=ToolAnnotations(destructive_hint=True))
        def delete_document(ctx: Context,
                            document_id: Annotated[str, Field(min_length=1, max_length=200)],
                            group_id: GroupArg = None) -> DocumentDeleted:
            caller = self.caller(ctx, group_id)
            kw = caller.writer()
            with caller.write_lock:
                retired = _guard(lambda: kw.delete_document(document_id))
            return DocumentDeleted(deleted=document_id, documents=retired.documents,
                                   episodes=retired.episodes, facts=retired.facts,
                                   entities=retired.entities)

        # -------------------------------------------------------------- resources
        @mcp.resource("knotwork://tenants/{group_id}/documents", mime_type="application/json",
                      description="The tenant's documents with their processing status.")
        def documents(group_id: str, ctx: Context | None) -> DocumentList:
            kw = self.caller(ctx, _resource_group(group_id)).reader()
            docs = _guard(kw.list_documents, ResourceError)
            return DocumentList(items=[DocumentView.of(d) for d in docs], total=len(docs))

        @mcp.resource("knotwork://tenants/{group_id}/reports/latest", mime_type="text/markdown",
                      description="The latest analyst report (communities, what changed).")
        def latest_report(group_id: str, ctx: Context | None) -> str:
            from knotwork.communities.render import render_markdown

            kw = self.caller(ctx, _resource_group(group_id)).reader()
            report = _guard(kw.latest_report, ResourceError)
            if report is None:
                raise ResourceError("no report yet: build communities, then run `knotwork report`")
            return render_markdown(report)


        @mcp.resource("knotwork://documents", mime_type="application/json",
                      description="The documents of the caller's tenant with their status.")
        def my_documents() -> DocumentList:
            return documents(self.caller(None, None).tenant, None)

        @mcp.resource("knotwork://reports/latest", mime_type="text/markdown",
                      description="The latest analyst report of the caller's tenant.")
        def my_latest_report() -> str:
            return latest_report(self.caller(None, None).tenant, None)


def _resource_group(group_id: str) -> str:
    try:
        return decide(None, Named((group_id,)), group_id)
    except HTTPException as exc:
        raise ResourceError(str(exc.detail)) from exc


def _guard(run: Callable[[], T], error: type[Exception] = ToolError) -> T:
    """Known failures (bad input, unknown ids) as one line for the caller."""
    try:
        return run()
    except (UnknownEntities, UnknownReference, NotFoundError, ValueError) as exc:
        raise error(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from exc
