"""Side-by-side baseline figures of bench.quality on hand-made cases computed by hand."""

from __future__ import annotations

from bench.baselines.classic_linkage import classify_pairs, cluster_forms
from bench.baselines.graspologic_leiden import knotwork_partition
from bench.baselines.side_by_side import team_of_graph
from bench.quality import answered_ratios
from bench.quality_metrics import (
    baseline_ratio,
    baseline_ratios,
    forms_together,
    pair_classification_scores,
    pairwise_scores,
    together_rates,
)
from knotwork.communities.projection import ProjectedGraph, from_edge_list

# three pairs of one person, one pair of two different people
PAIRS = [("Ana Diaz", "Ana D.", True), ("Ana Diaz", "adiaz", True), ("Ana D.", "adiaz", True),
         ("Ana Diaz", "Ana Chen", False)]


def test_ratio_of_two_figures() -> None:
    assert baseline_ratio(0.9, 0.6) == 1.5
    assert baseline_ratio(0.5, 0.0) is None  # nothing to divide by
    assert baseline_ratio(None, 0.5) is None
    assert baseline_ratio(0.5, None) is None
    assert baseline_ratio(1.0, 3.0, digits=3) == 0.333
    assert baseline_ratios({"f1": 0.8, "p": 0.9, "only_ours": 1.0},
                           {"f1": 0.4, "p": 0.3, "only_theirs": 1.0}) == {"f1": 2.0, "p": 3.0}


def test_pair_classification_precision_recall() -> None:
    # linked: first same pair only -> TP 1 of 1 linked (P 1.0), of 3 same pairs (R 1/3)
    s = pair_classification_scores(PAIRS, [True, False, False, False])
    assert (s.precision, s.recall, s.f1, s.mentions) == (1.0, 0.3333, 0.5, 4)
    # everything linked: TP 3 of 4 linked, of 3 same
    s = pair_classification_scores(PAIRS, [True] * 4)
    assert (s.precision, s.recall, s.f1) == (0.75, 1.0, 0.8571)
    assert together_rates(PAIRS, [True, True, False, True]) == (0.6667, 1.0)
    assert pair_classification_scores(PAIRS, [False] * 4).precision is None


def test_forms_together_from_graph_owners() -> None:
    # "ana d" is carried by two graph entities (None): not together with anything
    owners = {"ana diaz": "G1", "adiaz": "G1", "ana d": None, "ana chen": "G2"}
    assert forms_together(PAIRS, owners) == [False, True, False, False]


def test_answered_ratios_per_category_and_overall() -> None:
    kw = {"local": {"n": 2, "answered": 1.0}, "temporal": {"n": 2, "answered": 0.5}}
    rag = {"local": {"n": 2, "answered": 0.5}, "temporal": {"n": 2, "answered": 0.0}}
    # overall: Knotwork (2 + 1) / 4 = 0.75, RAG (1 + 0) / 4 = 0.25
    assert answered_ratios(kw, rag) == {"local": 2.0, "temporal": None, "all": 3.0}  # type: ignore[arg-type]


def test_classic_linkage_on_pairs() -> None:
    # Jaro-Winkler by hand: "ana diaz"/"ana dias" 0.95, "diaz"/"dias" 0.883 (m=3, prefix 3),
    # "ana diaz"/"ana chen" 0.8, "diaz"/"chen" 0: the typo agrees on all three fields, the
    # other Ana only on the given name (1 of 3)
    pairs = [("Ana Diaz", "ana diaz"), ("Ana Diaz", "Ana Dias"), ("Ana Diaz", "Ana Chen"),
             ("Ana Diaz", "Bo Chen")]
    assert classify_pairs(pairs) == [True, True, False, False]
    assert classify_pairs([]) == []


def test_classic_linkage_clusters_and_mention_pairs() -> None:
    clusters = cluster_forms(["Ana Diaz", "ana diaz", "Ana Dias", "Ana Chen", "Bo Chen", ""])
    assert set(clusters) == {"ana diaz", "ana dias", "ana chen", "bo chen"}
    assert clusters["ana diaz"] == clusters["ana dias"]
    assert len({clusters["ana diaz"], clusters["ana chen"], clusters["bo chen"]}) == 3
    # mentions: p1 x3 (two forms), p2 x2 (its typo form is linked to p1's cluster)
    mentions = [("p1", "ana diaz"), ("p1", "ana diaz"), ("p1", "ana dias"),
                ("p2", "ana chen"), ("p2", "ana dias")]
    s = pairwise_scores([(g, str(clusters[t])) for g, t in mentions])
    # predicted cluster of 4 -> 6 pairs, of which p1-p1 3 true; gold pairs 3 + 1 = 4
    assert (s.precision, s.recall) == (0.5, 0.75)


def two_triangles() -> ProjectedGraph:
    """a-b-c and d-e-f, one bridge c-d: 7 edges of weight 1."""
    return from_edge_list([("a", "b", 1.0), ("b", "c", 1.0), ("a", "c", 1.0), ("d", "e", 1.0),
                           ("e", "f", 1.0), ("d", "f", 1.0), ("c", "d", 1.0)])


def test_leiden_partition_scored_against_teams() -> None:
    graph = two_triangles()
    assert [w for _, _, w in graph.edges] == [1.0] * 7
    team_of = team_of_graph({"teams": [{"id": "T1", "members": ["pa", "pb", "pc"]},
                                       {"id": "T2", "members": ["pd", "pe", "pf"]}]},
                            {f"p{n}": {n} for n in "abcdef"} | {"px": {"a", "b"}})
    assert team_of == {n: ("T1" if n in "abc" else "T2") for n in "abcdef"}
    part = knotwork_partition(graph, resolution=1.0, max_size=10, seed=1, team_of=team_of)
    # Q = 2 * (3/7 - (7/14)^2) = 0.3571 for the two triangles
    assert part.leaves == 2 and part.modularity == 0.3571
    assert (part.team_nmi, part.team_precision, part.team_recall, part.team_f1) == (
        1.0, 1.0, 1.0, 1.0)


def test_markdown_summary_of_a_report() -> None:
    from bench.quality_markdown import markdown

    graph = {"entity_precision": 0.9, "entity_recall": 0.8, "resolution_f1": 0.95}
    report = {
        "world_summary": {"people": 2, "entities": 5, "relations": 4, "documents": 3, "seed": 1},
        "questions": 4, "run_s": 10.0, "ingest_s": 6.0, "chunks": 3, "query_s": 2.0,
        "graph": graph,
        "knotwork": {"local": {"n": 2, "answered": 1.0}, "temporal": {"n": 2, "answered": 0.5}},
        "baseline": {"local": {"n": 2, "answered": 0.5}, "temporal": {"n": 2, "answered": 0.0}},
        "baseline_ratio": {"local": 2.0, "temporal": None, "all": 3.0},
        "community_baseline": {"knotwork": {"modularity": 0.6, "seconds": 0.004},
                               "graspologic": {"modularity": 0.5, "seconds": 0.02},
                               "ratio": {"modularity": 1.2, "seconds": 0.2}},
    }
    text = markdown(report).splitlines()
    assert "| entity precision / recall | 0.90 / 0.80 |" in text
    assert "| local | 2 | 1.00 | 0.50 | 2.00 |" in text
    assert "| temporal | 2 | 0.50 | 0.00 | - |" in text
    assert "| all | 4 |  |  | 3.00 |" in text
    assert "| leaf modularity (graspologic) | 0.60 | 0.50 | 1.20 |" in text
    assert "| leaf seconds (graspologic) | 0.004 | 0.02 | 0.20 |" in text
