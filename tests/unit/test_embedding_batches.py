"""Model batches of similar length (``length_batches``): padded word pieces stay close to the
real ones, every text is embedded once, and the vectors are the model's own."""

from __future__ import annotations

import random

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


@pytest.mark.models
def test_vectors_equal_the_models_own_encode() -> None:
    """Regrouping only changes padding: each vector is what ``encode`` gives the text alone."""
    emb = MiniLMEmbedder()
    texts = ["Priya Raman (person). Priya Raman leads Project Atlas.", "Kafka",
             "The Billing Service depends on PostgreSQL. " * 12, "Berlin (location).",
             "Ana joined the Payments Team in May 2023. She reports to Omar Haddad."]
    got = emb.embed(texts)
    model = emb._load()
    for text, vector in zip(texts, got, strict=True):
        alone = model.encode([text], normalize_embeddings=True, convert_to_numpy=True)[0]
        assert np.allclose(vector, alone, atol=1e-5)
