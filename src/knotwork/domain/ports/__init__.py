"""Ports: one narrow Protocol per store aggregate. Adapters live in ``knotwork.infra``.

Every adapter of a port passes the same contract suite in ``tests/contract``.
All methods are synchronous; async callers run them in a worker thread.
"""

from __future__ import annotations

from knotwork.domain.ports.cache import (
    CacheLayer,
    CacheStats,
    QueryCache,
)
from knotwork.domain.ports.documents import (
    ApiKeyStore,
    DocumentStore,
)
from knotwork.domain.ports.graph import (
    GraphStore,
)
from knotwork.domain.ports.llm import (
    ChatMessage,
    ChatRole,
    LLMClient,
    LLMError,
    LLMResult,
    LLMStats,
    LLMUsage,
    OutputT,
)
from knotwork.domain.ports.queues import (
    EventQueue,
    JobQueue,
)
from knotwork.domain.ports.vectors import (
    Collection,
    Embedder,
    PassageVectors,
    PayloadValue,
    SpanEmbedder,
    VectorHit,
    VectorPoint,
    VectorStore,
)

__all__ = [
    "ApiKeyStore",
    "CacheLayer",
    "CacheStats",
    "ChatMessage",
    "ChatRole",
    "Collection",
    "DocumentStore",
    "Embedder",
    "EventQueue",
    "GraphStore",
    "JobQueue",
    "LLMClient",
    "LLMError",
    "LLMResult",
    "LLMStats",
    "LLMUsage",
    "OutputT",
    "PassageVectors",
    "PayloadValue",
    "QueryCache",
    "SpanEmbedder",
    "VectorHit",
    "VectorPoint",
    "VectorStore",
]
