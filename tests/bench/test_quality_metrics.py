"""bench.quality_metrics on hand-made cases whose scores are computed by hand."""

from __future__ import annotations

from bench.quality_metrics import (
    GoldRelation,
    GraphEntity,
    GraphFact,
    any_in,
    assign_mentions,
    entity_scores,
    form_pair_scores,
    judge,
    normalize,
    pairwise_scores,
    relation_scores,
)

GOLD_FORMS = {"p1": ["Sam Patel", "Sam"], "p2": ["Samir Patel"],
              "t1": ["Payments Team", "payments team"]}
KINDS = {"p1": "person", "p2": "person", "t1": "team"}
GRAPH = [GraphEntity("G1", "Sam Patel", "PERSON", ["Sam"]),
         GraphEntity("G2", "Samir Patel", "PERSON"),
         GraphEntity("G3", "Payments", "ORGANIZATION"),
         GraphEntity("G4", "Kafka", "TECHNOLOGY")]


def test_normalize_and_whole_word_matching() -> None:
    assert normalize("The Payments Team's") == "payments team"
    assert normalize("billing-service") == "billing service"
    assert any_in("Ask Samir Patel.", ["Samir Patel"])
    assert not any_in("Ask Samir Patel.", ["Sam Patel"])
    assert not any_in("There are 13 people", ["3"])


def test_entity_precision_recall() -> None:
    s = entity_scores(GOLD_FORMS, KINDS, GRAPH)
    assert (s.matched_graph, s.graph_total, s.found_gold, s.gold_total) == (2, 4, 2, 3)
    assert s.precision == 0.5
    assert s.recall == 0.6667
    assert s.recall_by_kind == {"person": 1.0, "team": 0.0}
    assert s.gold_to_graph == {"p1": {"G1"}, "p2": {"G2"}}


def test_relation_recall_typed_untyped_and_invalidation() -> None:
    mapping = {"p1": {"G1"}, "p2": {"G2"}}
    gold = [GoldRelation("r1", "REPORTS_TO", "p1", "p2"),
            GoldRelation("r2", "MEMBER_OF", "p1", "t1"),
            GoldRelation("r3", "LEADS", "p2", "p1", valid_to="2024-01-01"),
            GoldRelation("r4", "LEADS", "p1", "p2", valid_to="2024-02-01")]
    facts = [GraphFact("G2", "G1", "MANAGES"),  # r1 typed through the inverse type
             GraphFact("G1", "G2", "RELATED_TO"),  # r3 untyped only
             GraphFact("G1", "G2", "LEADS", invalid_at="2024-02-01")]  # r4 typed, ended
    s = relation_scores(gold, mapping, facts)
    assert s.evaluated == 4
    assert s.typed_recall == 0.5  # r1, r4
    assert s.untyped_recall == 0.75  # r1, r3, r4
    assert s.typed_by_type == {"LEADS": 0.5, "MEMBER_OF": 0.0, "REPORTS_TO": 1.0}
    assert s.ended_invalidated == 1.0  # r4 is the only ended relation found typed


def test_pairwise_resolution_scores() -> None:
    # gold a: three mentions (two resolved to X, one to Y); gold b: two mentions, both Y
    s = pairwise_scores([("a", "X"), ("a", "X"), ("a", "Y"), ("b", "Y"), ("b", "Y")])
    # true pairs: (a,X)x1 + (b,Y)x1 = 2; predicted pairs: X 1 + Y 3 = 4; gold pairs: 3 + 1
    assert (s.precision, s.recall, s.f1, s.mentions) == (0.5, 0.5, 0.5, 5)
    perfect = pairwise_scores([("a", "X"), ("a", "X"), ("b", "Y")])
    assert (perfect.precision, perfect.recall) == (1.0, 1.0)
    merged = pairwise_scores([("a", "X"), ("b", "X")])
    assert merged.precision == 0.0 and merged.recall is None


def test_mentions_assigned_within_their_document_only() -> None:
    gold = {"d1": [("p1", "Sam"), ("p2", "Samir Patel")],
            "d2": [("p1", "Sam"), ("p3", "Sam")]}
    kw = [("d1", "Sam", "G1"), ("d1", "Samir Patel's", "G2"), ("d2", "Sam", "G1"),
          ("d3", "Sam", "G9")]
    assert assign_mentions(kw, gold) == [("p1", "G1"), ("p2", "G2")]


def test_form_pairs_alias_kept_and_confusables_merged() -> None:
    owners = {"sam patel": "G1", "sam": "G1", "samir patel": "G2", "dan": None}
    pairs = [("Sam Patel", "Sam", True), ("Dan", "Dani", True),
             ("Sam", "Samir Patel", False), ("Sam Patel", "sam", False)]
    assert form_pair_scores(pairs, owners) == (0.5, 0.5)


def test_judge_local_cited_and_citation_precision() -> None:
    j = judge("local", ["Sam Patel"], [], [], "cited", ["d1", "d2"],
              "The lead is Samir Patel.", [("d1", "Sam Patel leads it")], False)
    assert (j.answered, j.in_answer, j.citation_precision) == (True, False, 1.0)
    j = judge("local", ["Sam Patel"], [], [], "cited", ["d1"], "Sam Patel.",
              [("d1", "x"), ("d3", "y"), ("d1", "z")], False)
    assert j.citation_precision == 0.5


def test_judge_aggregation_global_temporal_unanswerable() -> None:
    agg = judge("aggregation", ["3", "three"], [], [], "answer", ["d1"],
                "There are 13 people", [("d1", "3 people")], False)
    assert not agg.answered
    glob = judge("global", [], [["Payments Team"], ["Search Team"], ["Ads Team"]], [],
                 "cited", ["d1"], "Payments Team and Ads Team", [], False)
    assert glob.answered and glob.coverage == 0.6667
    temporal = judge("temporal", ["Ann Lee"], [], ["Bob Ray"], "cited", ["d1"],
                     "Ann Lee, then Bob Ray", [("d1", "")], False)
    assert temporal.answered and temporal.temporal_strict is False
    assert judge("unanswerable", [], [], [], "cited", [], "I could not find support", [],
                 True).answered
    assert not judge("unanswerable", [], [], [], "cited", [], "Berlin", [("d1", "")],
                     False).answered
