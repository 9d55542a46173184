"""Model batches of similar length (``length_batches``): padded word pieces stay close to the
real ones, every text is embedded once, and the vectors are the model's own."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from knotwork.infra.embeddings.minilm import MiniLMEmbedder, length_batches


def _padded(lengths: list[int], batches: list[list[int]]) -> int:
    return sum(max(lengths[i] for i in b) * len(b) for b in batches)


def test_every_text_is_in_exactly_one_batch() -> None:
    lengths = [random.Random(i).randint(5, 256) for i in range(300)]
    batches = length_batches(lengths, max_rows=64)
    assert sorted(i for b in batches for i in b) == list(range(300))
    assert all(0 < len(b) <= 64 for b in batches)


def test_padding_stays_within_the_slack() -> None:
    rng = random.Random(7)
    # ingestion's mix: short entity and fact texts, passages up to the model's 256 pieces
    lengths = [rng.randint(7, 40) for _ in range(400)] + [rng.randint(19, 256) for _ in range(200)]
    batches = length_batches(lengths, max_rows=64, slack=1.1)
    for b in batches:
        if len(b) > 1:
            assert max(lengths[i] for i in b) * len(b) <= 1.1 * sum(lengths[i] for i in b)
    # fixed batches of 64 over the same texts sorted by length pad more than the slack
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    fixed = [order[a : a + 64] for a in range(0, len(order), 64)]
    assert _padded(lengths, batches) <= 1.1 * sum(lengths) < _padded(lengths, fixed)


def test_equal_lengths_fill_whole_batches() -> None:
    batches = length_batches([256] * 130, max_rows=64)
    assert [len(b) for b in batches] == [64, 64, 2]


def test_empty_input_has_no_batch() -> None:
    assert length_batches([], max_rows=64) == []


_TEXTS = ["Priya Raman (person). Priya Raman leads Project Atlas.", "Kafka",
          "The Billing Service depends on PostgreSQL. " * 12, "Berlin (location).",
          "Ana joined the Payments Team in May 2023. She reports to Omar Haddad.",
          "word " * 400]  # past the 256 word-piece truncation


def _reference(texts: list[str]) -> np.ndarray:
    """sentence-transformers' own ``encode`` of each text alone (no padding at all)."""
    from sentence_transformers import SentenceTransformer

    from knotwork.infra.embeddings.minilm_model import model_path

    model = SentenceTransformer(str(model_path()), device="cpu")
    return np.array([model.encode([t], normalize_embeddings=True, convert_to_numpy=True)[0]
                     for t in texts])


@pytest.mark.models
def test_vectors_equal_the_models_own_encode_traced_then_from_the_cached_trace(
        tmp_path: Path) -> None:
    """Regrouping only changes padding, tracing nothing: each vector is what ``encode`` gives
    the text alone, whether the encoder was just traced or loaded from the kept trace."""
    from knotwork.infra.embeddings import minilm_model

    reference = _reference(_TEXTS)
    traced = np.array(MiniLMEmbedder(model_cache_dir=tmp_path).embed(_TEXTS))
    kept = list(tmp_path.glob("minilm-*.pt"))
    assert len(kept) == 1 and not list(tmp_path.glob("*.partial"))
    minilm_model.shared_encoder.cache_clear()  # as a new process would: load the kept trace
    try:
        loaded = np.array(MiniLMEmbedder(model_cache_dir=tmp_path).embed(_TEXTS))
    finally:
        minilm_model.shared_encoder.cache_clear()
    assert np.allclose(traced, reference, atol=1e-5)
    assert np.allclose(loaded, reference, atol=1e-5)


@pytest.mark.models
def test_a_damaged_kept_trace_is_traced_again(tmp_path: Path) -> None:
    from knotwork.infra.embeddings import minilm_model

    MiniLMEmbedder(model_cache_dir=tmp_path).embed(["warm"])
    (kept,) = tmp_path.glob("minilm-*.pt")
    kept.write_bytes(b"not a torchscript archive")
    minilm_model.shared_encoder.cache_clear()
    try:
        got = np.array(MiniLMEmbedder(model_cache_dir=tmp_path).embed(_TEXTS[:2]))
    finally:
        minilm_model.shared_encoder.cache_clear()
    assert np.allclose(got, _reference(_TEXTS[:2]), atol=1e-5)
    assert kept.stat().st_size > 1_000_000  # written again, whole
