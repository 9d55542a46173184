"""Model-free hashing embedder: shape, norm, determinism, similarity ordering."""

from __future__ import annotations

import math

import pytest

from knotwork.infra.embeddings.hashing import HashingEmbedder


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("dim", [384, 64])
def test_dimension_and_unit_norm(dim: int) -> None:
    emb = HashingEmbedder(dim)
    assert emb.dimension == dim
    vectors = emb.embed(["Alice Chen leads Project Atlas.", "Kafka", "a much longer text " * 20])
    assert len(vectors) == 3
    for v in vectors:
        assert len(v) == dim
        assert math.sqrt(sum(x * x for x in v)) == pytest.approx(1.0)


def test_empty_text_is_the_zero_vector_not_nan() -> None:
    (v,) = HashingEmbedder(32).embed([""])
    assert v == [0.0] * 32


def test_deterministic_across_instances_and_calls() -> None:
    text = "The Billing Service depends on Kafka and PostgreSQL."
    a = HashingEmbedder().embed([text])[0]
    b = HashingEmbedder().embed([text, "other"])[0]
    assert a == b


def test_case_and_punctuation_do_not_matter() -> None:
    emb = HashingEmbedder()
    a, b = emb.embed(["Who leads Project Atlas?", "who leads project atlas"])
    assert _cos(a, b) == pytest.approx(1.0)


def test_similar_texts_are_closer_than_unrelated_ones() -> None:
    emb = HashingEmbedder()
    query, near, far = emb.embed([
        "Who leads Project Atlas?",
        "Dana Whitfield leads Project Atlas.",
        "The cafeteria serves lunch at noon.",
    ])
    assert _cos(query, near) > _cos(query, far) + 0.2
    assert _cos(query, near) > 0.3


def test_shared_character_trigrams_give_partial_similarity() -> None:
    emb = HashingEmbedder()
    base, inflected, other = emb.embed(["deployment", "deployments", "zebra"])
    assert _cos(base, inflected) > 0.5
    assert _cos(base, inflected) > _cos(base, other)
