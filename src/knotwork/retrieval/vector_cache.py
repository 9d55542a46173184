"""Embeddings of evidence texts, memoised in-process per embedder (an LRU by text).

Query-time ranking embeds the same source sentences again and again (a chunk's sentences
for every question about its subject); the vector of a text never changes for one embedder.
"""

from __future__ import annotations

import threading
import weakref
from array import array
from collections import OrderedDict
from collections.abc import Sequence

from knotwork.domain.ports import Embedder

MAX_TEXTS = 20_000  # float32 arrays: ~30 MB at 384 dimensions
_CACHES: weakref.WeakKeyDictionary[object, OrderedDict[str, array[float]]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def embed_cached(embedder: Embedder, texts: Sequence[str], limit: int = MAX_TEXTS
                 ) -> list[Sequence[float]]:
    """``embedder.embed(texts)``, embedding only the texts not seen before."""
    try:
        with _LOCK:
            cache = _CACHES.setdefault(embedder, OrderedDict())
    except TypeError:  # not weak-referenceable: no memo
        return list(embedder.embed(list(texts))) if texts else []
    with _LOCK:
        missing = list(dict.fromkeys(t for t in texts if t not in cache))
    if missing:
        fresh = embedder.embed(missing)
        with _LOCK:
            for text, vec in zip(missing, fresh, strict=True):
                cache[text] = array("f", vec)
    out: list[Sequence[float]] = []
    with _LOCK:
        for text in texts:
            vec = cache.get(text)
            if vec is None:  # evicted meanwhile by another thread
                vec = embedder.embed([text])[0]
            else:
                cache.move_to_end(text)
            out.append(vec)
        while len(cache) > limit:
            cache.popitem(last=False)
    return out
