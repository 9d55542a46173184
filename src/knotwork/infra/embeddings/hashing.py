"""A deterministic, model-free embedder (feature hashing of words and character trigrams).

Shipped as the fake for unit tests and for smoke runs without the model. Texts that
share words get similar vectors, so ranking tests stay meaningful.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

from knotwork.infra.embeddings.spans import TextSpanPassages

_WORD = re.compile(r"[a-z0-9]+")
_MAX_SLOTS = 200_000  # memoised feature hashes (~40 MB at most); cleared when full


class HashingEmbedder:
    def __init__(self, dimension: int = 384) -> None:
        self._dimension = dimension
        self._slots: dict[str, tuple[int, float]] = {}

    @property
    def dimension(self) -> int:
        return self._dimension

    def _features(self, text: str) -> list[str]:
        words = _WORD.findall(text.lower())
        grams = [f"#{w[i:i + 3]}" for w in words for i in range(max(1, len(w) - 2))]
        return words + grams

    def _slot(self, feature: str) -> tuple[int, float]:
        """(bucket, signed weight) of a feature, memoised: words and trigrams recur, and the
        hash is most of the cost (query-time evidence is embedded per question)."""
        slot = self._slots.get(feature)
        if slot is None:
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self._dimension
            sign = 1.0 if digest[4] & 1 else -1.0
            slot = (bucket, sign * (2.0 if not feature.startswith("#") else 1.0))
            if len(self._slots) >= _MAX_SLOTS:
                self._slots.clear()
            self._slots[feature] = slot
        return slot

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for text in texts:
            vec = [0.0] * self._dimension
            for feature in self._features(text):
                bucket, weight = self._slot(feature)
                vec[bucket] += weight
            norm = math.sqrt(sum(v * v for v in vec)) or 1.0
            out.append([v / norm for v in vec])
        return out

    def embed_passages(self, texts: Sequence[str]) -> TextSpanPassages:
        """A span's vector is the span's own text embedded (hashing has no context)."""
        return TextSpanPassages(texts, self.embed(texts), self.embed)
