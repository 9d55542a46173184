"""Per-layer hybrid search as typed config with named presets (design docs 000 / 002 / 004).

A :class:`SearchConfig` holds one optional :class:`LayerConfig` per layer (facts, entities,
chunks, communities). Each layer gathers candidates with its ``methods`` (BM25 over the
candidate texts, dense cosine in the vector store, graph BFS from origin entities) and orders
them with its ``reranker``. Preset names follow Graphiti's (doc 002).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Method(StrEnum):
    BM25 = "bm25"
    COSINE = "cosine"
    BFS = "bfs"


class Reranker(StrEnum):
    RRF = "rrf"
    MMR = "mmr"
    NODE_DISTANCE = "node_distance"  # needs a center entity
    EPISODE_MENTIONS = "episode_mentions"
    ENTITY_SCORE = "entity_score"  # doc 004: semantic + recency decay + salience (entities)
    CROSS_ENCODER = "cross_encoder"  # the configured LLM judges relevance; RRF without one


class LayerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    methods: tuple[Method, ...] = (Method.BM25, Method.COSINE)
    reranker: Reranker = Reranker.RRF
    limit: int = Field(default=10, ge=1, le=1000)
    candidates: int = Field(default=50, ge=1, le=5000)  # per method, before reranking
    bfs_depth: int = Field(default=2, ge=1, le=3)
    sim_min_score: float = Field(default=0.0, ge=-1.0, le=1.0)  # dense hits below: dropped
    rrf_k: float = Field(default=60.0, ge=0.0)  # doc 004: 60; Graphiti: 1
    mmr_lambda: float = Field(default=0.5, ge=0.0, le=1.0)
    min_score: float = -2.0  # reranked scores below: dropped (MMR / RRF)
    # doc 004 scoring (ENTITY_SCORE)
    semantic_weight: float = 0.3
    time_weight: float = 0.3
    salience_weight: float = 0.4
    decay_per_day: float = Field(default=0.02, ge=0.0)


class SearchConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    facts: LayerConfig | None = LayerConfig()
    entities: LayerConfig | None = LayerConfig()
    chunks: LayerConfig | None = None
    communities: LayerConfig | None = None
    as_of: datetime | None = None  # facts valid at that time
    include_invalid: bool = False  # also invalidated facts (ignored with as_of)


_HYBRID = (Method.BM25, Method.COSINE)
_ALL = (Method.BM25, Method.COSINE, Method.BFS)

SEARCH_PRESETS: dict[str, SearchConfig] = {
    "combined_hybrid_rrf": SearchConfig(
        facts=LayerConfig(methods=_ALL), entities=LayerConfig(methods=_ALL),
        chunks=LayerConfig(methods=_ALL), communities=LayerConfig(methods=_HYBRID)),
    "combined_hybrid_mmr": SearchConfig(
        facts=LayerConfig(methods=_ALL, reranker=Reranker.MMR, mmr_lambda=1.0),
        entities=LayerConfig(methods=_ALL, reranker=Reranker.MMR, mmr_lambda=1.0),
        chunks=LayerConfig(methods=_ALL, reranker=Reranker.MMR, mmr_lambda=1.0),
        communities=LayerConfig(methods=_HYBRID, reranker=Reranker.MMR, mmr_lambda=1.0)),
    "combined_hybrid_cross_encoder": SearchConfig(
        facts=LayerConfig(methods=_ALL, reranker=Reranker.CROSS_ENCODER),
        entities=LayerConfig(methods=_ALL, reranker=Reranker.CROSS_ENCODER),
        chunks=LayerConfig(methods=_HYBRID, reranker=Reranker.CROSS_ENCODER)),
    "edge_hybrid_rrf": SearchConfig(facts=LayerConfig(methods=_HYBRID, rrf_k=1.0), entities=None),
    "edge_hybrid_node_distance": SearchConfig(
        facts=LayerConfig(methods=_ALL, reranker=Reranker.NODE_DISTANCE), entities=None),
    "edge_hybrid_episode_mentions": SearchConfig(
        facts=LayerConfig(methods=_HYBRID, reranker=Reranker.EPISODE_MENTIONS), entities=None),
    "node_hybrid_rrf": SearchConfig(facts=None, entities=LayerConfig(methods=_HYBRID, rrf_k=1.0)),
    "node_hybrid_mmr": SearchConfig(facts=None, entities=LayerConfig(reranker=Reranker.MMR)),
    "node_hybrid_node_distance": SearchConfig(
        facts=None, entities=LayerConfig(methods=_ALL, reranker=Reranker.NODE_DISTANCE)),
    "node_hybrid_episode_mentions": SearchConfig(
        facts=None, entities=LayerConfig(reranker=Reranker.EPISODE_MENTIONS)),
    "node_scored": SearchConfig(facts=None, entities=LayerConfig(reranker=Reranker.ENTITY_SCORE)),
    "chunk_hybrid_rrf": SearchConfig(facts=None, entities=None, chunks=LayerConfig(methods=_ALL)),
    "community_hybrid_mmr": SearchConfig(facts=None, entities=None,
                                         communities=LayerConfig(reranker=Reranker.MMR)),
}


def preset(name: str) -> SearchConfig:
    try:
        return SEARCH_PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown search preset {name!r} (known: {', '.join(sorted(SEARCH_PRESETS))})") from None
