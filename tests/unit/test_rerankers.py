"""Rerankers (design docs 000 / 004) and the search config presets."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from knotwork.retrieval import rerankers as rr
from knotwork.retrieval.search_config import SEARCH_PRESETS, LayerConfig, Reranker, preset


def test_rrf_rank_constant_changes_the_fusion() -> None:
    lists = [["a", "b", "c"], ["c", "b"], ["c"]]
    k60 = rr.rrf(lists, k=60)
    assert [i for i, _ in k60] == ["c", "b", "a"]
    assert k60[0][1] == pytest.approx(1 / 63 + 1 / 61 + 1 / 61)
    # with k=1 a single first place outweighs two fourth places; with k=60 it does not
    two = [["a", "p", "q", "b"], ["x", "y", "z", "b"]]
    assert rr.rrf(two, k=1)[0][0] == "a"
    assert rr.rrf(two, k=60)[0][0] == "b"
    assert [i for i, _ in rr.rrf(lists, k=60, min_score=0.04)] == ["c"]
    with pytest.raises(ValueError, match="rank constant"):
        rr.rrf(lists, k=-1)


def _unit(v: list[float]) -> list[float]:
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def test_mmr_trades_relevance_for_diversity() -> None:
    q = _unit([1.0, 0.0, 0.0])
    near = _unit([0.95, 0.3, 0.0])
    twin = _unit([0.95, 0.31, 0.0])
    other = _unit([0.6, 0.0, 0.8])
    cands = [("near", near), ("twin", twin), ("other", other)]
    assert [i for i, _ in rr.mmr(q, cands, lambda_=1.0)] == ["near", "twin", "other"]
    diverse = [i for i, _ in rr.mmr(q, cands, lambda_=0.5)]
    assert diverse[:2] == ["near", "other"]
    assert [i for i, _ in rr.mmr(q, cands, lambda_=1.0, min_score=0.7)] == ["near", "twin"]
    assert len(rr.mmr(q, cands, lambda_=0.5, limit=1)) == 1
    with pytest.raises(ValueError):
        rr.mmr(q, cands, lambda_=1.5)


def test_node_distance_and_episode_mentions() -> None:
    ranked = rr.node_distance(["far", "unreached", "center", "near"], {"far": 3, "center": 0, "near": 1})
    assert [i for i, _ in ranked] == ["center", "near", "far", "unreached"]
    assert ranked[-1][1] == 0.0
    assert [i for i, _ in rr.episode_mentions(["a", "b", "c"], {"b": 5, "c": 2})] == ["b", "c", "a"]


def test_entity_scoring_follows_doc_004() -> None:
    now = datetime(2025, 6, 1, tzinfo=UTC)
    assert rr.recency(now - timedelta(days=35), now, 0.02) == pytest.approx(math.exp(-0.7))
    assert rr.recency(None, now, 0.02) == 0.0
    cands = [("old_central", 0.5, now - timedelta(days=365), 1.0),
             ("fresh_peripheral", 0.5, now, 0.0),
             ("similar", 0.95, now - timedelta(days=70), 0.2)]
    scores = dict(rr.entity_scores(cands, now))
    assert scores["fresh_peripheral"] == pytest.approx(0.3 * 0.5 + 0.3 * 1.0)
    assert scores["old_central"] == pytest.approx(0.15 + 0.3 * math.exp(-7.3) + 0.4)
    only_semantic = rr.entity_scores(cands, now, rr.EntityScoring(1.0, 0.0, 0.0))
    assert only_semantic[0][0] == "similar"
    sal = rr.salience({"hub": 20, "leaf": 1, "alone": 0})
    assert sal["hub"] == 1.0 and 0 < sal["leaf"] < 1 and sal["alone"] == 0.0


def test_presets_are_typed_and_validated() -> None:
    assert preset("edge_hybrid_node_distance").facts.reranker is Reranker.NODE_DISTANCE  # type: ignore[union-attr]
    assert SEARCH_PRESETS["edge_hybrid_rrf"].facts.rrf_k == 1.0  # type: ignore[union-attr]
    assert LayerConfig().rrf_k == 60.0
    with pytest.raises(ValueError, match="unknown search preset"):
        preset("nope")
    with pytest.raises(ValidationError):
        LayerConfig(bfs_depth=4)
    with pytest.raises(ValidationError):
        LayerConfig(mmr_lambda=2.0)
