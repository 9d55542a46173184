"""The Python API: ``Knotwork`` (sync). Every CLI command and REST route goes through it."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Self, Unpack

from pydantic import BaseModel, ConfigDict

from knotwork.communities.builder import StepProgress
from knotwork.communities.report import Report
from knotwork.communities.service import BuildReport, CommunityService
from knotwork.domain.errors import UnknownReference
from knotwork.domain.ids import content_hash
from knotwork.domain.models import (
    Document,
    EntityType,
    EpisodeSource,
    QueryResult,
    RawDocument,
    SourceSystem,
    WorkspaceMember,
)
from knotwork.domain.timeutil import ensure_utc, to_iso, utcnow
from knotwork.ingestion.lineage import Retired
from knotwork.ingestion.pipeline import IngestionPipeline, IngestReport, Progress
from knotwork.ingestion.sync import SyncReport, SyncSource, run_sync
from knotwork.resolution.lookup import ResolveResult, resolve_mention
from knotwork.retrieval.answer_writer import AnswerStream
from knotwork.retrieval.config import LocalSearchConfig
from knotwork.retrieval.engine import QueryEngine
from knotwork.retrieval.options import QueryFields, QueryOptions, query_options
from knotwork.retrieval.warm_up import WarmUpReport, warm_up
from knotwork.runtime import Runtime, open_runtime
from knotwork.settings import Settings


class ExportedEntity(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    name: str
    type: str
    subtype: str | None
    aliases: list[str]
    summary: str


class ExportedFact(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    source: str
    target: str
    source_name: str
    target_name: str
    type: str
    fact: str
    valid_at: str | None
    invalid_at: str | None
    episodes: list[str]


class GraphExport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entities: list[ExportedEntity]
    facts: list[ExportedFact]


class EpisodeResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    episode_ids: list[str]
    entities: int
    facts: int
    unchanged: bool


class Knotwork:
    """Open with ``Knotwork(Settings(...))``; close with ``close()`` or a ``with`` block."""

    def __init__(self, settings: Settings | None = None, *, runtime: Runtime | None = None) -> None:
        self.settings = settings or (runtime.settings if runtime else Settings())
        _quiet_unconfigured_logs(self.settings)
        self._rt = runtime or open_runtime(self.settings)
        self._pipelines: dict[str, IngestionPipeline] = {}
        self._build_lock = threading.Lock()

    @property
    def runtime(self) -> Runtime:
        return self._rt

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._rt.close()

    def _group(self, group_id: str | None) -> str:
        return group_id or self.settings.group

    def for_tenant(self, group_id: str) -> Knotwork:
        """A view whose default tenant is ``group_id``, sharing this instance's stores."""
        if group_id == self.settings.group:
            return self
        view = copy.copy(self)
        view.settings = self.settings.model_copy(update={"group": group_id})
        view._pipelines = {}
        return view

    def for_reader(self, group_id: str, principals: Sequence[str]) -> Knotwork:
        """A read view for a caller with ``principals``: in tenant ``group_id`` every read
        (queries, entities, graph, communities) skips documents whose source ACL they do not
        meet, with what only those documents evidence. Unrestricted tenants cost nothing."""
        from knotwork.retrieval.acl import restricted_runtime

        view = self.for_tenant(group_id)
        restricted = restricted_runtime(self._rt, group_id, principals)
        if restricted is None:
            return view
        view = copy.copy(view)
        view._rt = restricted
        view._pipelines = {}
        return view

    def _pipeline(self, group_id: str | None) -> IngestionPipeline:
        """One pipeline per tenant, so its cache of known names stays warm."""
        group = self._group(group_id)
        if group not in self._pipelines:
            self._pipelines[group] = IngestionPipeline(self._rt, group)
        return self._pipelines[group]

    # ------------------------------------------------------------------ ingestion
    def add_episode(self, content: str, group_id: str | None = None,
                    reference_time: datetime | None = None,
                    source: EpisodeSource | str = EpisodeSource.MESSAGE, name: str | None = None,
                    source_description: str = "") -> EpisodeResult:
        source = EpisodeSource(source)
        if not content or not content.strip():
            raise ValueError("episode content is empty")
        text = _json_to_text(content) if source is EpisodeSource.JSON else content
        when = ensure_utc(reference_time) if reference_time else utcnow()
        source_id = f"{to_iso(when)}/{content_hash(text)[:16]}"
        title = name or (text.strip().splitlines()[0][:80])
        raw = RawDocument(source_system=SourceSystem.EPISODE, source_id=source_id, title=title,
                          content=text, created_at=when, modified_at=when,
                          episode_source=source,
                          metadata={"source_description": source_description} if source_description else {})
        report = self._pipeline(group_id).add_episode(raw)
        return EpisodeResult(episode_ids=report.episode_ids, entities=report.entities,
                             facts=report.facts, unchanged=report.documents_unchanged > 0)

    def ingest_documents(self, documents: Iterable[RawDocument], group_id: str | None = None,
                         progress: Progress | None = None,
                         members: Sequence[WorkspaceMember] = ()) -> IngestReport:
        """``members``: the people of the workspace the documents come from (a Slack export's
        users.json); the graph's persons among them get WORKS_AT the tenant's organisation."""
        report = self._pipeline(group_id).ingest(documents, progress)
        if self.settings.consolidate_after_ingest and (report.added or report.updated):
            from knotwork.resolution.consolidate import consolidate

            merged = consolidate(self._rt, self._group(group_id))
            report.entities_merged = merged.merged_entities
            if merged.merged_entities or merged.retyped or merged.retired:
                self._pipeline(group_id).forget_known()
        if report.added or report.updated:
            from knotwork.ingestion.team_lines import derive_team_lines

            derive_team_lines(self._rt, self._group(group_id), utcnow())  # on the settled graph
        if members:
            from knotwork.ingestion.employment import derive_employment

            derive_employment(self._rt, self._group(group_id), members, utcnow())
        return report

    def ingest_path(self, path: Path, group_id: str | None = None,
                    progress: Progress | None = None) -> IngestReport:
        from knotwork.ingestion.loaders.detect import load_path
        from knotwork.ingestion.loaders.slack_members import load_members

        loaded = load_path(path, max_chars=self.settings.max_document_chars)
        return self.ingest_documents(loaded.documents, group_id, progress,
                                     members=load_members(path))

    # ------------------------------------------------------------------ documents
    def list_documents(self, group_id: str | None = None) -> list[Document]:
        """The tenant's documents with their processing status (a reader's view skips those
        its source ACL hides)."""
        return self._rt.documents.list_documents(self._group(group_id))

    def get_document(self, document_id: str, group_id: str | None = None) -> Document | None:
        found = self._rt.documents.get_documents([document_id])
        group = self._group(group_id)
        return next((d for d in found if d.group_id == group), None)

    def delete_document(self, document_id: str, group_id: str | None = None) -> Retired:
        """Delete a document with everything only it evidenced (chunks, mentions, facts,
        entities, vectors, summaries; communities refreshed). ``UnknownReference`` if absent."""
        document = self.get_document(document_id, group_id)
        if document is None:
            raise UnknownReference(f"no document {document_id!r} in group {self._group(group_id)!r}")
        return self._pipeline(group_id).delete_documents([document])

    def sync(self, source: SyncSource, group_id: str | None = None,
             progress: Progress | None = None) -> SyncReport:
        """Incremental sync of a live source (``connectors``): only what changed costs work;
        pages deleted at the source are removed with what only they evidenced."""
        group = self._group(group_id)
        return run_sync(self._pipeline(group), self._rt.documents, group, source, progress,
                        max_chars=self.settings.max_document_chars)

    def warm_up(self, budget_s: float | None = None) -> WarmUpReport:
        """Load what the first query would otherwise load inside a request: the embedding
        model and the NER pipeline (the question's names); then local searches about the
        default tenant's entities for up to ``budget_s`` (default ``settings.warm_up_s``; 0:
        none), so the stores' first-touch costs are paid before the first user query. No
        store is written; a failure only ends the warm-up."""
        self._rt.embedder.embed(["warm up"])
        self._rt.extractor.names_in("Who leads Project Atlas?")
        budget = self.settings.warm_up_s if budget_s is None else budget_s
        return warm_up(self._rt, self.settings.group, budget)

    # ------------------------------------------------------------------ query
    def query(self, question: str, group_id: str | None = None,
              options: QueryOptions | None = None, **fields: Unpack[QueryFields]) -> QueryResult:
        """Answer ``question`` as ``options`` (and keyword fields on top of them) say; AUTO
        routes by the question and ``mode_used`` says where. See :class:`QueryOptions`.

        ``principals``: who asks (``user:…``, ``group:…``); the answer then draws only on
        documents whose source ACL they meet. None: no ACL filtering (a trusted caller).
        GLOBAL / DRIFT build the tenant's communities on demand when it has none. With an
        LLM configured (and ``llm_answers``) the LLM writes the answer.
        """
        return self.query_stream(question, group_id, options, **fields).collect()

    def query_stream(self, question: str, group_id: str | None = None,
                     options: QueryOptions | None = None,
                     **fields: Unpack[QueryFields]) -> AnswerStream:
        """:meth:`query`, with the answer streamed: retrieval runs now; iterating the result
        yields the answer's deltas as they are written (the LLM's tokens when one writes it),
        and ``.result`` is the full :class:`QueryResult` afterwards."""
        if not question or not question.strip():
            raise ValueError("the question is empty")
        opts = self._query_options(options, fields)
        local_config = LocalSearchConfig(max_hops=opts.max_hops) if opts.max_hops is not None \
            else None
        engine = self.engine(group_id, local_config)
        if opts.principals is not None:
            from knotwork.retrieval.acl import restricted_runtime

            group = self._group(group_id)
            view = restricted_runtime(self._rt, group, opts.principals)
            if view is not None:
                engine = QueryEngine(view, group, build=lambda: self._build_on_demand(group),
                                     local_config=local_config)
        return engine.query_stream(question, opts)

    def _query_options(self, options: QueryOptions | None, fields: QueryFields) -> QueryOptions:
        """The options with the keyword fields on top, as_of in UTC, the budget filled in."""
        opts = query_options(options, fields)
        return opts.with_fields(
            as_of=ensure_utc(opts.as_of) if opts.as_of else None,
            max_context_tokens=opts.max_context_tokens or self.settings.max_context_tokens,
            seed_entity_ids=tuple(dict.fromkeys(opts.seed_entity_ids)))

    def query_cache_key(self, question: str, group_id: str | None = None,
                        options: QueryOptions | None = None,
                        **fields: Unpack[QueryFields]) -> tuple[str, str] | None:
        """(tenant, key) under which :meth:`query` (without ``principals``) caches this
        answer in the QUERY layer; None when this instance caches no answers (no cache, or a
        reader's ACL view). For a caller looking answers up itself (the REST API's event loop).
        Pure computation: no store is read."""
        if self._rt.cache is None:
            return None
        prepared = self.engine(group_id).prepare(question, self._query_options(options, fields))
        return self._group(group_id), prepared.cache_key

    def engine(self, group_id: str | None = None,
               local_config: LocalSearchConfig | None = None) -> QueryEngine:
        """The query engine of one tenant (local, global, DRIFT search and AUTO routing)."""
        group = self._group(group_id)
        return QueryEngine(self._rt, group, build=lambda: self._build_on_demand(group),
                           local_config=local_config)

    def _build_on_demand(self, group: str) -> None:
        """Build communities for a query when the tenant has none (one build at a time)."""
        with self._build_lock:
            state = self._rt.graph.get_community_state(group)
            if state is not None and state.community_count > 0:
                return  # built meanwhile by another query
            if self._rt.graph.counts(group).facts == 0:
                return
            self.communities(group).build()

    # ------------------------------------------------------------------ graph
    def export_graph(self, group_id: str | None = None) -> GraphExport:
        group = self._group(group_id)
        entities = self._rt.graph.list_entities(group)
        names = {e.id: e.name for e in entities}
        return GraphExport(
            entities=[ExportedEntity(id=e.id, name=e.name, type=e.type.value, subtype=e.subtype,
                                     aliases=e.aliases, summary=e.summary)
                      for e in sorted(entities, key=lambda e: e.name)],
            facts=[ExportedFact(id=f.id, source=f.source_id, target=f.target_id,
                                source_name=names.get(f.source_id, ""),
                                target_name=names.get(f.target_id, ""), type=f.type.value,
                                fact=f.fact, valid_at=to_iso(f.valid_at),
                                invalid_at=to_iso(f.invalid_at), episodes=f.episodes)
                   for f in sorted(self._rt.graph.list_facts(group), key=lambda f: (f.type, f.fact))],
        )

    # ------------------------------------------------------------------ communities
    def communities(self, group_id: str | None = None) -> CommunityService:
        """Community build, upkeep and reads for one tenant."""
        return CommunityService(self._rt, self._group(group_id))

    def build_communities(self, group_id: str | None = None,
                          progress: StepProgress | None = None) -> BuildReport:
        return self.communities(group_id).build(progress)

    def write_report(self, out_dir: Path, level: int | None = None,
                     group_id: str | None = None) -> tuple[Report, dict[str, Path]]:
        """Write the digest (HTML, Markdown + SVG, JSON) and record it as the latest."""
        from knotwork.communities.render import write_report
        from knotwork.communities.report import build_report, report_dir, save_latest

        group = self._group(group_id)
        report, state = build_report(self._rt, group, level)
        paths = write_report(report, Path(out_dir))
        save_latest(report_dir(self.settings.data_dir, group), report, state)
        return report, paths

    def latest_report(self, group_id: str | None = None) -> Report | None:
        """The last written digest; without one, a fresh (unrecorded) one if communities exist."""
        from knotwork.communities.report import build_report, load_latest, report_dir

        group = self._group(group_id)
        latest = load_latest(report_dir(self.settings.data_dir, group))
        if latest is not None:
            return latest
        if self._rt.graph.get_community_state(group) is None:
            return None
        return build_report(self._rt, group)[0]

    def resolve_entity(self, mention: str, entity_type: EntityType | str | None = None,
                       group_id: str | None = None, context: str = "") -> ResolveResult:
        """``context`` (surrounding text) adds the embedding cosine to the score."""
        etype = EntityType(entity_type.upper()) if isinstance(entity_type, str) else entity_type
        return resolve_mention(self._rt, self._group(group_id), mention, etype, context)


def _quiet_unconfigured_logs(settings: Settings) -> None:
    """structlog unconfigured prints every level on stdout, which is the caller's output: a
    program that set up no logging gets warnings and errors on stderr instead."""
    import structlog

    if not structlog.is_configured():
        from knotwork.logging import configure_logging

        configure_logging("WARNING", json_logs=settings.log_format == "json")


def _json_to_text(content: str) -> str:
    try:
        data = json.loads(content)
    except json.JSONDecodeError as exc:
        raise ValueError(f"episode source is json but the content is not valid JSON: {exc.msg}") from exc
    lines: list[str] = []

    def walk(value: object, prefix: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{prefix}{key}." if isinstance(item, dict | list) else f"{prefix}{key}")
        elif isinstance(value, list):
            for item in value:
                walk(item, prefix)
        else:
            lines.append(f"{prefix.rstrip('.')}: {value}" if prefix else str(value))

    walk(data, "")
    return "\n".join(lines)
