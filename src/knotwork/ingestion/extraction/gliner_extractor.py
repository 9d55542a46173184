"""GLiNER zero-shot NER as an ensemble extractor (labels from the taxonomy).

The model comes from a local path or a hub id already in the local cache (setting
``gliner_model_path``); nothing is downloaded. Without a model, or when loading fails, the
extractor logs one line and casts no votes: the rest of the ensemble works unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import structlog

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.types import ChunkInput, Mention

log = structlog.get_logger(__name__)

# zero-shot label -> (taxonomy type, subtype)
LABELS: Mapping[str, tuple[EntityType, str | None]] = {
    "person": (EntityType.PERSON, None),
    "organization": (EntityType.ORGANIZATION, None),
    "team": (EntityType.ORGANIZATION, "TEAM"),
    "location": (EntityType.LOCATION, None),
    "project": (EntityType.PRODUCT, "PROJECT"),
    "product": (EntityType.PRODUCT, None),
    "software service": (EntityType.PRODUCT, "SYSTEM"),
    "technology": (EntityType.TECHNOLOGY, None),
    "event": (EntityType.EVENT, None),
    "concept": (EntityType.CONCEPT, None),
}
_WINDOW_WORDS = 200  # GLiNER reads ~384 word pieces: long chunks go in sentence windows


class GlinerUnavailableError(RuntimeError):
    pass


@lru_cache(maxsize=2)
def load_gliner(path: str) -> Any:  # gliner.GLiNER; the package ships no precise stubs
    try:
        from gliner import GLiNER
    except ImportError as exc:  # optional at runtime
        raise GlinerUnavailableError("the gliner package is not installed (pip install gliner)") from exc
    try:
        model = GLiNER.from_pretrained(path, local_files_only=True)
    except Exception as exc:
        raise GlinerUnavailableError(f"cannot load GLiNER model from {path!r}: {exc}") from exc
    model.eval()
    return model


def windows(text: str, max_words: int = _WINDOW_WORDS) -> list[tuple[int, int]]:
    """(start, end) pieces of at most ~max_words words, cut at line or sentence ends."""
    pieces = [(m.start(), m.end()) for m in re.finditer(r"[^\n.!?]+[.!?]*", text)]
    out: list[tuple[int, int]] = []
    start: int | None = None
    end = words = 0
    for s, e in pieces:
        n = len(text[s:e].split())
        if start is not None and words + n > max_words:
            out.append((start, end))
            start, words = None, 0
        if start is None:
            start = s
        end, words = e, words + n
    if start is not None:
        out.append((start, end))
    return out


class GlinerExtractor:
    name = "gliner"

    def __init__(self, model_path: str | None, threshold: float = 0.5, batch_size: int = 8,
                 model: Any | None = None) -> None:
        self._path = model_path
        self._threshold = threshold
        self._batch = batch_size
        self._model = model
        self._disabled = False

    @property
    def available(self) -> bool:
        return self._ensure() is not None

    def _ensure(self) -> Any | None:
        if self._model is not None or self._disabled:
            return self._model
        if not self._path:
            log.info("gliner.skipped", reason="no model configured (KNOTWORK_GLINER_MODEL_PATH)")
            self._disabled = True
            return None
        try:
            self._model = load_gliner(self._path)
        except GlinerUnavailableError as exc:
            log.warning("gliner.skipped", reason=str(exc).splitlines()[0][:300])
            self._disabled = True
            return None
        log.info("gliner.loaded", path=self._path)
        return self._model

    def mentions(self, chunks: Sequence[ChunkInput]) -> list[list[Mention]]:
        out: list[list[Mention]] = [[] for _ in chunks]
        model = self._ensure()
        if model is None:
            return out
        spans = [(i, s, e) for i, c in enumerate(chunks) for s, e in windows(c.text)]
        if not spans:
            return out
        texts = [chunks[i].text[s:e] for i, s, e in spans]
        results = model.inference(texts, list(LABELS), threshold=self._threshold,
                                  batch_size=self._batch)
        for (i, offset, _), found in zip(spans, results, strict=True):
            text = chunks[i].text
            for ent in found:
                etype, subtype = LABELS.get(str(ent.get("label")), (None, None))
                start, end = offset + int(ent["start"]), offset + int(ent["end"])
                if etype is None or not (0 <= start < end <= len(text)):
                    continue
                out[i].append(Mention(start, end, text[start:end], etype,
                                      round(float(ent.get("score", 0.0)), 4), "gliner", subtype))
        return out
