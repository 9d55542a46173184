"""Attribute comparisons (splink style): serialisation, level assignment, weights, blocking."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from knotwork.domain.models import EntityType
from knotwork.resolution.attributes import (
    AttributeComparison,
    AttributeLevel,
    AttributeModel,
    Method,
    combine,
    compare,
    compare_all,
    fit_weights,
)
from knotwork.resolution.blocking import BlockingRule, blocking_keys
from knotwork.resolution.calibrate import evaluate, load_pairs, resolve_pairs
from knotwork.resolution.profile import ResolutionProfile, load_profile
from knotwork.resolution.resolver import DecisionKind, MemoryCandidates, Resolver
from knotwork.resolution.scoring import (
    CandidateRecord,
    MentionQuery,
    ResolutionConfig,
    score_candidate,
)

P = EntityType.PERSON
PAIRS = Path(__file__).resolve().parents[1] / "data" / "resolution_pairs.csv"
FEBRL_PROFILE = Path(__file__).resolve().parents[2] / "bench" / "resolution_febrl_model.json"

DOB = AttributeComparison(
    attribute="date_of_birth", method=Method.DAMERAU_LEVENSHTEIN, exact_weight=10.0,
    levels=(AttributeLevel(label="one edit", min_similarity=0.87, weight=5.0),
            AttributeLevel(label="two edits", min_similarity=0.75, weight=1.0)),
    conflict_weight=-5.0)
POSTCODE = AttributeComparison(attribute="postcode", exact_weight=8.0, conflict_weight=-4.0)
SUBURB = AttributeComparison(
    attribute="suburb", method=Method.JARO_WINKLER, exact_weight=6.0,
    levels=(AttributeLevel(label="fuzzy", min_similarity=0.9, weight=3.0),),
    conflict_weight=-3.0)
MODEL = AttributeModel(comparisons=(DOB, POSTCODE, SUBURB))
CONFIG = ResolutionConfig(attributes=MODEL)


def test_model_round_trips_json() -> None:
    text = MODEL.model_dump_json()
    assert AttributeModel.model_validate_json(text) == MODEL
    data = json.loads(CONFIG.model_dump_json())
    assert data["attributes"]["comparisons"][0]["levels"][0] == {
        "label": "one edit", "min_similarity": 0.87, "weight": 5.0}
    assert ResolutionConfig.model_validate(data) == CONFIG
    profile = ResolutionProfile(rules=(BlockingRule(family="attribute",
                                                    attributes=("postcode",)),),
                                attributes=MODEL)
    assert ResolutionProfile.model_validate_json(profile.model_dump_json()) == profile
    with pytest.raises(ValueError):
        AttributeComparison.model_validate({"attribute": "dob", "method": "soundex"})
    with pytest.raises(ValueError):
        AttributeModel.model_validate({"comparisons": [], "unknown": 1})


def test_the_febrl_profile_file_loads() -> None:
    profile = load_profile(FEBRL_PROFILE)
    assert {c.attribute for c in profile.attributes.comparisons} >= {
        "date_of_birth", "address_1", "postcode", "suburb", "state"}
    assert len(profile.blocking_rules()) > len(profile.rules)
    assert profile.config().attributes == profile.attributes


@pytest.mark.parametrize(("a", "b", "label", "weight"), [
    ("19560409", "19560409", "exact", 10.0),
    (" 19560409", "19560409 ", "exact", 10.0),  # normalised
    ("19560409", "19560490", "one edit", 5.0),  # a transposition is one edit
    ("19560409", "19560419", "one edit", 5.0),
    ("19560409", "19561419", "two edits", 1.0),
    ("19560409", "19831127", "conflict", -5.0),
    ("19560409", None, "missing", 0.0),
    ("", "19560409", "missing", 0.0),
])
def test_level_assignment(a: str | None, b: str | None, label: str, weight: float) -> None:
    result = compare(DOB, a, b)
    assert (result.label, result.weight) == (label, weight)


def test_exact_method_has_no_fuzzy_level_and_case_is_ignored() -> None:
    assert compare(POSTCODE, "2600", "2601").label == "conflict"
    assert compare(SUBURB, "Kingston", "KINGSTON").label == "exact"
    assert compare(SUBURB, "kingston", "kingstom").label == "fuzzy"
    assert compare(SUBURB, "kingston", None).weight == 0.0  # missing: neutral by default
    strict = SUBURB.model_copy(update={"missing_weight": -0.5})
    assert compare(strict, "kingston", None).weight == -0.5  # unless configured


def test_combine_is_neutral_without_evidence_and_moves_log_odds() -> None:
    assert combine(MODEL, 0.7, []) == 0.7
    assert combine(MODEL, 0.7, compare_all(MODEL, {}, {"postcode": "2600"})) == 0.7
    up = combine(MODEL, 0.5, [compare(POSTCODE, "2600", "2600")])
    assert up == pytest.approx(1 / (1 + 2 ** -8.0))
    down = combine(MODEL, 0.9, [compare(POSTCODE, "2600", "2913")])
    assert down == pytest.approx(1 / (1 + 2 ** -(math.log2(0.9 / 0.1) - 4.0)))
    # a perfect name is clamped by the floor, so a conflict can still pull it down
    assert combine(MODEL, 1.0, [compare(DOB, "19560409", "19831127"),
                                compare(POSTCODE, "2600", "2913")]) < 0.5


def _score(config: ResolutionConfig, mention: str, entity: str,
           q: dict[str, str], c: dict[str, str]) -> float:
    return score_candidate(config, MentionQuery(mention, P, properties=q),
                           CandidateRecord("e", entity, P, properties=c)).score


def test_attributes_decide_between_namesakes_and_rescue_typos() -> None:
    ours = {"date_of_birth": "19560409", "postcode": "2600", "suburb": "kingston"}
    other = {"date_of_birth": "19831127", "postcode": "2913", "suburb": "ngunnawal"}
    # the same name, another person: below the match threshold
    assert _score(CONFIG, "Robert Smith", "Robert Smith", ours, other) < CONFIG.match_threshold
    # a mangled name with agreeing attributes: a merge
    assert _score(CONFIG, "Rbert Smiht", "Robert Smith", ours, dict(ours)) >= \
        CONFIG.auto_threshold
    assert _score(ResolutionConfig(), "Rbert Smiht", "Robert Smith", ours, dict(ours)) < \
        CONFIG.match_threshold
    scored = score_candidate(CONFIG, MentionQuery("Robert Smith", P, properties=ours),
                             CandidateRecord("e", "Robert Smith", P, properties=other))
    assert scored.extra == {"date_of_birth:conflict": -5.0, "postcode:conflict": -4.0,
                            "suburb:conflict": -3.0}


def test_no_attributes_score_exactly_as_before() -> None:
    for mention, entity in [("Bob Smith", "Robert Smith"), ("Sam Carter", "Samir Carter"),
                            ("M. O'Neill", "Maggie O'Neill"), ("Payments", "Payments Team")]:
        plain = _score(ResolutionConfig(), mention, entity, {}, {})
        assert _score(CONFIG, mention, entity, {}, {}) == plain
        # attributes present on one side only are neutral too
        assert _score(CONFIG, mention, entity, {"postcode": "2600"}, {}) == plain
        assert _score(CONFIG, mention, entity, {"postcode": "2600"}, {"email": "x@y"}) == plain


def test_labelled_pairs_unchanged_with_attribute_comparisons() -> None:
    pairs = load_pairs(PAIRS)
    plain = evaluate(resolve_pairs(Resolver(), pairs))
    with_model = evaluate(resolve_pairs(Resolver(CONFIG), pairs))
    assert with_model == plain
    assert with_model.confusable_merges == 0


def test_fit_weights_from_labelled_pairs() -> None:
    same = [({"postcode": "2600", "suburb": "kingston"}, {"postcode": "2600", "suburb": "kingston"},
             True)] * 40 + [({"postcode": "2600", "suburb": "kingston"},
                             {"postcode": "2601", "suburb": "kingstom"}, True)] * 4
    diff = [({"postcode": str(2600 + i), "suburb": f"town{i}"},
             {"postcode": str(3000 + i), "suburb": f"city{i % 7}"}, False) for i in range(200)]
    model = MODEL.model_copy(update={"comparisons": (
        DOB, POSTCODE, SUBURB.model_copy(update={"missing_weight": -0.5}))})
    fitted = fit_weights(model, same + diff)
    by = {c.attribute: c for c in fitted.comparisons}
    assert by["postcode"].exact_weight > 4 and by["postcode"].conflict_weight < 0
    assert by["suburb"].exact_weight > by["suburb"].levels[0].weight > by["suburb"].conflict_weight
    assert by["date_of_birth"].missing_weight == 0.0  # never seen: missing stays neutral
    assert by["suburb"].missing_weight == -0.5  # as configured
    assert [lv.label for lv in by["date_of_birth"].levels] == ["one edit", "two edits"]


def test_attribute_blocking_rules() -> None:
    rule = BlockingRule(family="attribute", attributes=("postcode", "state"))
    prefix = BlockingRule(family="attribute", attributes=("address_1",), prefix=4)
    keys = blocking_keys(["Zed Quux"], P, (rule, prefix),
                         attributes={"postcode": "2600", "state": "ACT", "address_1": "Main st"})
    assert keys == ["a:postcode=2600|state=act", "a:address_1=main"]
    assert blocking_keys(["Zed Quux"], P, (rule,), attributes={"postcode": "2600"}) == []
    assert BlockingRule.model_validate_json(rule.model_dump_json()) == rule


def test_attribute_block_finds_a_record_the_names_miss() -> None:
    profile = ResolutionProfile(
        rules=(BlockingRule(family="attribute", attributes=("date_of_birth",)),),
        attributes=MODEL)
    resolver = Resolver(profile.config(), profile.blocking_rules())
    store = MemoryCandidates(resolver.rules)
    attrs = {"date_of_birth": "19560409", "postcode": "2600", "suburb": "kingston"}
    store.add(CandidateRecord("e1", "Katherine Wojcik", P, properties=attrs))
    store.add(CandidateRecord("e2", "Zed Quux", P, properties={"date_of_birth": "19700101"}))
    query = MentionQuery("Kathy Vojczik", P, properties=dict(attrs))
    decision = resolver.resolve(query, [store])
    assert decision.kind is not DecisionKind.NEW and decision.entity_id == "e1"
    plain = Resolver().resolve(MentionQuery("Kathy Vojczik", P), [store])
    assert plain.entity_id is None


def test_settings_profile_reaches_the_resolution_config(tmp_path: Path) -> None:
    from knotwork.resolution.ingest import entity_block_keys
    from knotwork.resolution.service import resolution_config
    from knotwork.settings import Settings

    profile = load_profile(FEBRL_PROFILE)
    config = resolution_config(Settings(data_dir=tmp_path, resolution_profile=FEBRL_PROFILE))
    assert config.attributes == profile.attributes
    assert config.blocking_rules == profile.rules
    assert resolution_config(Settings(data_dir=tmp_path)).attributes.comparisons == ()
    assert Resolver(config).rules == profile.blocking_rules()
    # stored blocking keys include the attribute keys only under such a config
    from datetime import UTC, datetime

    from knotwork.domain.models import Entity, PropertyValue

    now = datetime(2026, 1, 1, tzinfo=UTC)
    entity = Entity(id="e", group_id="g", name="Zed Quux", canonical_name="zed quux", type=P,
                    created_at=now, updated_at=now,
                    properties={"date_of_birth": [PropertyValue(value="19560409", source="x")]})
    assert "a:date_of_birth=19560409" in entity_block_keys(entity, config)
    assert not any(k.startswith("a:") for k in entity_block_keys(entity))


def test_name_levels_count_only_when_an_attribute_was_compared() -> None:
    levels = (AttributeLevel(label="similar", min_similarity=0.6, weight=0.0),
              AttributeLevel(label="different", min_similarity=0.0, weight=-6.0))
    model = AttributeModel(comparisons=(POSTCODE,), name_levels=levels)
    assert model == AttributeModel.model_validate_json(model.model_dump_json())
    compared = compare_all(model, {"postcode": "2600"}, {"postcode": "2600"}, 0.2)
    assert [(r.attribute, r.label, r.weight) for r in compared] == [
        ("postcode", "exact", 8.0), ("name", "different", -6.0)]
    assert compare_all(model, {"postcode": "2600"}, {"postcode": "2600"}, 0.9)[-1].label == \
        "similar"
    # nothing compared (missing on one side): no name level either, the score is unchanged
    assert [r.label for r in compare_all(model, {"postcode": "2600"}, {}, 0.2)] == ["missing"]
    config = ResolutionConfig(attributes=model)
    same = {"postcode": "2600"}
    # a shared postcode does not make two unrelated names one person ...
    assert _score(config, "Kylee Pennell", "Oliver Ryan", same, dict(same)) < \
        config.ambiguity_threshold
    # ... though without the name level it would
    loose = ResolutionConfig(attributes=AttributeModel(comparisons=(POSTCODE,)))
    assert _score(loose, "Kylee Pennell", "Oliver Ryan", same, dict(same)) >= \
        config.match_threshold
