"""The resolver: names, blocking limits, scoring, decisions, calibration, batch resolution."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from knotwork.domain.models import Entity, EntityType, Episode
from knotwork.ingestion.extraction.types import ChunkExtraction, LocalEntity, Mention
from knotwork.ingestion.graph_builder import BatchBuilder
from knotwork.resolution.blocking import (
    DEFAULT_RULES,
    BlockingRule,
    InMemoryBlockingIndex,
    blocking_keys,
)
from knotwork.resolution.calibrate import calibrate, evaluate, load_pairs, resolve_pairs
from knotwork.resolution.ingest import BatchResolution, record_of
from knotwork.resolution.names import given_similarity, parse_person, person_similarity
from knotwork.resolution.normalize import normalize_name
from knotwork.resolution.resolver import DecisionKind, MemoryCandidates, Resolver
from knotwork.resolution.scoring import CandidateRecord, MentionQuery, ResolutionConfig

PAIRS = Path(__file__).resolve().parents[1] / "data" / "resolution_pairs.csv"
P = EntityType.PERSON


def store_of(*names: str, etype: EntityType = P) -> MemoryCandidates:
    store = MemoryCandidates()
    for i, name in enumerate(names):
        store.add(CandidateRecord(id=f"e{i}", name=name, type=etype))
    return store


# --------------------------------------------------------------------------- labelled pairs


def test_labelled_pairs_f1_and_no_confusable_merges() -> None:
    pairs = load_pairs(PAIRS)
    categories = {p.category for p in pairs}
    assert {"nickname", "initials", "handle", "typo", "confusable", "last_first"} <= categories
    outcomes = resolve_pairs(Resolver(), pairs)
    m = evaluate(outcomes)
    assert m.f1 >= 0.95, m
    assert m.confusable_merges == 0
    merged_confusables = [o.pair for o in outcomes if o.merged and o.pair.category == "confusable"]
    assert merged_confusables == []


@pytest.mark.parametrize(("a", "b"), [("Sam", "Samir"), ("Dan", "Dani"), ("Maria", "Mario"),
                                      ("Alexander", "Alexandra"), ("Eric", "Erica"),
                                      ("Ana", "Anna"), ("Robert", "Roberta")])
def test_identity_bearing_given_names_never_merge(a: str, b: str) -> None:
    assert given_similarity(normalize_name(a), normalize_name(b)) is None
    store = store_of(f"{b} Carter")
    decision = Resolver().resolve(MentionQuery(f"{a} Carter", P), [store])
    assert decision.kind is DecisionKind.NEW
    assert decision.scored and decision.scored[0].entity_id == "e0"  # blocking found it


def test_even_a_perfect_context_cannot_merge_an_identity_conflict() -> None:
    vec = np.ones(8, dtype=np.float32) / np.sqrt(8)
    store = MemoryCandidates()
    store.add(CandidateRecord(id="samir", name="Samir Haddad", type=P, embedding=vec))
    decision = Resolver().resolve(MentionQuery("Sam Haddad", P, embedding=vec), [store])
    assert decision.kind is DecisionKind.NEW


@pytest.mark.parametrize(("mention", "known"), [("Routing Team", "Routing Platform Team"),
                                                ("Ads Core Team", "Ads Team"),
                                                ("Payments API Team", "Payments Team")])
def test_a_sibling_team_with_another_qualifier_never_merges(mention: str, known: str) -> None:
    vec = np.ones(8, dtype=np.float32) / np.sqrt(8)  # even in the very same context
    store = MemoryCandidates()
    store.add(CandidateRecord(id="t", name=known, type=EntityType.ORGANIZATION, embedding=vec))
    decision = Resolver().resolve(MentionQuery(mention, EntityType.ORGANIZATION, embedding=vec), [store])
    assert decision.kind is DecisionKind.NEW
    # the same team written another way still merges
    same = Resolver().resolve(MentionQuery(f"the {known.replace('Team', 'team')}",
                                           EntityType.ORGANIZATION, embedding=vec), [store])
    assert same.kind is not DecisionKind.NEW


def test_name_forms() -> None:
    assert parse_person("Smith, Robert").tokens == ("robert", "smith")
    assert parse_person("@m.oneill").tokens == ("m", "oneill")
    assert parse_person("@msmith").handle == "msmith"
    assert parse_person("Søren Kierkegaard").tokens == ("soren", "kierkegaard")
    full = parse_person("Margaret O'Neill")
    assert person_similarity(parse_person("Maggie O'Neill"), full) > 0.95
    assert person_similarity(parse_person("M. O'Neill"), full) > 0.9
    assert person_similarity(parse_person("@moneill"), full) > 0.9
    assert person_similarity(parse_person("Margaret Oneil"), full) > 0.9  # typo
    assert person_similarity(parse_person("Priya Shah"), parse_person("Priya Sharma")) < 0.8


# --------------------------------------------------------------------------- blocking


def test_blocking_limits_per_key_and_total() -> None:
    index = InMemoryBlockingIndex(per_key=100, total=500)
    for i in range(10_000):
        index.add(i, ["t:smith", f"n:person {i}"])
    found, read = index.lookup(["t:smith"])
    assert len(found) == 100 and read == 100
    keys = [f"n:person {i}" for i in range(600)] + ["t:smith"]
    found, read = index.lookup(keys)
    assert len(found) == 500 and read <= 600
    index.remove(9_999, ["t:smith"])
    assert 9_999 not in index.lookup(["t:smith"])[0]


def test_keys_cover_nicknames_initials_handles_and_lsh() -> None:
    keys = blocking_keys(["Maggie O'Neill"], P, embedding=np.ones(16))
    assert {"nk:margaret oneill", "is:m oneill", "h:moneill"} <= set(keys)
    assert sum(k.startswith("l") and k[1].isdigit() for k in keys) == 4
    assert "nk:margaret oneill" in blocking_keys(["Margaret O'Neill"], P)
    assert "h:moneill" in blocking_keys(["@moneill"], P)
    assert keys.index("nk:margaret oneill") < keys.index("p:magg")  # selective first


def test_rules_and_config_are_serialisable_data() -> None:
    rules = [BlockingRule.model_validate(r.model_dump()) for r in DEFAULT_RULES]
    assert rules == list(DEFAULT_RULES)
    only_prefix = [BlockingRule(family="prefix", length=3)]
    assert blocking_keys(["Robert Smith"], P, only_prefix) == ["p:rob"]
    config = ResolutionConfig.model_validate_json(ResolutionConfig(match_threshold=0.9).model_dump_json())
    assert config.match_threshold == 0.9 and config.name_levels[0].label == "exact"


# --------------------------------------------------------------------------- decisions


def test_decisions_auto_flagged_tie_and_new() -> None:
    r = Resolver()
    assert r.resolve(MentionQuery("Robert Smith", P), [store_of("Robert Smith")]).kind \
        is DecisionKind.AUTO_MERGE
    flagged = r.resolve(MentionQuery("Bob Smith", P), [store_of("Robert Smith", "Robert Smyth")])
    assert flagged.kind is DecisionKind.MERGE_FLAGGED and flagged.entity_id == "e0"
    assert flagged.scored[1].score >= r.config.ambiguity_threshold
    tie = r.resolve(MentionQuery("Alex Novak", P), [store_of("Alexander Novak", "Alexandra Novak")])
    assert tie.kind is DecisionKind.NEW and tie.flagged
    assert r.resolve(MentionQuery("Zebulon Quarterhorse", P), [store_of("Robert Smith")]).kind \
        is DecisionKind.NEW
    # a person never merges into a same-named product
    assert r.resolve(MentionQuery("Atlas", P), [store_of("Atlas", etype=EntityType.PRODUCT)]).kind \
        is DecisionKind.NEW


def test_thresholds_are_settings() -> None:
    strict = Resolver(ResolutionConfig(match_threshold=0.99, auto_threshold=0.995))
    assert strict.resolve(MentionQuery("Bob Smith", P), [store_of("Robert Smith")]).kind \
        is DecisionKind.NEW
    loose = Resolver(ResolutionConfig(match_threshold=0.6))
    assert loose.resolve(MentionQuery("Robert Stone", P), [store_of("Robert Smith")]).kind \
        is not DecisionKind.NEW


def test_calibration_fits_a_threshold_between_the_classes() -> None:
    outcomes = resolve_pairs(Resolver(), load_pairs(PAIRS))
    fitted = calibrate(outcomes, ResolutionConfig())
    negatives = max(o.score for o in outcomes if not o.pair.same)
    assert negatives < fitted.match_threshold <= fitted.auto_threshold
    assert fitted.at_operating_point.precision == 1.0
    assert fitted.ambiguity_threshold < fitted.match_threshold


def test_bad_pair_files_are_rejected(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("mention,entity,type,same\nBob,Robert,ALIEN,1\n")
    with pytest.raises(ValueError, match="unknown entity type"):
        load_pairs(bad)
    bad.write_text("mention,entity\nBob,Robert\n")
    with pytest.raises(ValueError, match="missing column"):
        load_pairs(bad)


# --------------------------------------------------------------------------- ingestion


class RecordingIndex:
    def __init__(self, stored: list[Entity]) -> None:
        self.stored = stored
        self.looked_up: list[str] = []
        self.recorded: list[BatchResolution] = []

    @property
    def config(self) -> ResolutionConfig:
        return ResolutionConfig()

    def lookup(self, keys: Sequence[str]) -> list[Entity]:
        self.looked_up += keys
        wanted = set(keys)
        return [e for e in self.stored
                if wanted & set(blocking_keys([e.name, *e.aliases], e.type))]

    def lookup_many(self, key_lists: Sequence[Sequence[str]]) -> list[Entity]:
        return self.lookup([k for keys in key_lists for k in keys])

    def record(self, entities: Iterable[Entity], resolution: BatchResolution) -> None:
        self.recorded.append(resolution)


def _entity(name: str) -> Entity:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return Entity(id=name.lower().replace(" ", "-"), group_id="g", name=name,
                  canonical_name=normalize_name(name), type=P, name_keys=[normalize_name(name)],
                  created_at=now, updated_at=now)


def test_batch_builder_resolves_through_blocking_and_flags_for_review() -> None:
    index = RecordingIndex([_entity("Robert Smith"), _entity("Robert Smyth")])
    episode = Episode(id="ep1", group_id="g", name="ep", content="...", document_id="d",
                      valid_at=datetime(2026, 2, 1, tzinfo=UTC),
                      created_at=datetime(2026, 2, 1, tzinfo=UTC))
    bob = LocalEntity("Bob Smith", "bob smith", P, None, 0.85,
                      [Mention(0, 9, "Bob Smith", P, 0.85, "spacy")])
    result = BatchBuilder("g", datetime(2026, 2, 1, tzinfo=UTC), lambda keys: [],
                          lambda ids: [], index=index).build([(episode, ChunkExtraction([bob], []))])
    assert "nk:robert smith" in index.looked_up  # found by blocking, not by exact name
    assert list(result.entities) == ["robert-smith"]
    assert "Bob Smith" in result.entities["robert-smith"].aliases
    [resolution] = index.recorded
    [review] = resolution.reviews
    assert review.decision == "merge_flagged" and review.alias_added == "Bob Smith"
    assert [c.entity_id for c in review.candidates] == ["robert-smith", "robert-smyth"]
    assert [a.action for a in resolution.audits] == ["resolution.merge_flagged"]


def test_record_of_keeps_names() -> None:
    rec = record_of(_entity("Robert Smith").model_copy(update={"aliases": ["Bob"]}))
    assert rec.names == ("Robert Smith", "Bob")


def test_identifiers_decide_when_present() -> None:
    store = MemoryCandidates()
    store.add(CandidateRecord(id="sam", name="Samir Haddad", type=P,
                              properties={"email": "samir@example.com"}))
    store.add(CandidateRecord(id="rob", name="Robert Smith", type=P,
                              properties={"email": "rsmith@example.com"}))
    r = Resolver()
    # the same email: one person, whatever the spelling of the name
    same = r.resolve(MentionQuery("S. Haddad-Khan", P, properties={"email": "SAMIR@example.com"}),
                     [store])
    assert same.entity_id == "sam" and same.best is not None and same.best.name_level == "identifier"
    # two emails: two people, however alike the names
    other = r.resolve(MentionQuery("Robert Smith", P, properties={"email": "bob@other.org"}), [store])
    assert other.kind is DecisionKind.NEW


def test_double_metaphone_keys_block_spelling_variants_together() -> None:
    from knotwork.resolution.blocking import DEFAULT_RULES, name_keys

    def codes(name: str) -> set[str]:
        return {k for k in name_keys(name, EntityType.PERSON, DEFAULT_RULES) if k.startswith("mp:")}

    assert codes("Katherine Schmidt") & codes("Catherine Schmitt")
    assert len(codes("Schmidt")) == 2  # primary and alternate code
    assert not codes("Katherine Schmidt") & codes("Priya Raman")


def test_a_nickname_never_bridges_two_different_people() -> None:
    from knotwork.resolution.scoring import (
        CandidateRecord,
        MentionQuery,
        ResolutionConfig,
        score_candidate,
    )

    config = ResolutionConfig()
    sasha = CandidateRecord(id="e1", name="Sasha Zimmerman", type=EntityType.PERSON,
                            aliases=("Alexandra Zimmerman",))
    other = score_candidate(config, MentionQuery("Alexander Zimmerman", EntityType.PERSON), sasha)
    assert other.score < config.ambiguity_threshold and other.name_level == "conflicting name"
    same = score_candidate(config, MentionQuery("Alexandra Zimmerman", EntityType.PERSON), sasha)
    assert same.score >= config.match_threshold
