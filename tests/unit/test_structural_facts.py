"""A directory's records are not walked: they tie a company to every member."""

from __future__ import annotations

from datetime import UTC, datetime

from knotwork.domain.models import Fact, FactHit, RelationType
from knotwork.ingestion.extraction.workspace import ROSTER_METHOD
from knotwork.retrieval.structural import not_through, structural_methods

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def _hit(fid: str, source: str, target: str, hop: int, method: str = "rule") -> FactHit:
    fact = Fact(id=fid, group_id="g", source_id=source, target_id=target, type=RelationType.WORKS_AT,
                fact=fid, created_at=NOW, extraction_method=method)
    return FactHit(fact=fact, hop=hop)


def test_facts_reached_only_through_a_record_are_left_out() -> None:
    hits = [
        _hit("roster", "ondrej", "bluefin", 0, ROSTER_METHOD),  # Bluefin Labs seeds the walk
        _hit("pricing", "bluefin", "pricing-engine", 0),
        _hit("ondrej-team", "ondrej", "harbor", 1),  # reached only through the record
        _hit("engine-team", "pricing-engine", "harbor", 1),  # reached through a sentence
    ]
    kept = [h.fact.id for h in not_through(hits, ["bluefin"], structural_methods(set()))]
    assert kept == ["pricing", "engine-team"]


def test_a_question_about_employers_keeps_the_records() -> None:
    assert structural_methods({RelationType.WORKS_AT}) == frozenset()
    hits = [_hit("roster", "ondrej", "bluefin", 0, ROSTER_METHOD)]
    assert not_through(hits, ["bluefin"], structural_methods({RelationType.WORKS_AT})) == hits
