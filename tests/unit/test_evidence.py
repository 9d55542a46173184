"""A fact's confidence and validity follow its current evidence; merges fold parallel facts
(issue 18). Pure functions, no stores."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from knotwork.domain.evidence import EVIDENCE_BOOST, aligned_confidences, evidence_confidence
from knotwork.domain.models import EntityType, Fact, RelationType
from knotwork.ingestion.extraction.mentions import known_mentions
from knotwork.ingestion.extraction.types import KnownName
from knotwork.ingestion.facts import contradictions, fact_id, merge_into
from knotwork.resolution.parallel_facts import collapse, unabsorbed

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def sighting(episode: str, confidence: float, when: datetime | None = None,
             src: str = "ana", tgt: str = "acme", fid: str | None = None) -> Fact:
    return Fact(id=fid or fact_id("g", src, tgt, RelationType.WORKS_AT, ""), group_id="g",
                source_id=src, target_id=tgt, type=RelationType.WORKS_AT,
                fact="Ana works at Acme.", confidence=confidence, episodes=[episode],
                episode_confidences=[confidence], episode_valid_at=[when], valid_at=when,
                created_at=NOW)


def test_confidence_is_the_best_sighting_plus_a_boost_per_further_one() -> None:
    assert evidence_confidence([0.7]) == 0.7
    assert evidence_confidence([0.6, 0.7, 0.5]) == 0.7 + 2 * EVIDENCE_BOOST
    assert evidence_confidence([0.99, 0.99, 0.99]) == 1.0


def test_merging_is_order_free_and_counts_an_episode_once() -> None:
    a, b, c = sighting("e1", 0.6), sighting("e2", 0.8), sighting("e3", 0.7)
    one = merge_into(merge_into(a, b), c)
    other = merge_into(merge_into(c, a), b)
    assert one.confidence == other.confidence == 0.8 + 2 * EVIDENCE_BOOST
    again = merge_into(one, sighting("e2", 0.5))
    assert again.confidence == one.confidence and again.episodes == one.episodes


def test_validity_is_the_earliest_start_of_the_current_evidence() -> None:
    early, late = datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 6, 1, tzinfo=UTC)
    merged = merge_into(sighting("e1", 0.7, late), sighting("e2", 0.7, early))
    assert merged.valid_at == early
    assert merged.episode_valid_at == [late, early]


def test_a_fact_without_evidence_is_redefined_by_its_new_sighting() -> None:
    stored = sighting("old", 0.9, datetime(2020, 1, 1, tzinfo=UTC)).model_copy(
        update={"episodes": [], "episode_confidences": [], "episode_valid_at": [],
                "fact": "Ana has worked at Acme since 2020."})
    new = sighting("new", 0.7, datetime(2024, 1, 1, tzinfo=UTC))
    merged = merge_into(stored, new)
    assert (merged.id, merged.fact, merged.confidence, merged.valid_at) == (
        stored.id, new.fact, 0.7, new.valid_at)


def test_legacy_facts_count_their_episodes_without_the_boosts() -> None:
    assert aligned_confidences(0.8, ["a", "b", "c"], []) == pytest.approx([0.7, 0.7, 0.7])


def test_a_contradiction_names_the_fact_that_ended_it() -> None:
    old = sighting("e1", 0.7, datetime(2023, 1, 1, tzinfo=UTC), tgt="acme")
    new = sighting("e2", 0.7, datetime(2024, 1, 1, tzinfo=UTC), tgt="globex")
    [ended] = contradictions(new, [old], NOW)
    assert ended.invalidated_by == new.id and ended.invalid_at == new.valid_at


def test_parallel_facts_fold_into_the_canonical_one_and_come_apart_again() -> None:
    canonical = sighting("e1", 0.7)  # the target's own fact: the id a fresh ingest gives
    moved = sighting("e2", 0.8, fid="moved-from-the-duplicate")
    other = sighting("e3", 0.7, tgt="globex")
    kept, absorbed = collapse([moved, canonical, other])
    assert absorbed == {canonical.id: [moved.id]}
    [survivor] = [f for f in kept if f.id == canonical.id]
    assert survivor.episodes == ["e1", "e2"] and survivor.confidence == 0.8 + EVIDENCE_BOOST
    later = merge_into(survivor, sighting("e4", 0.6))  # evidence added after the merge
    back = unabsorbed(canonical, later, moved.episodes)
    assert back.episodes == ["e1", "e4"] and back.confidence == 0.7 + EVIDENCE_BOOST


def test_a_known_name_does_not_take_the_sentence_full_stop() -> None:
    known = {"dev shah": KnownName("Dev Shah", EntityType.PERSON, None),
             "acme inc": KnownName("Acme Inc.", EntityType.ORGANIZATION, None)}
    found = known_mentions("Ben manages Dev Shah. He joined Acme Inc.", known)
    assert [m.text for m in found] == ["Dev Shah", "Acme Inc."]
