"""Explicit embedder factory (lazy imports of the model stack)."""

from __future__ import annotations

from knotwork.domain.ports import Embedder
from knotwork.settings import EmbedderBackend, Settings


def create_embedder(settings: Settings) -> Embedder:
    if settings.embedder is EmbedderBackend.HASHING:
        from knotwork.infra.embeddings.hashing import HashingEmbedder

        return HashingEmbedder(settings.embedding_dimension)
    from knotwork.infra.embeddings.minilm import MiniLMEmbedder

    if settings.embedding_dimension != 384:
        raise ValueError("the MiniLM embedder produces 384-d vectors; set embedding_dimension=384")
    return MiniLMEmbedder(batch_size=settings.embedding_batch_size,
                          model_cache_dir=settings.model_cache_dir)
