"""Blocking keys: the cache of the default rules' keys."""

from __future__ import annotations

from knotwork.domain.models import EntityType
from knotwork.resolution.blocking import DEFAULT_RULES, name_keys


def test_kept_keys_of_the_default_rules_match_a_fresh_computation() -> None:
    fresh_rules = [r.model_copy() for r in DEFAULT_RULES]  # not the default objects: no cache
    for name, etype in [("Dr. Robert Smith", EntityType.PERSON), ("Payments Team", None),
                        ("Kafka", EntityType.TECHNOLOGY)]:
        kept = name_keys(name, etype, DEFAULT_RULES)
        assert kept == name_keys(name, etype, fresh_rules)
        kept.append("x:mutated")  # a caller's change never reaches the kept keys
        assert "x:mutated" not in name_keys(name, etype, DEFAULT_RULES)
