"""Ingestion: load → chunk → extract → resolve → facts → write graph, vectors, SQL.

A batch's first write marks its documents PROCESSING in SQL; then graph, vectors, SQL chunks
and mentions are written as upserts keyed by deterministic ids; COMPLETED comes last. A crash
leaves them PROCESSING, and the next run that meets them (an ingest of the same source, a
worker, ``knotwork reconcile``) first rolls back what the dead attempt wrote (``roll_back``,
``ingestion.recovery``), then redoes them against the graph a clean run would have seen.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field

import structlog

from knotwork.communities.service import CommunityService
from knotwork.domain.ids import document_digest, stable_id
from knotwork.domain.models import (
    Chunk,
    Document,
    Entity,
    Episode,
    ProcessingStatus,
    RawDocument,
)
from knotwork.domain.ports import Collection
from knotwork.domain.text import clean_text
from knotwork.domain.timeutil import ensure_utc, utcnow
from knotwork.infra.embeddings.threads import one_core_left
from knotwork.infra.vector_factory import build_due_indexes
from knotwork.ingestion.chunking import chunk_text
from knotwork.ingestion.embedding_text import (
    entity_point,
    entity_text,
    fact_point,
    passage_point,
)
from knotwork.ingestion.entity_evidence import with_evidence
from knotwork.ingestion.extraction.mentions import KnownName
from knotwork.ingestion.extraction.types import ChunkExtraction
from knotwork.ingestion.graph_builder import BatchBuilder, BatchResult
from knotwork.ingestion.lineage import Lineage, Retired
from knotwork.ingestion.passage_work import PassageWork, PendingPassages, one_core_each
from knotwork.ingestion.recovery import crashed, undo_endings
from knotwork.ingestion.vector_writes import (
    EmbeddedPassages,
    passage_embedder,
    passage_rows,
    plan_vectors,
    sentence_rows,
    stored_vectors,
)
from knotwork.resolution.ingest import StoredResolutionIndex
from knotwork.resolution.models import ReviewItem
from knotwork.runtime import Runtime

log = structlog.get_logger(__name__)

Progress = Callable[[int], None]
_BATCHES_AHEAD = 2  # batches whose passages are queued while one is processed
# Held around every store write of a batch (workers: the store-writer lock, see
# ``services.worker``); extraction and passage embedding run outside it.
CommitGuard = Callable[[], AbstractContextManager[object]]


@dataclass
class IngestReport:
    documents_seen: int = 0
    documents_ingested: int = 0
    documents_unchanged: int = 0
    chunks: int = 0
    entities: int = 0
    facts: int = 0
    episode_ids: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)  # source ids of new documents
    updated: list[str] = field(default_factory=list)  # ... of changed (re-processed) documents
    facts_retired: int = 0  # left without evidence by a changed document (see lineage)
    entities_retired: int = 0
    entities_merged: int = 0  # twins joined by the consolidation pass after the ingest
    stale_communities: list[str] = field(default_factory=list)  # not re-summarized inline
    # flagged "new" decisions (tied candidates): review items whose entity a worker
    # re-resolves later (RESOLVE_ENTITY tasks, see services.worker.resolve)
    deferred: list[ReviewItem] = field(default_factory=list)


@dataclass
class _Prepared:
    document: Document
    chunks: list[Chunk]
    episodes: list[Episode]
    previous: Document | None = None  # the stored version this one replaces
    unfinished: Document | None = None  # stored by an attempt that did not finish (crashed)


@dataclass
class _Ahead:
    """A batch whose passages are being embedded while the batch before it is processed."""

    batch: list[_Prepared]
    passages: PendingPassages


class IngestionPipeline:
    def __init__(self, runtime: Runtime, group_id: str, batch_documents: int = 16,
                 commit_guard: CommitGuard | None = None) -> None:
        self._rt = runtime
        self._group = group_id
        self._batch = batch_documents
        self._guard: CommitGuard = commit_guard or nullcontext
        self._known: dict[str, KnownName] | None = None
        self._communities = CommunityService(runtime, group_id)
        self._lineage = Lineage(runtime, group_id, self._communities)

    # ------------------------------------------------------------------ public
    def ingest(self, documents: Iterable[RawDocument], progress: Progress | None = None) -> IngestReport:
        self._rt.graph.ensure_schema(self._group)
        report = IngestReport()
        # batches ahead: a batch's passages (they do not depend on resolution) are embedded
        # on one core while the batch before it is extracted and written on the other; two
        # queued keep the worker busy while this thread helps with the next one's (issue 4)
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="passages")
        try:
            ahead: deque[_Ahead] = deque()
            pending: list[_Prepared] = []
            for raw in documents:
                report.documents_seen += 1
                prepared = self._prepare(raw)
                if prepared is None:
                    report.documents_unchanged += 1
                    if progress:
                        progress(1)
                    continue
                pending.append(prepared)
                if len(pending) >= self._batch:
                    ahead.append(_Ahead(pending, self._submit_passages(pool, pending)))
                    pending = []
                    if len(ahead) > _BATCHES_AHEAD:
                        self._process_next(ahead, report, progress)
            if pending:
                ahead.append(_Ahead(pending, self._submit_passages(pool, pending)))
            while ahead:
                self._process_next(ahead, report, progress)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        build_due_indexes(self._rt.vectors)
        return report

    def _process_next(self, ahead: deque[_Ahead], report: IngestReport,
                      progress: Progress | None) -> None:
        """Process the oldest queued batch; the ones queued after it are embedding meanwhile."""
        first = ahead.popleft()
        self._process(first.batch, report, progress, passages=first.passages,
                      queued=[a.passages for a in ahead])

    def _submit_passages(self, pool: ThreadPoolExecutor, batch: Sequence[_Prepared]
                         ) -> PendingPassages:
        """The batch's passages queued on the worker (one core; the calling thread helps
        when it asks for them before they are done)."""
        settings = self._rt.settings
        rows = passage_rows({p.document.id: p.document.title for p in batch},
                            [e for p in batch for e in p.episodes], settings.passage_tokens)
        # the candidate sentences' texts as local search embeds them, in the same pass
        pooled = settings.evidence_pooled and settings.late_chunk_facts
        sentences = sentence_rows([e for p in batch for e in p.episodes], len(rows),
                                  rows if pooled else None) if settings.evidence_vectors else []
        embed = one_core_each(passage_embedder(self._rt.embedder, settings.late_chunk_facts))
        work = PassageWork([text for _, _, text, _ in rows], embed,
                           short=[s.text for s in sentences if s.row is not None],
                           short_embed=one_core_each(passage_embedder(self._rt.embedder, False))
                           ).submit(pool)
        return PendingPassages(rows, work, sentences)

    def add_episode(self, raw: RawDocument, context_episodes: int = 3) -> IngestReport:
        """One message or text: prior episodes of the group give coreference context."""
        self._rt.graph.ensure_schema(self._group)
        report = IngestReport(documents_seen=1)
        prepared = self._prepare(raw)
        if prepared is None:
            report.documents_unchanged = 1
            existing = self._rt.documents.get_document_by_source(
                self._group, raw.source_system, raw.source_id)
            report.episode_ids = [c.id for c in self._chunks_of(existing)] if existing else []
            return report
        recent = self._rt.graph.recent_episode_ids(self._group, context_episodes)
        context: list[KnownName] = []
        for episode_id in recent:
            ids = self._rt.graph.episode_entity_ids(self._group, episode_id)
            for entity in self._rt.graph.get_entities(self._group, ids):
                context.append(KnownName(entity.name, entity.type, entity.subtype))
        self._process([prepared], report, None, context)
        return report

    def prepare(self, raw: RawDocument) -> _Prepared | None:
        """Chunked and ready to process; ``None`` when stored unchanged and COMPLETED."""
        return self._prepare(raw)

    def process(self, batch: Sequence[_Prepared], progress: Progress | None = None) -> IngestReport:
        """Extract and write prepared documents (as one batch); idempotent."""
        self._rt.graph.ensure_schema(self._group)
        report = IngestReport(documents_seen=len(batch))
        if batch:
            self._process(batch, report, progress)
            build_due_indexes(self._rt.vectors)
        return report

    def recover(self, raws: Sequence[RawDocument]) -> Retired:
        """Undo what a crashed attempt half wrote for these documents, before redoing them.

        A document stored PROCESSING or FAILED may have graph state from an attempt that
        died before its SQL commit: its episodes are detached and what only they evidenced
        is retired, so the redo extracts against the graph a first attempt saw (the known
        names come from it). Idempotent; COMPLETED and PENDING (queued, not begun)
        documents are left alone. Inline ingestion does the same for each batch.
        """
        unfinished: list[Document] = []
        for raw in raws:
            stored = self._rt.documents.get_document_by_source(
                self._group, raw.source_system, raw.source_id)
            if crashed(stored):
                assert stored is not None
                unfinished.append(stored)
        return self.roll_back(unfinished)

    def roll_back(self, candidates: Sequence[Document], episode_ids: Sequence[str] = ()
                  ) -> Retired:
        """Withdraw the graph state of documents an attempt began and did not finish.

        Re-read under the guard: only rows still PROCESSING / FAILED are rolled back (a worker
        begins and completes a batch under one hold). ``episode_ids``: see ``batch_times``."""
        if not candidates:
            return Retired()
        with self._guard():
            stored = self._rt.documents.get_documents([d.id for d in candidates])
            unfinished = [d for d in stored if crashed(d)]
            if not unfinished:
                return Retired()
            graph = self._rt.graph
            # what the dead batches wrote is recomputed by the sweep (evidence fields, issue 18)
            self._lineage.touch(undo_endings(graph, self._group, unfinished, episode_ids))
            episodes = self._lineage.withdraw(unfinished)
            retired = self._lineage.sweep("recovered", unfinished) if episodes else Retired()
        self._known = None
        retired.documents, retired.episodes = len(unfinished), episodes
        log.info("ingest.recovered", group=self._group, documents=len(unfinished),
                 episodes=episodes, facts_retired=retired.facts)
        return retired

    def forget_known(self) -> None:
        """Drop the cache of known names (other processes added entities)."""
        self._known = None

    def delete_documents(self, documents: Sequence[Document]) -> Retired:
        """Documents deleted at their source: gone with everything only they evidenced."""
        with self._guard():
            retired = self._lineage.delete_documents(documents)
        if retired.entities:
            self._known = None  # rebuilt from the graph on next use
        return retired

    # ------------------------------------------------------------------ steps
    def _chunks_of(self, document: Document) -> list[Chunk]:
        ids = [stable_id(document.id, "chunk", str(i)) for i in range(document.chunk_count)]
        return self._rt.documents.get_chunks(ids)

    def _prepare(self, raw: RawDocument) -> _Prepared | None:
        settings = self._rt.settings
        if _unclean(raw.content) or _unclean(raw.title):
            raw = raw.model_copy(update={"content": clean_text(raw.content),
                                         "title": clean_text(raw.title)})
        doc_id = stable_id(self._group, "document", raw.source_system, raw.source_id)
        acl = sorted(set(raw.acl))
        digest = document_digest(raw.title, raw.content, acl)
        existing = self._rt.documents.get_document_by_source(self._group, raw.source_system, raw.source_id)
        if _unchanged(existing, digest):
            return None
        now = utcnow()
        when = ensure_utc(raw.modified_at or raw.created_at or now)
        spans = chunk_text(raw.content, settings.chunk_tokens, settings.chunk_overlap)
        chunks = [
            Chunk(id=stable_id(doc_id, "chunk", str(s.index)), document_id=doc_id,
                  group_id=self._group, index=s.index, content=s.text, start_offset=s.start,
                  end_offset=s.end, token_count=s.token_count)
            for s in spans
        ]
        document = Document(
            id=doc_id, group_id=self._group, source_system=raw.source_system,
            source_id=raw.source_id, title=raw.title, url=raw.url, author=raw.author,
            created_at=raw.created_at, modified_at=raw.modified_at, mime_type=raw.mime_type,
            content_hash=digest, processing_status=ProcessingStatus.PROCESSING,
            chunk_count=len(chunks), metadata=raw.metadata, acl=acl)
        episodes = [
            Episode(id=c.id, group_id=self._group,
                    name=raw.title if len(chunks) == 1 else f"{raw.title} #{c.index + 1}",
                    content=c.content, source=raw.episode_source,
                    source_description=f"{raw.source_system}:{raw.source_id}",
                    document_id=doc_id, valid_at=when, created_at=now)
            for c in chunks
        ]
        return _Prepared(document, chunks, episodes, previous=_stored_version(existing),
                         unfinished=existing if crashed(existing) else None)

    def _known_names(self) -> dict[str, KnownName]:
        if self._known is None:
            from knotwork.resolution.salience import retired_names

            self._known = {}
            for entity in self._rt.graph.list_entities(self._group):
                self._remember(entity)
            for key, name in retired_names(self._rt, self._group).items():  # still recognised
                self._known.setdefault(key, name)
        return self._known

    def _known_for(self, batch: Sequence[_Prepared]) -> dict[str, KnownName]:
        """Known names for extracting ``batch``, less those of entities only the stored
        versions it replaces mention: a page's old version must not steer the extraction of
        its new one (types, spans), or an edit differs from a fresh ingest of the new text."""
        known = self._known_names()
        graph, group = self._rt.graph, self._group
        replaced = {stable_id(p.previous.id, "chunk", str(i)) for p in batch
                    if p.previous is not None for i in range(p.previous.chunk_count)}
        if not replaced:
            return known
        mentioned = {e for ep in sorted(replaced) for e in graph.episode_entity_ids(group, ep)}
        own = [e for e in sorted(mentioned)
               if set(graph.entity_episode_ids(group, e)) <= replaced]
        if not own:
            return known
        dropped = {k for e in graph.get_entities(group, own) for k in e.name_keys}
        return {k: v for k, v in known.items() if k not in dropped}

    def _remember(self, entity: Entity) -> None:
        if self._known is None:
            return  # dropped after a retirement: rebuilt from the graph on next use
        for key in entity.name_keys:
            if not key.startswith("first:") and len(key) >= 3:
                self._known.setdefault(key, KnownName(entity.name, entity.type, entity.subtype))

    def _process(self, batch: Sequence[_Prepared], report: IngestReport, progress: Progress | None,
                 context: Sequence[KnownName] = (), *,
                 passages: PendingPassages | None = None,
                 queued: Sequence[PendingPassages] = ()) -> None:
        """``passages``: the batch's passages, already queued; ``queued``: the next batches',
        embedded meanwhile (this thread helps with the first while its own finish, and its
        model calls leave the worker a core)."""
        recovered = [p for p in batch if p.unfinished is not None]
        self.roll_back([p.unfinished for p in recovered if p.unfinished is not None],
                       [e.id for p in recovered for e in p.episodes])
        rt = self._rt
        known = self._known_for(batch)
        episodes = [e for p in batch for e in p.episodes]
        # MiniLM (native code, the GIL released) embeds the passages while spaCy and the
        # rules extract: the two models' work overlaps on a multi-core machine
        if passages is None:
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="passages") as pool:
                embedding = self._submit_passages(pool, batch)
                extractions = rt.extractor.extract([e.content for e in episodes], known, context)
                embedded = embedding.result()
        else:
            extractions = rt.extractor.extract([e.content for e in episodes], known, context)
            embedded = passages.result(spare=queued[0] if queued else None)
        shared = any(not q.done() for q in queued)
        with self._guard(), one_core_left() if shared else nullcontext():
            kept = self._still_needed(batch)
            if kept:
                ids = {p.document.id for p in kept}
                pairs = [(e, x) for e, x in zip(episodes, extractions, strict=True)
                         if e.document_id in ids]
                self._commit(kept, pairs, embedded.of_documents(ids), report,
                             redo=bool(recovered))
        report.documents_unchanged += len(batch) - len(kept)
        if progress:
            progress(len(batch))

    def _still_needed(self, batch: Sequence[_Prepared]) -> list[_Prepared]:
        """Re-read under the guard: another worker may have finished or changed a document
        since it was prepared (a redelivered task); ``previous`` is what is stored now."""
        kept: list[_Prepared] = []
        for p in batch:
            stored = self._rt.documents.get_document_by_source(
                self._group, p.document.source_system, p.document.source_id)
            if _unchanged(stored, p.document.content_hash):
                continue
            p.previous = _stored_version(stored)
            kept.append(p)
        return kept

    def _commit(self, batch: Sequence[_Prepared],
                pairs: Sequence[tuple[Episode, ChunkExtraction]],
                passages: EmbeddedPassages, report: IngestReport, *, redo: bool = False) -> None:
        """``redo``: a rolled-back batch again: all its entities are re-embedded (the graph may
        hold the dead attempt's changes to them without their vectors)."""
        rt = self._rt
        self._begin(batch)
        replaced = [p.previous for p in batch if p.previous is not None]
        self._lineage.withdraw(replaced)  # the old versions' evidence, before the new one's
        now = utcnow()  # the batch's episodes and touched entities carry it (``recovery``)
        episodes = [e.model_copy(update={"created_at": now}) for e, _ in pairs]
        builder = BatchBuilder(
            self._group, now,
            find_entities=lambda keys: rt.graph.find_entities_by_keys(self._group, keys),
            facts_of=lambda ids: [h.fact for h in rt.graph.expand_facts(
                self._group, ids, depth=1, include_invalid=True, limit=10_000)],
            index=StoredResolutionIndex(rt, self._group),  # blocking keys, reviews (issue 5)
            entities_of=lambda ids: rt.graph.get_entities(self._group, ids),  # holder kinds (issue 4)
        )
        result = builder.build(list(pairs))
        llm = self._rt.llm
        if llm is not None and self._rt.settings.llm_entity_summaries:
            from knotwork.ingestion.entity_summaries import apply_llm_summaries

            # failures keep the extractive summaries the builder wrote
            apply_llm_summaries(llm, result, input_tokens=self._rt.settings.llm_input_tokens)
        self._write_graph(episodes, result)
        self._write_vectors(passages, result, redo=redo)
        if replaced:  # before COMPLETED is written: a crash here redoes the batch, sweep too
            self._note_retired(self._lineage.sweep("edited", replaced), report)
        self._save_sql(batch, result)
        # community upkeep before COMPLETED: the stale marks it leaves (COMMUNITY_UPDATED
        # follow-ups of a worker) are durable once a document is; a crash redoes both
        upkeep = self._communities.after_ingest(result.facts.values())  # no-op before a build
        self._complete(batch, result)
        for entity in result.entities.values():
            self._remember(entity)
        report.documents_ingested += len(batch)
        report.chunks += len(episodes)
        report.entities += len(result.entities)
        report.facts += len(result.facts)
        report.episode_ids.extend(e.id for e in episodes)
        report.deferred.extend(r for r in result.resolution.reviews
                               if r.decision == "new" and r.entity_id)
        for p in batch:
            (report.updated if p.previous else report.added).append(p.document.source_id)
        log.info("ingest.batch", group=self._group, documents=len(batch), chunks=len(episodes),
                 entities=len(result.entities), facts=len(result.facts))
        if upkeep is not None:
            done = set(upkeep.resummarized)
            report.stale_communities.extend(c for c in upkeep.stale if c not in done)

    def _note_retired(self, retired: Retired, report: IngestReport) -> None:
        report.facts_retired += retired.facts
        report.entities_retired += retired.entities
        if retired.entities:
            self._known = None

    # ------------------------------------------------------------------ writes
    def _write_graph(self, episodes: Sequence[Episode], result: BatchResult) -> None:
        """Stored entities last: a summary naming a fact the graph lacks (a crash between the
        writes) would keep its sentence through a rollback, out of place when the redo adds it."""
        graph, stored = self._rt.graph, result.previous_entities
        graph.upsert_episodes(episodes)
        created = {e.id: e for e in result.entities.values() if e.id not in stored}
        graph.upsert_entities(list(created.values()))
        graph.upsert_mentions(self._group, result.graph_mentions)
        # evidence count and first-seen time as the mentions now say (issue 18)
        evidence = graph.entity_evidence(self._group, list(result.entities))
        now = episodes[0].created_at if episodes else utcnow()
        for entity_id, entity in list(result.entities.items()):
            result.entities[entity_id] = with_evidence(entity, evidence.get(entity_id), now)
        graph.upsert_facts(list(result.facts.values()))
        graph.upsert_entities([e for e in result.entities.values()
                               if e.id in stored or e != created[e.id]])

    def _write_vectors(self, passages: EmbeddedPassages, result: BatchResult, *,
                       redo: bool = False) -> None:
        """Only what changed is embedded (issue 9): a payload change keeps the stored vector,
        a fact sentence found in its passage is pooled from the passage pass."""
        vectors = self._rt.vectors
        plan = plan_vectors(result.entities.values(), {} if redo else result.previous_entities,
                            result.facts.values(), result.previous_facts)
        ent_stored = stored_vectors(vectors, Collection.ENTITIES, self._group,
                                    [e.id for e in plan.entity_payloads])
        fact_stored = stored_vectors(vectors, Collection.FACTS, self._group,
                                     [f.id for f in plan.fact_payloads])
        entities = plan.entities + [e for e in plan.entity_payloads if e.id not in ent_stored]
        facts = plan.facts + [f for f in plan.fact_payloads if f.id not in fact_stored]
        fact_vecs: dict[str, list[float]] = dict(fact_stored)
        if self._rt.settings.late_chunk_facts:
            for fact in facts:
                pooled = passages.sentence_vector(fact.episodes, fact.fact)
                if pooled is not None:
                    fact_vecs[fact.id] = pooled
        embedded = [f for f in facts if f.id not in fact_vecs]
        all_vectors = self._rt.embedder.embed([entity_text(e) for e in entities]
                                              + [f.fact for f in embedded])
        ent_vecs = dict(ent_stored)
        ent_vecs.update(zip([e.id for e in entities], all_vectors[: len(entities)], strict=True))
        fact_vecs.update(zip([f.id for f in embedded], all_vectors[len(entities) :], strict=True))
        vectors.upsert(Collection.ENTITIES, [
            entity_point(e, ent_vecs[e.id]) for e in [*plan.entities, *plan.entity_payloads]])
        vectors.upsert(Collection.FACTS, [
            fact_point(f, fact_vecs[f.id]) for f in [*plan.facts, *plan.fact_payloads]])
        # a chunk is embedded as passages: MiniLM reads only its first 256 word pieces
        vectors.upsert(Collection.CHUNKS, [
            passage_point(e.id, e.document_id, e.source_description, i, self._group, v)
            for e, i, v in passages.points()])
        if passages.sentences:
            vectors.upsert(Collection.SENTENCES, passages.sentence_points(self._rt.embedder.embed))

    def _begin(self, batch: Sequence[_Prepared]) -> None:
        """The first write of a batch: its documents PROCESSING in SQL (a new one a row without
        chunks), so a crash before ``_complete`` leaves them for ``roll_back``."""
        store = self._rt.documents
        for p in batch:
            if p.previous is None:
                store.save_document(p.document.model_copy(update={
                    "chunk_count": 0, "processing_status": ProcessingStatus.PROCESSING}), [])
            else:
                store.set_status(p.document.id, ProcessingStatus.PROCESSING)

    def _save_sql(self, batch: Sequence[_Prepared], result: BatchResult) -> None:
        store = self._rt.documents
        for prepared in batch:
            store.save_document(prepared.document, prepared.chunks)
        store.add_mentions(result.mentions)

    def _complete(self, batch: Sequence[_Prepared], result: BatchResult) -> None:
        """The last write of a batch: its documents COMPLETED (one transaction)."""
        self._rt.documents.complete_documents({
            p.document.id: len({eid for e in p.episodes
                                for eid in result.entities_per_episode.get(e.id, set())})
            for p in batch})


def _unclean(text: str) -> bool:
    return clean_text(text) != text


def _unchanged(stored: Document | None, digest: str) -> bool:
    return stored is not None and stored.content_hash == digest \
        and stored.processing_status is ProcessingStatus.COMPLETED


def _stored_version(stored: Document | None) -> Document | None:
    """The stored version a new one replaces; a queued placeholder (no chunks) is none."""
    if stored is None or (stored.chunk_count == 0
                          and stored.processing_status is not ProcessingStatus.COMPLETED):
        return None
    return stored

