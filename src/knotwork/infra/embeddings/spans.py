"""Late chunking: passages embedded once, spans inside them pooled from the same pass.

``embed_passages(embedder, texts)`` is what callers use: embedders without the optional
:class:`~knotwork.domain.ports.SpanEmbedder` part get plain vectors (every span ``None``,
so the caller embeds the span text itself).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from knotwork.domain.ports import Embedder, PassageVectors, SpanEmbedder


class PlainPassages:
    """Passage vectors only: no span can be read from them."""

    def __init__(self, vectors: list[list[float]]) -> None:
        self._vectors = vectors

    @property
    def vectors(self) -> list[list[float]]:
        return self._vectors

    def span_vector(self, index: int, start: int, end: int) -> list[float] | None:
        return None


class TextSpanPassages:
    """Spans embedded as their own text (model-free embedders: same vector as ``embed``)."""

    def __init__(
        self,
        texts: Sequence[str],
        vectors: list[list[float]],
        embed: Callable[[Sequence[str]], list[list[float]]],
    ) -> None:
        self._texts = list(texts)
        self._vectors = vectors
        self._embed = embed

    @property
    def vectors(self) -> list[list[float]]:
        return self._vectors

    def span_vector(self, index: int, start: int, end: int) -> list[float] | None:
        text = self._texts[index][start:end]
        return self._embed([text])[0] if text.strip() else None


class TokenPassages:
    """Contextual token vectors per passage (``None`` for passages served from a cache) and
    each token's character offsets; a span's vector is the mean of the tokens inside it."""

    def __init__(
        self, vectors: list[list[float]], tokens: Sequence[tuple[np.ndarray, np.ndarray] | None]
    ) -> None:
        self._vectors = vectors
        self._tokens = list(tokens)  # (token vectors [n, d], offsets [n, 2]); specials excluded

    @property
    def vectors(self) -> list[list[float]]:
        return self._vectors

    def span_vector(self, index: int, start: int, end: int) -> list[float] | None:
        found = self._tokens[index]
        if found is None or end <= start:
            return None
        vectors, offsets = found
        if not len(offsets) or int(offsets[-1, 1]) < end:
            return None  # (partly) beyond the truncation: the pass never saw it
        inside = (offsets[:, 0] < end) & (offsets[:, 1] > start)
        if not inside.any():
            return None
        pooled = vectors[inside].mean(axis=0)
        norm = float(np.linalg.norm(pooled))
        return (pooled / norm).tolist() if norm else None


def embed_passages(embedder: Embedder, texts: Sequence[str]) -> PassageVectors:
    if isinstance(embedder, SpanEmbedder):
        return embedder.embed_passages(texts)
    return PlainPassages(embedder.embed(texts))
