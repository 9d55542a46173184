"""The MiniLM embedder's vector cache: repeated texts are not encoded again."""

from __future__ import annotations

import numpy as np

from knotwork.infra.embeddings.minilm import MiniLMEmbedder


class CountingEmbedder(MiniLMEmbedder):
    """The real cache around a fake encoder (no model load in a unit test)."""

    def __init__(self, cache_size: int) -> None:
        super().__init__(cache_size=cache_size)
        self.encoded: list[str] = []

    def _encode(self, texts: list[str]) -> list[np.ndarray]:
        self.encoded.extend(texts)
        return [np.full(384, float(len(t)), dtype=np.float32) for t in texts]


def test_repeated_texts_are_encoded_once_and_order_is_kept() -> None:
    emb = CountingEmbedder(cache_size=10)
    first = emb.embed(["a", "bb", "a"])
    assert emb.encoded == ["a", "bb"]
    assert [v[0] for v in first] == [1.0, 2.0, 1.0]
    second = emb.embed(["bb", "ccc"])
    assert emb.encoded == ["a", "bb", "ccc"]
    assert [v[0] for v in second] == [2.0, 3.0]


def test_least_recently_used_texts_are_evicted() -> None:
    emb = CountingEmbedder(cache_size=2)
    emb.embed(["a", "bb"])
    emb.embed(["a"])  # "a" is now the most recent
    emb.embed(["ccc"])  # evicts "bb"
    emb.embed(["a", "bb"])
    assert emb.encoded == ["a", "bb", "ccc", "bb"]


def test_empty_input_encodes_nothing() -> None:
    emb = CountingEmbedder(cache_size=2)
    assert emb.embed([]) == []
    assert emb.encoded == []
