"""Fact bookkeeping: identity, merging, contradiction of functional facts."""

from __future__ import annotations

from datetime import UTC, datetime

from knotwork.domain.models import Fact, RelationType
from knotwork.ingestion.facts import (
    contradictions,
    fact_id,
    fact_key,
    merge_into,
    same_fact,
    unique_by_id,
)

R = RelationType
NOW = datetime(2025, 7, 1, tzinfo=UTC)


def d(y: int, m: int = 1, day: int = 1) -> datetime:
    return datetime(y, m, day, tzinfo=UTC)


def fact(src: str, tgt: str, rtype: RelationType = R.WORKS_AT, text: str = "",
         episodes: tuple[str, ...] | None = None, valid_at: datetime | None = None,
         invalid_at: datetime | None = None, confidence: float = 0.8) -> Fact:
    text = text or f"{src} {rtype} {tgt}."
    episodes = episodes if episodes is not None else (f"ep-{src}-{tgt}",)
    return Fact(id=fact_id("g", src, tgt, rtype, text), group_id="g", source_id=src,
                target_id=tgt, type=rtype, fact=text, confidence=confidence,
                episodes=list(episodes), valid_at=valid_at, invalid_at=invalid_at,
                created_at=NOW)


def test_fact_key_ignores_case_and_punctuation() -> None:
    assert fact_key("Alice Chen works at Acme Corp.") == fact_key("alice chen works at  ACME corp")


def test_fact_id_is_stable_and_typed_facts_ignore_wording() -> None:
    a = fact_id("g", "alice", "acme", R.WORKS_AT, "Alice works at Acme.")
    b = fact_id("g", "alice", "acme", R.WORKS_AT, "Alice is employed by Acme.")
    assert a == b
    assert a != fact_id("g", "alice", "acme", R.MEMBER_OF, "Alice works at Acme.")
    assert a != fact_id("other", "alice", "acme", R.WORKS_AT, "Alice works at Acme.")
    assert a != fact_id("g", "acme", "alice", R.WORKS_AT, "Alice works at Acme.")


def test_related_to_ids_depend_on_the_sentence() -> None:
    a = fact_id("g", "x", "y", R.RELATED_TO, "X and Y were discussed.")
    assert a == fact_id("g", "x", "y", R.RELATED_TO, "x and y were discussed")
    assert a != fact_id("g", "x", "y", R.RELATED_TO, "X replaced Y.")


def test_same_fact() -> None:
    base = fact("alice", "acme", text="Alice works at Acme.")
    assert same_fact(base, fact("alice", "acme", text="Alice is employed by Acme.",
                                episodes=("ep2",)))
    assert not same_fact(base, fact("alice", "globex"))
    assert not same_fact(base, fact("acme", "alice"))
    assert not same_fact(base, fact("alice", "acme", R.MEMBER_OF))


def test_same_fact_related_to_compares_the_sentence() -> None:
    a = fact("x", "y", R.RELATED_TO, "X and Y were discussed.")
    assert same_fact(a, fact("x", "y", R.RELATED_TO, "x and y were DISCUSSED"))
    assert not same_fact(a, fact("x", "y", R.RELATED_TO, "X replaced Y."))


def test_merge_appends_new_episodes_without_duplicates() -> None:
    old = fact("alice", "acme", episodes=("ep1", "ep2"), confidence=0.7)
    merged = merge_into(old, fact("alice", "acme", episodes=("ep2", "ep3"), confidence=0.6))
    assert merged.episodes == ["ep1", "ep2", "ep3"]
    assert merged.id == old.id
    assert merged.fact == old.fact
    # one new episode: +0.05 on the better confidence
    assert abs(merged.confidence - 0.75) < 1e-9


def test_merge_of_an_already_seen_episode_changes_nothing_but_confidence_max() -> None:
    old = fact("alice", "acme", episodes=("ep1",), confidence=0.7)
    merged = merge_into(old, fact("alice", "acme", episodes=("ep1",), confidence=0.9))
    assert merged.episodes == ["ep1"]
    assert merged.confidence == 0.9


def test_merge_confidence_is_capped_at_one() -> None:
    old = fact("alice", "acme", episodes=("ep1",), confidence=0.98)
    merged = merge_into(old, fact("alice", "acme", episodes=("ep2", "ep3"), confidence=0.99))
    assert merged.confidence == 1.0


def test_merge_keeps_the_earliest_validity() -> None:
    old = fact("alice", "acme", valid_at=d(2024, 5))
    assert merge_into(old, fact("alice", "acme", valid_at=d(2023, 1))).valid_at == d(2023, 1)
    assert merge_into(old, fact("alice", "acme", valid_at=d(2025, 1))).valid_at == d(2024, 5)
    assert merge_into(old, fact("alice", "acme", valid_at=None)).valid_at == d(2024, 5)
    undated = fact("alice", "acme", valid_at=None)
    assert merge_into(undated, fact("alice", "acme", valid_at=d(2022))).valid_at == d(2022)


def test_works_at_is_functional_by_source() -> None:
    old = fact("alice", "acme", valid_at=d(2022))
    new = fact("alice", "globex", valid_at=d(2025, 2))
    ended = contradictions(new, [old], NOW)
    assert len(ended) == 1
    assert ended[0].id == old.id
    assert ended[0].invalid_at == d(2025, 2)
    assert ended[0].expired_at == NOW
    assert old.invalid_at is None  # the input is not mutated


def test_works_at_of_another_person_is_no_contradiction() -> None:
    old = fact("bob", "acme", valid_at=d(2022))
    assert contradictions(fact("alice", "globex", valid_at=d(2025)), [old], NOW) == []


def test_leads_is_not_functional() -> None:
    """A project can have a tech lead and a product lead at once; neither ends the other."""
    old = fact("dana", "atlas", R.LEADS, valid_at=d(2023))
    new = fact("priya", "atlas", R.LEADS, valid_at=d(2025))
    assert contradictions(new, [old], NOW) == []
    other = fact("dana", "orion", R.LEADS, valid_at=d(2025))
    assert contradictions(other, [old], NOW) == []


def test_an_already_ended_fact_supersedes_nothing() -> None:
    current = fact("alice", "globex", valid_at=d(2024, 3))
    ended = fact("alice", "acme", valid_at=None).model_copy(update={"invalid_at": d(2023)})
    assert contradictions(ended, [current], NOW) == []


def test_non_functional_relations_never_contradict() -> None:
    old = fact("billing", "kafka", R.DEPENDS_ON, valid_at=d(2023))
    assert contradictions(fact("billing", "redis", R.DEPENDS_ON, valid_at=d(2025)), [old],
                          NOW) == []
    old_member = fact("alice", "search", R.MEMBER_OF, valid_at=d(2023))
    assert contradictions(fact("alice", "data", R.MEMBER_OF, valid_at=d(2025)), [old_member],
                          NOW) == []


def test_other_relation_type_is_no_contradiction() -> None:
    old = fact("alice", "acme", R.MEMBER_OF, valid_at=d(2022))
    assert contradictions(fact("alice", "globex", R.WORKS_AT, valid_at=d(2025)), [old], NOW) == []


def test_older_news_does_not_end_a_newer_fact() -> None:
    newer = fact("alice", "globex", valid_at=d(2025, 3))
    older_news = fact("alice", "acme", valid_at=d(2021, 6))
    assert contradictions(older_news, [newer], NOW) == []


def test_undated_new_fact_ends_the_old_one_now() -> None:
    old = fact("alice", "acme", valid_at=d(2022))
    (ended,) = contradictions(fact("alice", "globex", valid_at=None), [old], NOW)
    assert ended.invalid_at == NOW


def test_already_ended_and_identical_facts_are_skipped() -> None:
    ended_before = fact("alice", "acme", valid_at=d(2020), invalid_at=d(2021))
    new = fact("alice", "globex", valid_at=d(2025))
    assert contradictions(new, [ended_before, new], NOW) == []


def test_unique_by_id_keeps_the_last_version() -> None:
    a1 = fact("alice", "acme", confidence=0.5)
    a2 = a1.model_copy(update={"confidence": 0.9})
    b = fact("bob", "acme")
    out = unique_by_id([a1, b, a2])
    assert len(out) == 2
    assert {f.id: f.confidence for f in out}[a1.id] == 0.9


def test_one_statement_naming_two_places_is_no_change() -> None:
    """"Headquartered in Austin, Texas" yields two facts from one episode: neither ends the other."""
    city = fact("acme", "austin", R.HEADQUARTERED_IN, episodes=("ep7",), valid_at=d(2025))
    state = fact("acme", "texas", R.HEADQUARTERED_IN, episodes=("ep7",), valid_at=d(2025))
    assert contradictions(state, [city], NOW) == []


def _teams(a: str, b: str) -> bool:
    return True  # every holder here is a team


def test_joining_a_team_ends_the_old_membership() -> None:
    old = fact("ravi", "search", R.MEMBER_OF, valid_at=d(2023))
    new = fact("ravi", "billing", R.MEMBER_OF, "Ravi joined the Billing squad in March.", valid_at=d(2025, 3))
    ended = contradictions(new, [old], NOW, _teams)
    assert [(f.target_id, f.invalid_at) for f in ended] == [("search", d(2025, 3))]


def test_switching_or_now_on_a_team_ends_the_old_membership() -> None:
    old = fact("ravi", "search", R.MEMBER_OF, valid_at=d(2023))
    for text in ("Ravi switched over to the Billing squad.", "Ravi is now on Billing."):
        new = fact("ravi", "billing", R.MEMBER_OF, text, valid_at=d(2025, 3))
        assert [f.target_id for f in contradictions(new, [old], NOW, _teams)] == ["search"]


def test_joining_language_does_not_hand_over_leadership() -> None:
    """"Mia joined as lead of Atlas" adds a lead; Tom's lead of Atlas does not end."""
    old = fact("tom", "atlas", R.LEADS, valid_at=d(2023))
    new = fact("mia", "atlas", R.LEADS, "Mia joined as a lead of Atlas.", valid_at=d(2025))
    assert contradictions(new, [old], NOW, _teams) == []


def test_a_second_membership_without_change_language_keeps_the_first() -> None:
    old = fact("ravi", "search", R.MEMBER_OF, valid_at=d(2023))
    new = fact("ravi", "guild", R.MEMBER_OF, "Ravi is also in the Frontend Guild.", valid_at=d(2025))
    assert contradictions(new, [old], NOW, _teams) == []
