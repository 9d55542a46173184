"""The open stores and models of one process, built explicitly from Settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import structlog

from knotwork.domain.ports import (
    DocumentStore,
    Embedder,
    EventQueue,
    GraphStore,
    LLMClient,
    QueryCache,
    VectorStore,
)
from knotwork.ingestion.extraction.extractor import RuleBasedExtractor
from knotwork.settings import Settings

if TYPE_CHECKING:
    from knotwork.ingestion.extraction.llm_extractor import LLMExtractor


@dataclass
class Runtime:
    settings: Settings
    graph: GraphStore
    vectors: VectorStore
    documents: DocumentStore
    embedder: Embedder
    _extractor: RuleBasedExtractor | None = field(default=None, repr=False)
    _events: EventQueue | None = field(default=None, repr=False)
    _llm: LLMClient | None = field(default=None, repr=False)
    _llm_built: bool = field(default=False, repr=False)
    _llm_extractor: LLMExtractor | None = field(default=None, repr=False)
    cache: QueryCache | None = field(default=None, repr=False)  # settings.cache_enabled

    @property
    def extractor(self) -> RuleBasedExtractor:
        if self._extractor is None:
            from knotwork.ingestion.extraction.extractor import build_extractor

            extractor = build_extractor(self.settings)
            if self.llm_extractor is not None:  # the LLM votes in the ensemble
                from knotwork.ingestion.extraction.llm_extractor import LLMVotingExtractor

                # it forwards every other attribute to the ensemble (``__getattr__``)
                extractor = LLMVotingExtractor(  # type: ignore[assignment]
                    extractor, self.llm_extractor)
            self._extractor = extractor
        return self._extractor

    @property
    def events(self) -> EventQueue:
        """The event queue, connected on first use (see ``infra.events.factory``)."""
        if self._events is None:
            from knotwork.infra.events.factory import create_event_queue

            self._events = create_event_queue(self.settings, self.graph)
        return self._events

    @property
    def llm(self) -> LLMClient | None:
        """The configured LLM client; None when ``llm_base_url`` is not set (no LLM)."""
        if not self._llm_built:
            from knotwork.infra.llm.factory import create_llm_client

            self._llm = create_llm_client(self.settings)
            self._llm_built = True
        return self._llm

    @property
    def llm_extractor(self) -> LLMExtractor | None:
        """Batched LLM extraction (at most one call per chunk); None without an LLM."""
        llm = self.llm
        if llm is None:
            return None
        if self._llm_extractor is None:
            from knotwork.ingestion.extraction.llm_extractor import LLMExtractor

            self._llm_extractor = LLMExtractor(
                llm, batch_size=self.settings.llm_batch_size,
                input_tokens=self.settings.llm_input_tokens)
        return self._llm_extractor

    def close(self) -> None:
        closers = [self.documents.close, self.vectors.close, self.graph.close]
        if self.cache is not None:
            closers.insert(0, self.cache.close)
        if self._llm is not None:
            closers.insert(0, self._llm.close)
        if self._events is not None:
            closers.insert(0, self._events.close)
        for closer in closers:
            try:
                closer()
            except Exception as exc:  # noqa: BLE001 - closing must reach every store
                structlog.get_logger(__name__).warning("runtime.close_failed",
                                                       error=type(exc).__name__)


def open_runtime(settings: Settings) -> Runtime:
    """Open every store named by the settings (graph, vectors, SQL) and migrate the schema."""
    from knotwork.domain.ports import Collection
    from knotwork.infra.embeddings.factory import create_embedder
    from knotwork.infra.graph_factory import create_graph_store
    from knotwork.infra.sql.store import SqlDocumentStore
    from knotwork.infra.vector_factory import create_vector_store

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    embedder = create_embedder(settings)
    documents = SqlDocumentStore(settings.resolved_database_url())
    graph: GraphStore | None = None
    vectors: VectorStore | None = None
    try:
        documents.migrate()
        graph = create_graph_store(settings)
        vectors = create_vector_store(settings)
        for collection in Collection:
            vectors.ensure_collection(collection, embedder.dimension)
    except BaseException:
        for store in (vectors, graph, documents):
            if store is not None:
                store.close()
        raise
    from knotwork.infra.cache.factory import create_cache
    from knotwork.observability.tracing import instrument

    cache = create_cache(settings, graph)
    if cache is not None:  # every graph write applies the cache invalidation triggers
        from knotwork.infra.cache.invalidating import InvalidatingGraphStore

        graph = InvalidatingGraphStore(graph, cache)
    return Runtime(settings, instrument(graph, "graph"), instrument(vectors, "vectors"),
                   instrument(documents, "documents"), embedder, cache=cache)
