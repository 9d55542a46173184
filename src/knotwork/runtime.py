"""The open stores and models of one process, built explicitly from Settings."""

from __future__ import annotations

from dataclasses import dataclass, field

from knotwork.domain.ports import DocumentStore, Embedder, EventQueue, GraphStore, VectorStore
from knotwork.ingestion.extraction.extractor import RuleBasedExtractor
from knotwork.settings import Settings


@dataclass
class Runtime:
    settings: Settings
    graph: GraphStore
    vectors: VectorStore
    documents: DocumentStore
    embedder: Embedder
    _extractor: RuleBasedExtractor | None = field(default=None, repr=False)
    _events: EventQueue | None = field(default=None, repr=False)

    @property
    def extractor(self) -> RuleBasedExtractor:
        if self._extractor is None:
            from knotwork.ingestion.extraction.spacy_model import load_spacy

            self._extractor = RuleBasedExtractor(load_spacy(self.settings.spacy_model))
        return self._extractor

    @property
    def events(self) -> EventQueue:
        """The event queue, connected on first use (see ``infra.events.factory``)."""
        if self._events is None:
            from knotwork.infra.events.factory import create_event_queue

            self._events = create_event_queue(self.settings, self.graph)
        return self._events

    def close(self) -> None:
        closers = [self.documents.close, self.vectors.close, self.graph.close]
        if self._events is not None:
            closers.insert(0, self._events.close)
        for closer in closers:
            try:
                closer()
            except Exception:  # noqa: BLE001 - closing must reach every store
                pass


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
    return Runtime(settings, graph, vectors, documents, embedder)
