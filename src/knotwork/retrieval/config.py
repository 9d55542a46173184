"""Search behaviour as typed config with named presets (no magic numbers in the code)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class LocalSearchConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    max_hops: int = 2
    seed_vector_limit: int = 8
    seed_min_score: float = 0.35
    fact_limit: int = 300
    fact_vector_limit: int = 20
    chunk_vector_limit: int = 12
    chunk_mention_limit: int = 12
    fact_chunk_facts: int = 16
    max_units_scored: int = 96
    weight_semantic: float = 0.55
    weight_lexical: float = 0.35
    bonus_seed_fact: float = 0.12
    bonus_near_fact: float = 0.05
    bonus_seed_named: float = 0.08
    bonus_direction: float = 0.1
    bonus_relation_type: float = 0.1
    bonus_exact_fact: float = 0.08
    bonus_recency: float = 0.06
    weight_context: float = 0.6
    penalty_heading: float = 0.15
    min_informative_terms: int = 5
    answer_units: int = 2
    answer_relative_cutoff: float = 0.9
    citations: int = 3
    min_answer_score: float = 0.25


PRESETS: dict[str, LocalSearchConfig] = {
    "default": LocalSearchConfig(),
    "precise": LocalSearchConfig(answer_units=1, min_answer_score=0.35),
    "broad": LocalSearchConfig(max_hops=3, fact_limit=600, chunk_vector_limit=24, answer_units=3),
}
