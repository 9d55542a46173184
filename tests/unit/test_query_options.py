"""One QueryOptions object from the route to the engine (issue 20)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import get_type_hints

import pytest
from pydantic import ValidationError

from knotwork.domain.models import QueryMode
from knotwork.retrieval.options import QueryFields, QueryOptions, query_options
from knotwork.services.api.graphrag_routes import DriftRequest, GlobalRequest, LocalRequest
from knotwork.services.api.routes import QueryRequest


def test_the_keyword_fields_are_the_options_fields() -> None:
    assert set(get_type_hints(QueryFields)) == set(QueryOptions.model_fields)


def test_keyword_fields_go_on_top_of_the_options_and_are_validated() -> None:
    base = QueryOptions(mode=QueryMode.GLOBAL, community_level=1)
    when = datetime(2024, 8, 1, tzinfo=UTC)
    got = query_options(base, {"as_of": when, "mode": "LOCAL", "seed_entity_ids": ["a", "b"]})
    assert (got.mode, got.as_of, got.community_level, got.seed_entity_ids) == (
        QueryMode.LOCAL, when, 1, ("a", "b"))
    assert base.mode is QueryMode.GLOBAL  # frozen: the caller's options are not changed
    assert query_options(None, {}) == QueryOptions()
    with pytest.raises(ValidationError):
        query_options(None, {"mode": "sideways"})
    with pytest.raises(ValidationError):
        QueryOptions.model_validate({"max_hop": 2})  # a misspelt option is an error


def test_every_query_route_says_its_options_in_one_object() -> None:
    when = datetime(2025, 1, 2, tzinfo=UTC)
    q = QueryRequest(query="Who leads the Harbor Team?", mode="drift", as_of=when,
                     max_context_tokens=900, max_iterations=2, convergence_threshold=0.5)
    assert q.options() == QueryOptions(mode=QueryMode.DRIFT, as_of=when, max_context_tokens=900,
                                       max_iterations=2, convergence_threshold=0.5)
    local = LocalRequest(query="x?", seed_entity_ids=["e1", "e1", "e2"], max_hops=3)
    assert (local.options().mode, local.options().seed_entity_ids, local.options().max_hops) == (
        QueryMode.LOCAL, ("e1", "e2"), 3)
    glob = GlobalRequest(query="x?", community_level=2, top_k_communities=4).options()
    assert (glob.mode, glob.community_level, glob.top_k_communities) == (QueryMode.GLOBAL, 2, 4)
    drift = DriftRequest(query="x?", max_iterations=1).options()
    assert (drift.mode, drift.max_iterations, drift.convergence_threshold) == (
        QueryMode.DRIFT, 1, 0.9)
