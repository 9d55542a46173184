"""A deterministic, model-free embedder (feature hashing of words and character trigrams).

Shipped as the fake for unit tests and for smoke runs without the model. Texts that
share words get similar vectors, so ranking tests stay meaningful.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

_WORD = re.compile(r"[a-z0-9]+")


class HashingEmbedder:
    def __init__(self, dimension: int = 384) -> None:
        self._dimension = dimension

    @property
    def dimension(self) -> int:
        return self._dimension

    def _features(self, text: str) -> list[str]:
        words = _WORD.findall(text.lower())
        grams = [f"#{w[i:i + 3]}" for w in words for i in range(max(1, len(w) - 2))]
        return words + grams

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for text in texts:
            vec = [0.0] * self._dimension
            for feature in self._features(text):
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self._dimension
                sign = 1.0 if digest[4] & 1 else -1.0
                vec[bucket] += sign * (2.0 if not feature.startswith("#") else 1.0)
            norm = math.sqrt(sum(v * v for v in vec)) or 1.0
            out.append([v / norm for v in vec])
        return out
